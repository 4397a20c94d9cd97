"""Coarse-cell (IVF) index over unit embeddings: k-means cells, and a search that scans only the cells nearest a query."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SAMPLE_PER_CELL = 40  # k-means trains on this many vectors per cell, not on the whole matrix
ITERATIONS = 8
ASSIGN_CHUNK = 65_536


def _nearest_cells(vectors: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    cells = np.empty(len(vectors), dtype=np.int64)
    for start in range(0, len(vectors), ASSIGN_CHUNK):
        cells[start: start + ASSIGN_CHUNK] = np.argmax(vectors[start: start + ASSIGN_CHUNK] @ centroids.T, axis=1)
    return cells


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.clip(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12, None)


@dataclass(frozen=True)
class CoarseIndex:
    """The first `size` rows of a matrix, grouped by their nearest centroid (cell); rows added later are scanned
    exactly by the caller until the next build."""

    centroids: np.ndarray  # (cells, dims), unit length
    order: np.ndarray  # row positions grouped by cell
    bounds: np.ndarray  # cell c holds order[bounds[c]:bounds[c + 1]]
    grouped: np.ndarray  # the rows in `order`: a cell's vectors are one contiguous block, read without a gather
    size: int

    @classmethod
    def build(cls, matrix: np.ndarray, seed: int = 0) -> "CoarseIndex":
        """Spherical k-means with about sqrt(n) cells, trained on a sample, then every row assigned to a cell."""
        n = len(matrix)
        cells = max(1, min(n, int(math.sqrt(n))))
        rng = np.random.default_rng(seed)
        sample = matrix[np.sort(rng.choice(n, size=min(n, cells * SAMPLE_PER_CELL), replace=False))]
        centroids = _unit(sample[rng.choice(len(sample), size=cells, replace=False)].astype(np.float32))
        for _ in range(ITERATIONS):
            assigned = _nearest_cells(sample, centroids)
            by_cell = np.argsort(assigned, kind="stable")
            starts = np.searchsorted(assigned[by_cell], np.arange(cells))
            sizes = np.diff(np.append(starts, len(sample)))
            filled = sizes > 0
            sums = np.add.reduceat(sample[by_cell], np.minimum(starts, len(sample) - 1), axis=0)
            # An empty cell restarts at a random sample vector instead of staying where nothing is.
            sums[~filled] = sample[rng.choice(len(sample), size=int((~filled).sum()))]
            centroids = _unit(sums.astype(np.float32))
        assigned = _nearest_cells(matrix, centroids)
        order = np.argsort(assigned, kind="stable")
        bounds = np.searchsorted(assigned[order], np.arange(cells + 1))
        return cls(centroids, order, bounds, matrix[order], n)

    def search(self, vector: np.ndarray, probe_cells: int) -> tuple[np.ndarray, np.ndarray]:
        """(row positions, cosines) of every row in the `probe_cells` cells whose centroids are nearest the vector."""
        probe = min(probe_cells, len(self.centroids))
        nearest = np.argpartition(-(self.centroids @ vector), probe - 1)[:probe]
        spans = [(self.bounds[c], self.bounds[c + 1]) for c in nearest]
        positions = np.concatenate([self.order[a:b] for a, b in spans])
        scores = np.concatenate([self.grouped[a:b] @ vector for a, b in spans])
        return positions, scores
