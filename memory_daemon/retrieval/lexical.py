"""Each namespace's BM25 index over memory text and entity keys, held in RAM and kept in step with every write."""

from __future__ import annotations

import math
import threading

import numpy as np
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from memory_daemon.retrieval.namespace_slots import NamespaceSlots
from preprocessing.terms import identifiers, query_terms, terms

K1 = 1.2
B = 0.75
IDENTIFIER_BOOST = 1.5  # a memory containing the query's exact identifier ("auth_service", "3.12") scores this much more
COMMON_SHARE = 0.1  # a query term in more than this share of a namespace's memories is a common term
COMMON_MIN_DOCS = 5_000
CANDIDATES_PER_HIT = 20  # common terms re-rank this many of the rarer terms' best matches per requested hit
MIN_CANDIDATES = 1_000


@dataclass(frozen=True)
class IndexedMemory:
    id: str
    text: str
    entity_keys: tuple[str, ...]


class _NamespaceIndex:
    def __init__(self) -> None:
        self.postings: dict[str, tuple[list[int], list[int]]] = {}  # term -> (docs, term frequencies)
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # the same as numpy, rebuilt when a list grew
        self.identifiers: dict[str, set[int]] = {}
        self.by_entity: dict[str, set[int]] = {}
        self.ids: list[str] = []
        self.positions: dict[str, int] = {}
        self.entity_keys: list[tuple[str, ...]] = []
        self.lengths: list[int] = []
        self._length_array = np.zeros(0, dtype=np.float32)
        self.total_length = 0

    def add(self, memory: IndexedMemory) -> None:
        if memory.id in self.positions:
            return  # a write that raced the namespace's load, which had already read the row from the store
        doc = len(self.ids)
        self.ids.append(memory.id)
        self.positions[memory.id] = doc
        self.entity_keys.append(memory.entity_keys)
        counts = Counter(terms(memory.text))
        for term, count in counts.items():
            docs, tfs = self.postings.setdefault(term, ([], []))
            docs.append(doc)
            tfs.append(count)
        for token in identifiers(memory.text):
            self.identifiers.setdefault(token, set()).add(doc)
        for key in memory.entity_keys:
            self.by_entity.setdefault(key, set()).add(doc)
        length = sum(counts.values())
        self.lengths.append(length)
        self.total_length += length

    def _posting_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        lists = self.postings.get(term)
        if not lists:
            return None
        cached = self._arrays.get(term)
        if cached is None or len(cached[0]) != len(lists[0]):
            cached = self._arrays[term] = (np.asarray(lists[0], dtype=np.int64), np.asarray(lists[1], dtype=np.float32))
        return cached

    def bm25(self, query: str, limit: int) -> list[tuple[str, float]]:
        """Vectorised BM25: each query term adds its contribution to a dense score array in one numpy step.

        Terms in more than COMMON_SHARE of the memories (at least COMMON_MIN_DOCS) only re-rank the best
        candidates the rarer terms found, like Lucene's cutoff-frequency query: at a million memories a word in
        every other one would otherwise cost more than the rest of the search."""
        n = len(self.ids)
        if n == 0:
            return []
        if len(self._length_array) != n:
            self._length_array = np.asarray(self.lengths, dtype=np.float32)
        norm = K1 * (1 - B + B * self._length_array / max(self.total_length / n, 1.0))
        postings = [arrays for term in dict.fromkeys(query_terms(query))
                    if (arrays := self._posting_arrays(term)) is not None]
        cutoff = max(COMMON_MIN_DOCS, COMMON_SHARE * n)
        rare = [p for p in postings if len(p[0]) <= cutoff]
        common = [p for p in postings if len(p[0]) > cutoff] if rare else []
        scores = np.zeros(n, dtype=np.float32)
        for docs, tfs in rare or postings:
            scores[docs] += _idf(n, len(docs)) * tfs * (K1 + 1) / (tfs + norm[docs])  # docs are unique within a term
        boosted = [np.fromiter(docs, dtype=np.int64, count=len(docs))
                   for token in identifiers(query) if (docs := self.identifiers.get(token))]
        for docs in boosted:
            scores[docs] *= IDENTIFIER_BOOST
        found = np.flatnonzero(scores)
        if len(found) == 0:
            return []
        pool = max(limit * CANDIDATES_PER_HIT, MIN_CANDIDATES)
        candidates = found if len(found) <= pool else found[np.argpartition(-scores[found], pool - 1)[:pool]]
        if common:
            boost = np.ones(len(candidates), dtype=np.float32)
            for docs in boosted:
                boost[np.isin(candidates, docs)] *= IDENTIFIER_BOOST
            for docs, tfs in common:  # posting lists are in ascending doc order: look the candidates up
                at = np.minimum(np.searchsorted(docs, candidates), len(docs) - 1)
                present = docs[at] == candidates
                hit_docs, hit_tfs = candidates[present], tfs[at[present]]
                scores[hit_docs] += (_idf(n, len(docs)) * hit_tfs * (K1 + 1) / (hit_tfs + norm[hit_docs])
                                     * boost[present])
        candidate_scores = scores[candidates]
        count = min(limit, len(candidates))
        top = np.argpartition(-candidate_scores, count - 1)[:count]
        top = candidates[top[np.argsort(-candidate_scores[top], kind="stable")]]
        return [(self.ids[doc], float(scores[doc])) for doc in top]


    def query_weight(self, query: str) -> float:
        """What a document matching every query term once, at average length, would score: a BM25 score divided by
        it is the share of the query's weight matched, comparable between indexes with different statistics."""
        n = len(self.ids)
        return sum(_idf(n, len(self.postings.get(term, ((),))[0])) for term in dict.fromkeys(query_terms(query))) if n else 0.0


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


