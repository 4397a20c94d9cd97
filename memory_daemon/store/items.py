"""SQL for search items: every fact, episode and decision of a namespace, fresh rows by id, and a cheap signature
of their change."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory_daemon.store.database import Database, first_row
from memory_daemon.store.decisions import _COLUMNS as _DECISION, DecisionRepository, DecisionRow, _row as _decision
from memory_daemon.store.graph import _EPISODE, _FACT, EpisodeRow, FactRow, GraphRepository, _episode, _fact

EMBEDDINGS_PER_INSERT = 200  # rows per multi-row INSERT: DuckDB pays per statement

# Facts and episodes are append-only, and a fact's one in-place change (retraction) moves max(retracted_at);
# a decision's access moves max(last_accessed_at) (its decay starts there); its outcome is read fresh with each hit.
_SIGNATURE = (
    "SELECT (SELECT count(*) FROM facts WHERE namespace = $ns), "
    "(SELECT max(retracted_at) FROM facts WHERE namespace = $ns), "
    "(SELECT count(*) FROM episodes WHERE namespace = $ns), "
    "(SELECT count(*) FROM decisions WHERE namespace = $ns), "
    "(SELECT max(last_accessed_at) FROM decisions WHERE namespace = $ns), "
    "(SELECT count(*) FROM entities WHERE namespace = $ns)"
)


class ItemRepository:
    """Reads the facts, episodes and decisions tables for search; every query is parametrised."""

    def __init__(self, database: Database) -> None:
        self._db = database
        self._graph = GraphRepository(database)
        self._decisions = DecisionRepository(database)

    def write_count(self) -> int:
        return self._db.write_count

    def signature(self, namespace: str) -> tuple:
        """Changes whenever a fact, episode, decision or entity of the namespace is added or a fact retracted."""
        return tuple(first_row(self._db.cursor().execute(_SIGNATURE, {"ns": namespace})))

    def facts_in(self, namespace: str) -> list[tuple[FactRow, str, str, str]]:
        """Every fact of the namespace, history included, with its subject's name and key and its object's key."""
        columns = ", ".join(f"f.{c}" for c in _FACT.split(", "))
        rows = self._db.cursor().execute(
            f"SELECT {columns}, s.name, s.key, o.key FROM facts f "
            "LEFT JOIN entities s ON s.id = f.subject_id LEFT JOIN entities o ON o.id = f.object_id "
            "WHERE f.namespace = ?",
            [namespace],
        ).fetchall()
        return [(_fact(r[:-3]), r[-3] or "", r[-2] or "", r[-1] or "") for r in rows]

    def episodes_in(self, namespace: str) -> list[EpisodeRow]:
        rows = self._db.cursor().execute(f"SELECT {_EPISODE} FROM episodes WHERE namespace = ?", [namespace]).fetchall()
        return [_episode(r) for r in rows]

    def decisions_in(self, namespace: str) -> list[DecisionRow]:
        rows = self._db.cursor().execute(f"SELECT {_DECISION} FROM decisions WHERE namespace = ?", [namespace]).fetchall()
        return [_decision(r) for r in rows]

    def entity_keys(self, namespace: str) -> dict[str, str]:
        """Entity id -> key, for the namespace's entities."""
        return dict(self._db.cursor().execute("SELECT id, key FROM entities WHERE namespace = ?", [namespace]).fetchall())

    def rows(self, kind: str, namespaces: Sequence[str], ids: Sequence[str]) -> list:
        """Fresh rows of one kind by id (a fact's status and a decision's counters change after loading)."""
        if not ids:
            return []
        if kind == "fact":
            return self._graph.facts_by_id(namespaces, ids)
        if kind == "episode":
            return self._graph.episodes_by_id(namespaces, ids)
        return self._decisions.by_id(namespaces, ids)

    def embeddings(self, namespace: str) -> dict[str, np.ndarray]:
        """The stored embeddings of the namespace's items (fetchnumpy: one float32 array per row)."""
        columns = self._db.cursor().execute(
            "SELECT id, embedding FROM item_embeddings WHERE namespace = ?", [namespace]).fetchnumpy()
        return {i: np.asarray(v, dtype=np.float32) for i, v in zip(columns["id"], columns["embedding"], strict=True)}

    def save_embeddings(self, namespace: str, vectors: dict[str, np.ndarray]) -> None:
        """Keep new embeddings; an id already stored (another search got there first) is left as it is."""
        items = list(vectors.items())
        with self._db.writing() as cursor:
            for start in range(0, len(items), EMBEDDINGS_PER_INSERT):
                chunk = items[start: start + EMBEDDINGS_PER_INSERT]
                cursor.execute("INSERT OR IGNORE INTO item_embeddings (id, namespace, embedding) VALUES "
                               + ", ".join(["(?, ?, ?)"] * len(chunk)),
                               [value for i, v in chunk for value in (i, namespace, [float(x) for x in v])])
