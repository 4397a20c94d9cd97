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
from memory_daemon.retrieval.ann_index import AnnIndex, IndexFiles, UnusableIndex, refuse_if_far_behind, text_digest
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
    def __init__(self, ids: list[str], texts: list[str], matrix: np.ndarray | None,
                 superseded: dict[str, str] | None = None, graph: AnnIndex | None = None) -> None:
        self.lock = threading.Lock()  # this namespace's searches and writes; a save or catch-up holds only it
        self.ids = ids
        self.texts = texts
        # superseded id -> its successor: still searchable for history, never a dedup candidate
        self.superseded = dict(superseded or {})
        self.size = len(ids)
        self.matrix: np.ndarray | None = None  # exact rows; None once the graph serves the namespace
        if matrix is not None:
            self.matrix = np.zeros((max(64, 2 * len(ids)), DIMENSIONS), dtype=np.float32)
            self.matrix[: len(ids)] = matrix
        self.graph = graph
        # The digest of each row's text once a graph serves the namespace (what a save writes beside each key),
        # kept as rows come and go so a save does not hash every text again; None in exact mode.
        self.digests: list[str] | None = None
        self.position = {memory_id: i for i, memory_id in enumerate(ids)}
        # False at a superseded row: a search for current rows masks them out in one step, whatever their number
        # (it used to fetch limit + every superseded row and filter them in Python, which made a long import
        # quadratic: an import supersedes more rows the further it gets).
        self.current = np.ones(max(64, 2 * len(ids)), dtype=bool)
        for memory_id in self.superseded:
            if memory_id in self.position:
                self.current[self.position[memory_id]] = False
        self.building = False
        self.retired = False  # forgotten (reindex, restore): a build still running for it throws its result away
        self.unsaved = 0

    @property
    def mode(self) -> str:
        return GRAPH if self.graph is not None else BUILDING if self.building else EXACT

    def supersede(self, memory_id: str, successor_id: str) -> None:
        self.superseded[memory_id] = successor_id
        if memory_id in self.position:
            self.current[self.position[memory_id]] = False

    def drop(self, memory_ids: Sequence[str]) -> int:
        """Take rows out of the graph in place (forgotten, or edited and about to be added again); their places in
        the id list stay, blanked. Returns how many were held."""
        positions = [self.position.pop(m) for m in memory_ids if m in self.position]
        self.graph.remove(positions)
        for position in positions:
            self.ids[position] = ""
            self.digests[position] = ""
            self.current[position] = False
        return len(positions)

    def append(self, memory_id: str, text: str, vector: np.ndarray) -> int | None:
        """The new row's position; None for a row already held (a write that raced the namespace's load)."""
        if memory_id in self.position:
            return None
        if self.size == len(self.current):  # grow by doubling, so appends stay amortised O(1)
            self.current = np.concatenate([self.current, np.ones(len(self.current), dtype=bool)])
        if self.matrix is not None:
            if self.size == len(self.matrix):
                grown = np.zeros((2 * len(self.matrix), DIMENSIONS), dtype=np.float32)
                grown[: self.size] = self.matrix[: self.size]
                self.matrix = grown
            self.matrix[self.size] = vector
        self.current[self.size] = memory_id not in self.superseded
        self.position[memory_id] = self.size
        self.ids.append(memory_id)
        self.texts.append(text)
        if self.digests is not None:
            self.digests.append(text_digest(text))
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

    def __init__(self, load_namespace: Callable[[str], tuple[list[str], list[str], np.ndarray, dict[str, str]]],
                 graph_from: int = 100_000, index_root: Path | None = None,
                 load_rows: Callable[[str], tuple[list[str], list[str], dict[str, str]]] | None = None,
                 load_vectors: Callable[[str, Sequence[str]], dict[str, np.ndarray]] | None = None,
                 load_fingerprint: Callable[[str], tuple[int, int]] | None = None) -> None:
        if index_root is not None and (load_rows is None or load_vectors is None or load_fingerprint is None):
            raise ValueError("a saved index needs load_rows, load_vectors and load_fingerprint to be checked "
                             "against the store")
        self._load = load_namespace
        self._load_rows = load_rows
        self._load_vectors = load_vectors
        self._load_fingerprint = load_fingerprint  # of the (id, text) pairs the store would index now
        self._root = index_root
        self._namespaces: NamespaceSlots[_NamespaceVectors] = NamespaceSlots(self._built)
        self._graph_from = graph_from

    def nearest(self, namespace: str, vector: np.ndarray, limit: int, include_superseded: bool = True,
                exclude: Callable[[str], bool] | None = None) -> list[tuple[str, str, float]]:
        """(memory id, text, cosine) of the closest memories, closest first; none for which `exclude` says True
        (asking for more until `limit` others are found)."""
        vectors = self._namespace(namespace)
        vector = np.asarray(vector, dtype=np.float32)
        with vectors.lock:
            count = limit
            while vectors.size and limit > 0:
                if vectors.graph is not None:
                    found = vectors.approximate(vector, count, include_superseded)
                else:
                    found = vectors.exact(vector, count, include_superseded)
                kept = [(vectors.ids[i], vectors.texts[i], s) for i, s in found
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
            held = [m for m in ids if m in vectors.position]
            if vectors.graph is None:
                return {m: vectors.matrix[vectors.position[m]].copy() for m in held}
            rows = vectors.graph.vectors([vectors.position[m] for m in held])
            return {m: row for m, row in zip(held, rows) if row is not None}

    def mark_superseded(self, namespace: str, memory_id: str, successor_id: str) -> None:
        vectors = self._namespaces.loaded(namespace)  # None: not loaded, and its load reads this from the store
        if vectors is not None:
            with vectors.lock:
                vectors.supersede(memory_id, successor_id)

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
                     if (position := vectors.append(memory_id, text, vector)) is not None]
            if vectors.graph is not None:
                if added:
                    vectors.graph.add(np.array([p for p, _v in added]), np.stack([v for _p, v in added]))
                    vectors.unsaved += len(added)
            elif vectors.size >= self._graph_from and not vectors.building:
                self._build_in_background(namespace, vectors)

    def drop(self, namespace: str, memory_ids: Sequence[str]) -> None:
        """Memories forgotten, or edited in place (their new vector is added after): a namespace served by its graph
        loses them in place; a smaller one is dropped whole and reloaded from the store on its next use. One not
        loaded is left alone: its next load reads the store, and checks a saved graph's texts against it."""
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
                               list(vectors.digests), vectors.texts[: len(vectors.ids)])
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
        graph, saved_ids, digests, saved_fingerprint = AnnIndex.load(files, namespace)
        ids, texts, superseded = self._load_rows(namespace)
        text_of = dict(zip(ids, texts, strict=True))
        if saved_fingerprint is not None and saved_fingerprint == self._load_fingerprint(namespace):
            # The catch-up below with nothing stale or missing builds the same, but its set lookups cost about
            # 1.3 s more at 1M rows, as much as the fingerprint saves.
            vectors = _NamespaceVectors(list(saved_ids), [text_of.get(m, "") for m in saved_ids], None, superseded,
                                        graph)
            vectors.position = {m: i for i, m in enumerate(saved_ids) if m}
            vectors.digests = list(digests)
            vectors.current[: len(saved_ids)] &= np.array([bool(m) for m in saved_ids], dtype=bool)
            return vectors
        stale = [i for i, (memory_id, digest) in enumerate(zip(saved_ids, digests, strict=True))
                 if memory_id and (memory_id not in text_of or text_digest(text_of[memory_id]) != digest)]
        held = {m for m in saved_ids if m} - {saved_ids[i] for i in stale}
        missing = [memory_id for memory_id in ids if memory_id not in held]
        refuse_if_far_behind(len(missing), len(stale), len(ids), "rows")
        vectors = _NamespaceVectors(list(saved_ids), [text_of.get(m, "") for m in saved_ids], None, superseded, graph)
        vectors.position = {m: i for i, m in enumerate(saved_ids) if m in held}
        vectors.digests = [digest if memory_id in held else "" for memory_id, digest in zip(saved_ids, digests)]
        for i, memory_id in enumerate(saved_ids):
            if memory_id not in held:
                vectors.ids[i] = ""
                vectors.current[i] = False
        graph.remove(stale)
        if missing:
            stored = self._load_vectors(namespace, missing)
            added = [(vectors.append(m, text_of[m], stored[m]), stored[m]) for m in missing if m in stored]
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
                vectors.digests = [text_digest(text) for text in vectors.texts]
                vectors.unsaved = vectors.size
                if self._root is not None:
                    self._save(namespace, vectors)
            log_event("vector_index_built", namespace=namespace, rows=size)

        threading.Thread(target=build, name="cortexd-vector-graph", daemon=True).start()
