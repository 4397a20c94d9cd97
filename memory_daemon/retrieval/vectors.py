"""Each namespace's memory embeddings for nearest-neighbour search: exact in RAM while small, an HNSW graph saved
beside the store once large; DuckDB stays the source of truth."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memory_daemon.core.logs import log_event
from memory_daemon.retrieval.ann_index import (AnnIndex, IndexFiles, UnusableIndex, fingerprint_of, pair_hash,
                                               refuse_if_far_behind)
from memory_daemon.retrieval.id_positions import IdPositions
from memory_daemon.retrieval.namespace_slots import NamespaceSlots

DIMENSIONS = 384
EXACT, GRAPH, BUILDING = "exact", "graph", "building"


@dataclass(frozen=True)
class IndexState:
    """How one loaded namespace's dense search runs now, for `cortexd status`."""

    namespace: str
    mode: str  # EXACT (small), GRAPH (HNSW), or BUILDING (exact while its graph is built in the background)
    rows: int
    unsaved: int  # rows added or removed since the graph was last saved


class _NamespaceVectors:
    """One namespace's rows by position ("" at a row dropped from the graph, which keeps its place): id, the
    pair_hash() of the (id, text) its vector was embedded from, and whether it is current. No text is kept here:
    callers read it from the row cache."""

    def __init__(self, ids: list[str], hashes: np.ndarray, matrix: np.ndarray | None,
                 superseded: dict[str, str] | None = None, graph: AnnIndex | None = None) -> None:
        self.lock = threading.Lock()  # this namespace's searches and writes; a save or catch-up holds only it
        self.position = IdPositions(ids)
        self.ids = ids  # the same list: changed through self.position only
        capacity = max(64, 2 * len(ids))
        # What a save writes beside each key, kept as rows come and go so a save hashes no text.
        self.hashes = np.zeros(capacity, dtype=np.uint64)
        self.hashes[: len(ids)] = hashes
        # superseded id -> its successor: still searchable for history, never a dedup candidate
        self.superseded = dict(superseded or {})
        self.predecessors: dict[str, list[str]] = {}  # the same links the other way: successor -> superseded ids
        for old, successor in self.superseded.items():
            self.predecessors.setdefault(successor, []).append(old)
        self.size = len(ids)
        self.matrix: np.ndarray | None = None  # exact rows; None once the graph serves the namespace
        if matrix is not None:
            self.matrix = np.zeros((capacity, DIMENSIONS), dtype=np.float32)
            self.matrix[: len(ids)] = matrix
        self.graph = graph
        # False at a superseded or dropped row: a search for current rows masks them out in one step, whatever their
        # number (it used to fetch limit + every superseded row and filter them in Python, which made a long import
        # quadratic: an import supersedes more rows the further it gets).
        self.current = np.ones(capacity, dtype=bool)
        if len(self.position) < len(ids):
            self.current[: len(ids)] = [bool(m) for m in ids]
        for position in self.position.positions_of(self.superseded):
            if position is not None:
                self.current[position] = False
        self.building = False
        self.retired = False  # forgotten (reindex, restore): a build still running for it throws its result away
        self.unsaved = 0

    @property
    def mode(self) -> str:
        return GRAPH if self.graph is not None else BUILDING if self.building else EXACT

    def supersede(self, memory_id: str, successor_id: str) -> None:
        before = self.superseded.get(memory_id)
        if before is not None and memory_id in self.predecessors.get(before, ()):
            self.predecessors[before].remove(memory_id)
        self.superseded[memory_id] = successor_id
        self.predecessors.setdefault(successor_id, []).append(memory_id)
        position = self.position.get(memory_id)
        if position is not None:
            self.current[position] = False

    def drop(self, memory_ids: Sequence[str]) -> int:
        """Take rows out of the graph in place (forgotten, or edited and about to be added again); their places in
        the id list stay, blanked. Returns how many were held."""
        positions = [p for m in memory_ids if (p := self.position.pop(m)) is not None]
        self.graph.remove(positions)
        for position in positions:
            self.hashes[position] = 0
            self.current[position] = False
        return len(positions)

    def append(self, memory_id: str, row_hash: int, vector: np.ndarray) -> int | None:
        """The new row's position; None for a row already held (a write that raced the namespace's load)."""
        if memory_id in self.position:
            return None
        if self.size == len(self.current):  # grow by doubling, so appends stay amortised O(1)
            self.current = np.concatenate([self.current, np.ones(len(self.current), dtype=bool)])
            self.hashes = np.concatenate([self.hashes, np.zeros(len(self.hashes), dtype=np.uint64)])
        if self.matrix is not None:
            if self.size == len(self.matrix):
                grown = np.zeros((2 * len(self.matrix), DIMENSIONS), dtype=np.float32)
                grown[: self.size] = self.matrix[: self.size]
                self.matrix = grown
            self.matrix[self.size] = vector
        self.current[self.size] = memory_id not in self.superseded
        self.position.append(memory_id)
        self.hashes[self.size] = row_hash
        self.size += 1
        return self.size - 1

    def exact(self, vector: np.ndarray, limit: int, include_superseded: bool) -> list[tuple[int, float]]:
        scores = self.matrix[: self.size] @ vector
        if not include_superseded:
            scores = np.where(self.current[: self.size], scores, -np.inf)
            allowed = int(self.current[: self.size].sum())
        else:
            allowed = self.size
        count = min(limit, allowed)
        if count <= 0:
            return []
        top = np.argpartition(-scores, count - 1)[:count]
        top = top[np.argsort(-scores[top])]
        return [(int(i), float(scores[i])) for i in top]

    def approximate(self, vector: np.ndarray, limit: int, include_superseded: bool) -> list[tuple[int, float]]:
        """The graph's nearest; without superseded rows, asks for more until `limit` current rows are found."""
        count = limit
        while True:
            positions, scores = self.graph.search(vector, count)
            found = [(int(p), float(s)) for p, s in zip(positions, scores)
                     if include_superseded or self.current[p]]
            if len(found) >= limit or count >= len(self.graph):
                return found[:limit]
            count *= 4


