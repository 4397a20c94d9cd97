"""Each namespace's memory embeddings held in RAM for exact nearest-neighbour search; DuckDB stays the source of truth."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

DIMENSIONS = 384


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

    def add(self, memory_id: str, text: str, vector: np.ndarray) -> None:
        if self.size == len(self.matrix):  # grow by doubling, so appends stay amortised O(1)
            grown = np.zeros((2 * len(self.matrix), DIMENSIONS), dtype=np.float32)
            grown[: self.size] = self.matrix[: self.size]
            self.matrix = grown
        self.matrix[self.size] = vector
        self.position[memory_id] = self.size
        self.ids.append(memory_id)
        self.texts.append(text)
        self.size += 1


class VectorIndex:
    """Loaded per namespace on first use, then kept in step by every write that goes through the daemon."""

    def __init__(self, load_namespace: Callable[[str], tuple[list[str], list[str], np.ndarray, dict[str, str]]]) -> None:
        self._load = load_namespace
        self._namespaces: dict[str, _NamespaceVectors] = {}
        self._lock = threading.Lock()

    def nearest(self, namespace: str, vector: np.ndarray, limit: int,
                include_superseded: bool = True) -> list[tuple[str, str, float]]:
        """(memory id, text, cosine) of the closest memories, closest first."""
        with self._lock:
            vectors = self._namespace(namespace)
            if vectors.size == 0:
                return []
            scores = vectors.matrix[: vectors.size] @ np.asarray(vector, dtype=np.float32)
            count = min(limit + (0 if include_superseded else len(vectors.superseded)), vectors.size)
            top = np.argpartition(-scores, count - 1)[:count]
            top = top[np.argsort(-scores[top])]
            found = [(vectors.ids[i], vectors.texts[i], float(scores[i])) for i in top
                     if include_superseded or vectors.ids[i] not in vectors.superseded]
            return found[:limit]

    def vectors_of(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored embeddings of those ids that the namespace holds."""
        with self._lock:
            vectors = self._namespace(namespace)
            return {m: vectors.matrix[vectors.position[m]].copy() for m in ids if m in vectors.position}

    def mark_superseded(self, namespace: str, memory_id: str, successor_id: str) -> None:
        with self._lock:
            vectors = self._namespaces.get(namespace)
            if vectors is not None:
                vectors.superseded[memory_id] = successor_id

    def current_version(self, namespace: str, memory_id: str, max_steps: int = 16) -> str:
        """The end of the memory's chain of successors (the memory itself when it is current)."""
        with self._lock:
            superseded = self._namespace(namespace).superseded
            for _ in range(max_steps):
                successor = superseded.get(memory_id)
                if successor is None:
                    break
                memory_id = successor
            return memory_id

    def add(self, namespace: str, items: Sequence[tuple[str, str, np.ndarray]], load: bool = False) -> None:
        """Index stored rows; with load=True, rows not stored yet (the namespace is loaded first without them)."""
        with self._lock:
            if namespace not in self._namespaces:
                if not load:
                    return  # not loaded yet: the first lookup will read these rows from the store
                self._namespace(namespace)
            vectors = self._namespaces[namespace]
            for memory_id, text, vector in items:
                vectors.add(memory_id, text, vector)

    def _namespace(self, namespace: str) -> _NamespaceVectors:
        vectors = self._namespaces.get(namespace)
        if vectors is None:
            vectors = self._namespaces[namespace] = _NamespaceVectors(*self._load(namespace))
        return vectors
