"""Reference retrievers for external benchmarks: textbook BM25, MiniLM cosine, and their reciprocal rank fusion."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np

_WORD = re.compile(r"\w+")
RRF_K = 60


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


class BM25:
    """Okapi BM25 over lowercase \\w+ tokens, idf log((N - n + 0.5) / (n + 0.5) + 1); no stemming, no stopwords."""

    def __init__(self, documents: Sequence[str], k1: float = 1.2, b: float = 0.75) -> None:
        counts = [Counter(words(d)) for d in documents]
        lengths = np.array([sum(c.values()) for c in counts], dtype=np.float64)
        length_norm = k1 * (1 - b + b * lengths / max(lengths.mean(), 1e-9)) if len(documents) else lengths
        postings: dict[str, list[tuple[int, int]]] = {}
        for doc, count in enumerate(counts):
            for term, tf in count.items():
                postings.setdefault(term, []).append((doc, tf))
        self._size = len(documents)
        self._postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for term, pairs in postings.items():
            docs = np.array([d for d, _ in pairs])
            tfs = np.array([tf for _, tf in pairs], dtype=np.float64)
            idf = math.log((self._size - len(pairs) + 0.5) / (len(pairs) + 0.5) + 1)
            self._postings[term] = (docs, idf * tfs * (k1 + 1) / (tfs + length_norm[docs]))

    def scores(self, query: str) -> np.ndarray:
        """Each document's score; a query word counts as often as it occurs."""
        total = np.zeros(self._size)
        for term in words(query):
            if term in self._postings:
                docs, weights = self._postings[term]
                total[docs] += weights
        return total

    def rank(self, query: str) -> list[int]:
        """Documents sharing a word with the query, best first (ties in document order)."""
        scores = self.scores(query)
        order = np.argsort(-scores, kind="stable")
        return [int(d) for d in order if scores[d] > 0]


def cosine_rank(document_vectors: np.ndarray, query_vector: np.ndarray) -> list[int]:
    """All documents by cosine to the query, best first; the vectors are unit length."""
    return [int(d) for d in np.argsort(-(document_vectors @ query_vector), kind="stable")]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[int]:
    """Documents by the sum of 1 / (k + rank) over the rankings that hold them (rank from 1), best first."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, doc in enumerate(ranking, 1):
            fused[doc] = fused.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(fused, key=lambda doc: -fused[doc])
