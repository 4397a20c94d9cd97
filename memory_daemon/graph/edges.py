"""The traversable graph held in RAM: each namespace's believed entity-to-entity facts, indexed by both ends."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from datetime import datetime

from memory_daemon.store.graph import FactRow


class _NamespaceEdges:
    def __init__(self, rows: Iterable[FactRow]) -> None:
        self.by_node: dict[str, dict[str, FactRow]] = {}
        for row in rows:
            self.add(row)

    def add(self, row: FactRow) -> None:
        for node in (row.subject_id, row.object_id):
            self.by_node.setdefault(node, {})[row.id] = row

    def remove(self, fact_id: str, row: FactRow | None) -> None:
        if row is None:
            return
        for node in (row.subject_id, row.object_id):
            edges = self.by_node.get(node)
            if edges is not None:
                edges.pop(fact_id, None)


class EdgeIndex:
    """Loaded per namespace on first traversal, then kept in step by every fact write of the daemon.

    DuckDB answers a point lookup in about a millisecond; a 2-hop walk touches dozens of nodes, so the walk
    runs here and DuckDB stays the source of truth. Facts that have ended by load time are left out; facts
    that end later are filtered by time at each walk.
    """

    def __init__(self, load_namespace: Callable[[str], list[FactRow]],
                 holding_writes: Callable[[], AbstractContextManager]) -> None:
        self._load = load_namespace
        self._holding_writes = holding_writes
        self._namespaces: dict[str, _NamespaceEdges] = {}
        self._rows: dict[str, FactRow] = {}
        self._lock = threading.Lock()

    def neighbours(self, namespaces: Iterable[str], node: str, at: datetime) -> list[FactRow]:
        """Facts linking the node to another entity that are true at `at` (half-open valid time)."""
        found = []
        for namespace in namespaces:
            edges = self._edges(namespace)
            with self._lock:
                found += [r for r in edges.by_node.get(node, {}).values()
                          if r.valid_from <= at and (r.valid_to is None or r.valid_to > at)]
        return found

    def apply(self, namespace: str, retracted: Iterable[str], inserted: Iterable[FactRow]) -> None:
        """Record a committed write; a namespace not loaded yet will read it from the store when it is."""
        with self._lock:
            edges = self._namespaces.get(namespace)
            if edges is None:
                return
            for fact_id in retracted:
                edges.remove(fact_id, self._rows.pop(fact_id, None))
            for row in inserted:
                if row.object_id is not None:
                    edges.add(row)
                    self._rows[row.id] = row

    def forget(self, namespace: str) -> None:
        """Drop the namespace's edges; the next walk reloads them from the store (after a restore wrote behind it)."""
        with self._lock:
            if self._namespaces.pop(namespace, None) is not None:
                self._rows = {fact_id: row for fact_id, row in self._rows.items() if row.namespace != namespace}

    def _edges(self, namespace: str) -> _NamespaceEdges:
        with self._lock:
            edges = self._namespaces.get(namespace)
        if edges is not None:
            return edges
        # Writes apply here while holding the store's write lock; loading and installing under it too
        # means no write falls between the load and the install.
        with self._holding_writes():
            with self._lock:
                if namespace in self._namespaces:
                    return self._namespaces[namespace]
            rows = self._load(namespace)
            with self._lock:
                self._namespaces[namespace] = _NamespaceEdges(rows)
                self._rows.update((r.id, r) for r in rows)
                return self._namespaces[namespace]