class LexicalIndex:
    """Loaded per namespace on first use; DuckDB stays the source of truth (its own fts tokenizer drops every
    non-letter, so "3.12" and snake_case parts would never match).

    Loading a namespace (seconds at a million memories) holds only that namespace's slot (NamespaceSlots), so
    searches and writes in other namespaces go on meanwhile; the shared lock guards the indexes' contents."""

    def __init__(self, load_namespace: Callable[[str], Iterable[IndexedMemory]]) -> None:
        self._load = load_namespace
        self._namespaces: NamespaceSlots[_NamespaceIndex] = NamespaceSlots(self._built)
        self._lock = threading.Lock()  # guards every index's contents

    def search(self, namespaces: Sequence[str], query: str, limit: int) -> list[tuple[str, float]]:
        """(memory id, BM25 score) of the best matches across the namespaces, best first."""
        found: list[tuple[str, float]] = []
        for namespace in namespaces:
            index = self._index(namespace)
            with self._lock:
                found += index.bm25(query, limit)
        return sorted(found, key=lambda item: -item[1])[:limit]

    def query_weight(self, namespaces: Sequence[str], query: str) -> float:
        """The largest of the namespaces' query weights (see _NamespaceIndex.query_weight)."""
        weights = []
        for namespace in namespaces:
            index = self._index(namespace)
            with self._lock:
                weights.append(index.query_weight(query))
        return max(weights, default=0.0)

    def memories_with_entities(self, namespaces: Sequence[str], keys: Iterable[str],
                               max_memories: int = 0) -> dict[str, set[str]]:
        """Entity key -> ids of the memories that mention it; keys shared by more than max_memories are left out."""
        keys = list(keys)
        found: dict[str, set[str]] = {}
        for namespace in namespaces:
            index = self._index(namespace)
            with self._lock:
                for key in keys:
                    docs = index.by_entity.get(key)
                    if docs and (not max_memories or len(docs) <= max_memories):
                        found.setdefault(key, set()).update(index.ids[d] for d in docs)
        return found

    def entities_of(self, namespaces: Sequence[str], memory_ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Memory id -> the entity keys it mentions."""
        memory_ids = list(memory_ids)
        found: dict[str, tuple[str, ...]] = {}
        for namespace in namespaces:
            index = self._index(namespace)
            with self._lock:
                for memory_id in memory_ids:
                    position = index.positions.get(memory_id)
                    if position is not None:
                        found[memory_id] = index.entity_keys[position]
        return found

    def known_entity_keys(self, namespaces: Sequence[str]) -> set[str]:
        keys: set[str] = set()
        for namespace in namespaces:
            index = self._index(namespace)
            with self._lock:
                keys.update(index.by_entity)
        return keys

    def add(self, namespace: str, memories: Iterable[IndexedMemory]) -> None:
        """Index rows just stored. A namespace not loaded yet is left alone (its first use reads them from the store);
        one being loaded is written once its load is done (the load may have read them already: they count once)."""
        index = self._namespaces.loaded(namespace)
        if index is None:
            return
        with self._lock:
            for memory in memories:
                index.add(memory)

    def forget(self, namespace: str) -> None:
        """Drop the namespace's index; the next use reloads it from the store (after a restore wrote behind it)."""
        self._namespaces.forget(namespace)

    def _index(self, namespace: str) -> _NamespaceIndex:
        return self._namespaces.get(namespace)

    def _built(self, namespace: str) -> _NamespaceIndex:
        index = _NamespaceIndex()
        for memory in self._load(namespace):
            index.add(memory)
        return index
