"""Each namespace's memory embeddings held in RAM for nearest-neighbour search; DuckDB stays the source of truth."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from memory_daemon.retrieval.coarse_index import CoarseIndex
from memory_daemon.retrieval.namespace_slots import NamespaceSlots

DIMENSIONS = 384
REBUILD_GROWTH = 0.25  # the coarse index is rebuilt once rows added since its build reach this share of it


class _NamespaceVectors:
    def __init__(self, ids: list[str], texts: list[str], matrix: np.ndarray,
                 superseded: dict[str, str] | None = None) -> None:
        self.ids = ids
        self.texts = texts
        # superseded id -> its successor: still searchable for history, never a dedup candidate
        self.superseded = dict(superseded or {})
        self.matrix = np.zeros((max(64, 2 * len(ids)), DIMENSIONS), dtype=np.float32)
        self.matrix[: len(ids)] = matrix
        self.size = len(ids)
        self.position = {memory_id: i for i, memory_id in enumerate(ids)}
        # False at a superseded row: a search for current rows masks them out in one step, whatever their number
        # (it used to fetch limit + every superseded row and filter them in Python, which made a long import
        # quadratic: an import supersedes more rows the further it gets).
        self.current = np.ones(len(self.matrix), dtype=bool)
        for memory_id in self.superseded:
            if memory_id in self.position:
                self.current[self.position[memory_id]] = False
        self.coarse: CoarseIndex | None = None  # set by a background build once the namespace is large
        self.building = False

    def supersede(self, memory_id: str, successor_id: str) -> None:
        self.superseded[memory_id] = successor_id
        if memory_id in self.position:
            self.current[self.position[memory_id]] = False

    def add(self, memory_id: str, text: str, vector: np.ndarray) -> None:
        if memory_id in self.position:
            return  # a write that raced the namespace's load, which had already read the row from the store
        if self.size == len(self.matrix):  # grow by doubling, so appends stay amortised O(1)
            grown = np.zeros((2 * len(self.matrix), DIMENSIONS), dtype=np.float32)
            grown[: self.size] = self.matrix[: self.size]
            self.matrix = grown
            self.current = np.concatenate([self.current, np.ones(len(grown) - len(self.current), dtype=bool)])
        self.matrix[self.size] = vector
        self.current[self.size] = memory_id not in self.superseded
        self.position[memory_id] = self.size
        self.ids.append(memory_id)
        self.texts.append(text)
        self.size += 1


class VectorIndex:
    """Loaded per namespace on first use, then kept in step by every write that goes through the daemon.

    Search is exact (one matrix-vector product) until a namespace holds `coarse_from` memories; from then on a
    coarse-cell index (built when the namespace loads, rebuilt in the background as it grows) limits each search
    to the `probe_cells` cells nearest the query plus the rows added since the build. Exact costs ~24 ms at 100k
    and ~170 ms at a million; see `cortexd bench retrieval` for the coarse figures and their recall.

    Loading a namespace (and building its first coarse index) holds only that namespace's slot (NamespaceSlots), so
    other namespaces keep answering meanwhile; the shared lock guards each short read or write of the vectors."""

    def __init__(self, load_namespace: Callable[[str], tuple[list[str], list[str], np.ndarray, dict[str, str]]],
                 coarse_from: int = 200_000, probe_cells: int = 32) -> None:
        self._load = load_namespace
        self._namespaces: NamespaceSlots[_NamespaceVectors] = NamespaceSlots(self._built)
        self._lock = threading.Lock()
        self._coarse_from = coarse_from
        self._probe_cells = probe_cells

    def nearest(self, namespace: str, vector: np.ndarray, limit: int,
                include_superseded: bool = True) -> list[tuple[str, str, float]]:
        """(memory id, text, cosine) of the closest memories, closest first."""
        vectors = self._namespace(namespace)
        with self._lock:
            if vectors.size == 0:
                return []
            vector = np.asarray(vector, dtype=np.float32)
            coarse = vectors.coarse
            if coarse is None:
                positions = None
                scores = vectors.matrix[: vectors.size] @ vector
            else:
                positions, scores = coarse.search(vector, self._probe_cells)
                if vectors.size > coarse.size:  # rows added since the build are scanned exactly
                    positions = np.concatenate([positions, np.arange(coarse.size, vectors.size)])
                    scores = np.concatenate([scores, vectors.matrix[coarse.size: vectors.size] @ vector])
            if not include_superseded:
                keep = vectors.current[: vectors.size] if positions is None else vectors.current[positions]
                scores = np.where(keep, scores, -np.inf)
                allowed = int(keep.sum())
            else:
                allowed = len(scores)
            count = min(limit, allowed)
            if count == 0:
                return []
            top = np.argpartition(-scores, count - 1)[:count]
            top = top[np.argsort(-scores[top])]
            rows = top if positions is None else positions[top]
            return [(vectors.ids[i], vectors.texts[i], float(s)) for i, s in zip(rows, scores[top])]

    def coarse_ready(self, namespace: str) -> bool:
        """Whether searches in the namespace go through its coarse-cell index."""
        vectors = self._namespace(namespace)
        with self._lock:
            return vectors.coarse is not None

    def vectors_of(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored embeddings of those ids that the namespace holds."""
        vectors = self._namespace(namespace)
        with self._lock:
            return {m: vectors.matrix[vectors.position[m]].copy() for m in ids if m in vectors.position}

    def mark_superseded(self, namespace: str, memory_id: str, successor_id: str) -> None:
        vectors = self._namespaces.loaded(namespace)  # None: not loaded, and its load reads this from the store
        if vectors is not None:
            with self._lock:
                vectors.supersede(memory_id, successor_id)

    def current_version(self, namespace: str, memory_id: str, max_steps: int = 16) -> str:
        """The end of the memory's chain of successors (the memory itself when it is current)."""
        vectors = self._namespace(namespace)
        with self._lock:
            superseded = vectors.superseded
            for _ in range(max_steps):
                successor = superseded.get(memory_id)
                if successor is None:
                    break
                memory_id = successor
            return memory_id

    def add(self, namespace: str, items: Sequence[tuple[str, str, np.ndarray]], load: bool = False) -> None:
        """Index stored rows; with load=True, rows not stored yet (the namespace is loaded first without them).

        A namespace not loaded yet is left alone (its first use reads the rows from the store); one being loaded is
        written once its load is done (the load may have read them already: they count once)."""
        vectors = self._namespace(namespace) if load else self._namespaces.loaded(namespace)
        if vectors is None:
            return
        with self._lock:
            for memory_id, text, vector in items:
                vectors.add(memory_id, text, vector)
            self._maybe_build(vectors)

    def forget(self, namespace: str) -> None:
        """Drop the namespace's vectors; the next use reloads them from the store (after a restore wrote behind it)."""
        self._namespaces.forget(namespace)

    def _namespace(self, namespace: str) -> _NamespaceVectors:
        """The namespace's vectors, loaded on first use under its own lock only (call without the shared lock)."""
        return self._namespaces.get(namespace)

    def _built(self, namespace: str) -> _NamespaceVectors:
        vectors = _NamespaceVectors(*self._load(namespace))
        if vectors.size >= self._coarse_from:  # built with the load, so the first search is already fast
            vectors.coarse = CoarseIndex.build(vectors.matrix[: vectors.size])
        return vectors

    def _maybe_build(self, vectors: _NamespaceVectors) -> None:
        """Rebuild in the background once the rows added since the last build outgrow it (or build the first index
        when writes take a namespace past the threshold); searches stay exact for those rows meanwhile."""
        if vectors.building or vectors.size < self._coarse_from:
            return
        if vectors.coarse is not None and vectors.size - vectors.coarse.size < REBUILD_GROWTH * vectors.coarse.size:
            return
        vectors.building = True
        snapshot = vectors.matrix[: vectors.size]  # appends past it, or a grown matrix, leave these rows as they are

        def build() -> None:
            try:
                built = CoarseIndex.build(snapshot)
            finally:
                with self._lock:
                    vectors.building = False
            with self._lock:
                vectors.coarse = built

        threading.Thread(target=build, name="cortexd-coarse-index", daemon=True).start()