class VectorIndex:
    """Loaded per namespace on first use, then kept in step by every write that goes through the daemon.

    Search is exact (one matrix-vector product) while a namespace holds fewer than `graph_from` memories. From
    there an HNSW graph (usearch, f16) serves it: built in the background with exact search meanwhile, then saved
    under `index_root` and updated by every write. At the next start the saved graph is loaded and caught up with
    the store (rows written or deleted since the save) instead of being rebuilt; one that is missing, unreadable or
    far behind is rebuilt in the background. Loading a namespace holds only that namespace's slot
    (NamespaceSlots), and each namespace's searches and writes take only its own lock."""

    def __init__(self, load_namespace: Callable[[str], tuple[list[str], np.ndarray, np.ndarray, dict[str, str]]],
                 graph_from: int = 100_000, index_root: Path | None = None,
                 load_rows: Callable[[str], tuple[list[str], np.ndarray, dict[str, str]]] | None = None,
                 load_vectors: Callable[[str, Sequence[str]], dict[str, np.ndarray]] | None = None,
                 load_fingerprint: Callable[[str], tuple[int, int]] | None = None,
                 load_superseded: Callable[[str], dict[str, str]] | None = None) -> None:
        if index_root is not None and None in (load_rows, load_vectors, load_fingerprint, load_superseded):
            raise ValueError("a saved index needs load_rows, load_vectors, load_fingerprint and load_superseded to be "
                             "checked against the store")
        # Each read gives rows by id with the pair_hash() of (id, text) in place of the text, oldest first.
        self._load = load_namespace  # ids, hashes, embeddings, superseded id -> successor
        self._load_rows = load_rows  # the same without the embeddings
        self._load_vectors = load_vectors
        self._load_fingerprint = load_fingerprint  # of the (id, text) pairs the store would index now
        self._load_superseded = load_superseded
        self._root = index_root
        self._namespaces: NamespaceSlots[_NamespaceVectors] = NamespaceSlots(self._built)
        self._graph_from = graph_from

    def nearest(self, namespace: str, vector: np.ndarray, limit: int, include_superseded: bool = True,
                exclude: Callable[[str], bool] | None = None) -> list[tuple[str, float]]:
        """(memory id, cosine) of the closest memories, closest first; none for which `exclude` says True (asking
        for more until `limit` others are found)."""
        vectors = self._namespace(namespace)
        vector = np.asarray(vector, dtype=np.float32)
        with vectors.lock:
            count = limit
            while vectors.size and limit > 0:
                if vectors.graph is not None:
                    found = vectors.approximate(vector, count, include_superseded)
                else:
                    found = vectors.exact(vector, count, include_superseded)
                kept = [(vectors.ids[i], s) for i, s in found
                        if exclude is None or not exclude(vectors.ids[i])]
                if len(kept) >= limit or len(found) < count:
                    return kept[:limit]
                count *= 4
            return []

    def load_saved(self, namespace: str) -> bool:
        """Load the namespace now if a graph was saved for it (a restarted daemon starts on these at once, so its
        first search finds them loaded or loading); False when none was."""
        if self._root is None or not IndexFiles.of(self._root, namespace).exist():
            return False
        self._namespace(namespace)
        return True

    def graph_ready(self, namespace: str) -> bool:
        """Whether searches in the namespace go through its HNSW graph."""
        vectors = self._namespace(namespace)
        with vectors.lock:
            return vectors.graph is not None

    def vectors_of(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored embeddings of those ids that the namespace holds (the graph's f16 copy once it has one)."""
        vectors = self._namespace(namespace)
        with vectors.lock:
            held = [(m, p) for m, p in zip(ids, vectors.position.positions_of(ids)) if p is not None]
            if vectors.graph is None:
                return {m: vectors.matrix[p].copy() for m, p in held}
            rows = vectors.graph.vectors([p for _m, p in held])
            return {m: row for (m, _p), row in zip(held, rows) if row is not None}

    def mark_superseded(self, namespace: str, memory_id: str, successor_id: str) -> None:
        vectors = self._namespaces.loaded(namespace)  # None: not loaded, and its load reads this from the store
        if vectors is not None:
            with vectors.lock:
                vectors.supersede(memory_id, successor_id)

    def earlier_versions(self, namespace: str, memory_id: str) -> list[str]:
        """The memories this one superseded directly."""
        vectors = self._namespace(namespace)
        with vectors.lock:
            return list(vectors.predecessors.get(memory_id, ()))

    def current_version(self, namespace: str, memory_id: str, max_steps: int = 16) -> str:
        """The end of the memory's chain of successors (the memory itself when it is current)."""
        vectors = self._namespace(namespace)
        with vectors.lock:
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
        with vectors.lock:
            added = [(position, vector) for memory_id, text, vector in items
                     if (position := vectors.append(memory_id, pair_hash(memory_id, text), vector)) is not None]
            if vectors.graph is not None:
                if added:
                    vectors.graph.add(np.array([p for p, _v in added]), np.stack([v for _p, v in added]))
                    vectors.unsaved += len(added)
            elif vectors.size >= self._graph_from and not vectors.building:
                self._build_in_background(namespace, vectors)

    def drop(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Memories forgotten, or edited in place (their new vector is added after): a namespace served by its graph
        loses them in place; a smaller one is dropped whole and reloaded from the store on its next use. One not
        loaded is left alone: its next load reads the store, and checks a saved graph's rows against it."""
        vectors = self._namespaces.loaded(namespace)
        if vectors is None:
            return
        with vectors.lock:
            if vectors.graph is not None:
                vectors.unsaved += vectors.drop(memory_ids)
                return
        self.forget(namespace)

    def forget(self, namespace: str) -> None:
        """Drop the namespace's vectors; the next use reloads them from the store (after a restore wrote behind it)."""
        vectors = self._namespaces.loaded(namespace)
        if vectors is not None:
            vectors.retired = True
        self._namespaces.forget(namespace)

    def rebuild(self, namespace: str) -> str:
        """Throw the namespace's saved graph away and load it again from the store (`cortexd reindex`); a large one
        is rebuilt in the background, searched exactly meanwhile. Returns the mode it serves in now."""
        self.forget(namespace)
        if self._root is not None:
            IndexFiles.of(self._root, namespace).remove()
        vectors = self._namespace(namespace)
        with vectors.lock:
            return vectors.mode

    def states(self) -> list[IndexState]:
        """Each loaded namespace's search mode, by name."""
        result = []
        for namespace, vectors in sorted(self._namespaces.items()):
            with vectors.lock:
                result.append(IndexState(namespace, vectors.mode, vectors.size, vectors.unsaved))
        return result

    def save_unsaved(self) -> int:
        """Save every graph changed since its last save (a periodic thread and the daemon's stop call this);
        returns how many were saved. A namespace is blocked only while its own graph is written."""
        if self._root is None:
            return 0
        saved = 0
        for namespace, vectors in self._namespaces.items():
            with vectors.lock:
                if vectors.graph is None or not vectors.unsaved or vectors.retired:
                    continue
                if self._save(namespace, vectors):
                    saved += 1
        return saved

    def _save(self, namespace: str, vectors: _NamespaceVectors) -> bool:
        """Write the graph (caller holds vectors.lock); a failure is logged and retried at the next save."""
        try:
            vectors.graph.save(IndexFiles.of(self._root, namespace), namespace, list(vectors.ids),
                               vectors.hashes[: vectors.size].copy())
        except OSError as error:
            log_event("vector_index_not_saved", level=logging.WARNING, namespace=namespace, detail=str(error))
            return False
        vectors.unsaved = 0
        return True

    def _namespace(self, namespace: str) -> _NamespaceVectors:
        """The namespace's vectors, loaded on first use under its own slot only."""
        return self._namespaces.get(namespace)

    def _built(self, namespace: str) -> _NamespaceVectors:
        if self._root is not None and (files := IndexFiles.of(self._root, namespace)).exist():
            try:
                return self._from_saved(namespace, files)
            except UnusableIndex as error:
                log_event("vector_index_rebuild", level=logging.WARNING, namespace=namespace, detail=str(error))
                files.remove()
        vectors = _NamespaceVectors(*self._load(namespace))
        if vectors.size >= self._graph_from:
            self._build_in_background(namespace, vectors)
        return vectors

    def _from_saved(self, namespace: str, files: IndexFiles) -> _NamespaceVectors:
        """The saved graph, caught up with the store: rows deleted since the save leave the graph, rows written
        since (or lost by a kill before the save) join it, and rows whose text changed (an edit) are embedded
        again from the store. Never trusted over the store: a save whose fingerprint equals the store's holds
        exactly the rows it would index now, with their texts, and the rest is compared row by row."""
        graph, saved_ids, saved_hashes = AnnIndex.load(files, namespace)
        if fingerprint_of(saved_hashes, saved_ids) == self._load_fingerprint(namespace):
            # Only the superseded rows are read: neither a million ids nor a set lookup for each.
            return _NamespaceVectors(saved_ids, saved_hashes, None, self._load_superseded(namespace), graph)
        ids, hashes, superseded = self._load_rows(namespace)
        hash_of = dict(zip(ids, hashes.tolist(), strict=True))
        stale = [i for i, (memory_id, saved) in enumerate(zip(saved_ids, saved_hashes.tolist(), strict=True))
                 if memory_id and hash_of.get(memory_id) != saved]
        held = {m for m in saved_ids if m} - {saved_ids[i] for i in stale}
        missing = [memory_id for memory_id in ids if memory_id not in held]
        refuse_if_far_behind(len(missing), len(stale), len(ids), "rows")
        for i in stale:
            saved_ids[i] = ""
        saved_hashes[stale] = 0  # as at every other row the save had already dropped
        vectors = _NamespaceVectors(saved_ids, saved_hashes, None, superseded, graph)
        graph.remove(stale)
        if missing:
            stored = self._load_vectors(namespace, missing)
            added = [(vectors.append(m, hash_of[m], stored[m]), stored[m]) for m in missing if m in stored]
            if added:  # a row may have lost its embedding since (a restore without one)
                graph.add(np.array([p for p, _v in added]), np.stack([v for _p, v in added]))
        vectors.unsaved = len(stale) + len(missing)
        return vectors

    def _build_in_background(self, namespace: str, vectors: _NamespaceVectors) -> None:
        """Build the graph from the rows held now (caller holds vectors.lock, or is the load); rows written
        meanwhile join it when it is done. Searches stay exact until then."""
        vectors.building = True
        size, snapshot = vectors.size, vectors.matrix[: vectors.size]  # a grown matrix leaves these rows as they are

        def build() -> None:
            try:
                graph = AnnIndex.build(np.arange(size), snapshot)
            except Exception as error:  # noqa: BLE001 - exact search goes on; the next write past the size retries
                log_event("vector_index_build_failed", level=logging.ERROR, namespace=namespace, detail=str(error))
                with vectors.lock:
                    vectors.building = False
                return
            with vectors.lock:
                vectors.building = False
                if vectors.retired:
                    return
                if vectors.size > size:
                    graph.add(np.arange(size, vectors.size), vectors.matrix[size: vectors.size])
                vectors.graph, vectors.matrix = graph, None
                vectors.unsaved = vectors.size
                if self._root is not None:
                    self._save(namespace, vectors)
            log_event("vector_index_built", namespace=namespace, rows=size)

        threading.Thread(target=build, name="cortexd-vector-graph", daemon=True).start()
