"""Each namespace's BM25 index over memory text and entity keys: in RAM, kept in step with every write, and saved
beside the store once large."""

from __future__ import annotations

import logging
import math
import threading
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from memory_daemon.core.logs import log_event
from memory_daemon.retrieval import lexical_files
from memory_daemon.retrieval.ann_index import IndexFiles, UnusableIndex, fingerprint_of, pair_hash, refuse_if_far_behind
from memory_daemon.retrieval.id_positions import IdPositions
from memory_daemon.retrieval.lexical_files import SavedPostings
from memory_daemon.retrieval.namespace_slots import NamespaceSlots
from memory_daemon.retrieval.postings import DOC, Postings
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
    digest: str = ""  # of the stored fields the text and keys come from (what a saved index is checked against)


class _NamespaceIndex:
    """Documents up to `base_size` are in flat arrays (loaded from a save, or merged at the last one); those added
    since are in Python lists until the next save merges them. A document's number is its position in `ids`."""

    def __init__(self, saved: SavedPostings | None = None) -> None:
        self.lock = threading.Lock()  # this namespace's contents; a save holds it only to snapshot and swap
        self.saving = threading.Lock()  # one save of this namespace at a time
        saved = saved or SavedPostings(Postings.empty(True), Postings.empty(False), Postings.empty(False),
                                       np.zeros(0, dtype=np.float32), [], np.zeros(0, dtype=np.uint64))
        self.ids: list[str] = list(saved.ids)  # "" at a document dropped since it was indexed
        self.positions = IdPositions(self.ids)  # changes self.ids: appends and drops go through it
        self._use_base(saved)
        self.postings: dict[str, tuple[list[int], list[int]]] = {}  # term -> (docs, term frequencies), since base
        self.identifiers: dict[str, list[int]] = {}
        self.by_entity: dict[str, list[int]] = {}
        self.added_entity_keys: list[tuple[str, ...]] = []  # of each document after base_size
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # base + added postings of a term, as numpy
        self.lengths = np.zeros(max(64, 2 * len(self.ids)), dtype=np.float32)
        self.lengths[: len(self.ids)] = saved.lengths
        # pair_hash(id, digest) of each document: what a save keeps to be checked against the store
        self.hashes = np.zeros(len(self.lengths), dtype=np.uint64)
        self.hashes[: len(self.ids)] = saved.hashes
        self.total_length = float(saved.lengths.sum())
        self.dead = np.zeros(len(self.lengths), dtype=bool)
        for i, memory_id in enumerate(self.ids):
            if not memory_id:
                self.dead[i] = True
        self.dropped = int(self.dead.sum())
        self.unsaved = 0  # documents added or dropped since the last save

    def _use_base(self, saved: SavedPostings) -> None:
        self.base_size = len(saved.lengths)
        self.base_terms, self.base_identifiers, self.base_entities = saved.terms, saved.identifiers, saved.entities
        self.base_entity_offsets, self.base_entity_keys = saved.entities.by_document(self.base_size)

    @property
    def size(self) -> int:
        return len(self.ids)

    def add(self, memory: IndexedMemory) -> None:
        if memory.id in self.positions:
            return  # a write that raced the namespace's load, which had already read the row from the store
        doc = self.positions.append(memory.id)
        self.added_entity_keys.append(memory.entity_keys)
        counts = Counter(terms(memory.text))
        for term, count in counts.items():
            docs, tfs = self.postings.setdefault(term, ([], []))
            docs.append(doc)
            tfs.append(count)
        for token in identifiers(memory.text):
            self.identifiers.setdefault(token, []).append(doc)
        for key in dict.fromkeys(memory.entity_keys):
            self.by_entity.setdefault(key, []).append(doc)
        if doc == len(self.lengths):  # grow by doubling, so adds stay amortised O(1)
            self.lengths = np.concatenate([self.lengths, np.zeros(len(self.lengths), dtype=np.float32)])
            self.dead = np.concatenate([self.dead, np.zeros(len(self.dead), dtype=bool)])
            self.hashes = np.concatenate([self.hashes, np.zeros(len(self.hashes), dtype=np.uint64)])
        self.hashes[doc] = pair_hash(memory.id, memory.digest)
        length = sum(counts.values())
        self.lengths[doc] = length
        self.total_length += length
        self.unsaved += 1

    def drop(self, memory_ids: Iterable[str]) -> None:
        """Take memories out of search (forgotten, or edited and about to be added again with their new text):
        their documents stay in the postings, never scored, until a rebuild."""
        for memory_id in memory_ids:
            doc = self.positions.pop(memory_id)
            if doc is not None:
                self.dead[doc] = True
                self.dropped += 1
                self.unsaved += 1

    def _posting_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        lists = self.postings.get(term)
        if not lists:
            docs = self.base_terms.docs_of(term)
            return (docs, self.base_terms.values_of(term)) if len(docs) else None
        cached = self._arrays.get(term)
        base_docs = self.base_terms.docs_of(term)
        if cached is None or len(cached[0]) != len(base_docs) + len(lists[0]):
            cached = self._arrays[term] = (
                np.concatenate([base_docs, np.asarray(lists[0], dtype=DOC)]),
                np.concatenate([self.base_terms.values_of(term), np.asarray(lists[1], dtype=np.float32)]))
        return cached

    def document_frequency(self, term: str) -> int:
        lists = self.postings.get(term)
        return self.base_terms.count(term) + (len(lists[0]) if lists else 0)

    def identifier_docs(self, token: str) -> np.ndarray:
        added = self.identifiers.get(token)
        base = self.base_identifiers.docs_of(token)
        return np.concatenate([base, np.asarray(added, dtype=DOC)]) if added else base

    def entity_docs(self, key: str) -> list[int]:
        """The live documents mentioning the entity key."""
        docs = [*self.base_entities.docs_of(key).tolist(), *self.by_entity.get(key, ())]
        return [doc for doc in docs if not self.dead[doc]]

    def entity_count(self, key: str) -> int:
        return self.base_entities.count(key) + len(self.by_entity.get(key, ()))

    def knows_entity(self, key: str) -> bool:
        return key in self.by_entity or key in self.base_entities.index

    def entity_keys_of(self, doc: int) -> tuple[str, ...]:
        if doc >= self.base_size:
            return self.added_entity_keys[doc - self.base_size]
        numbers = self.base_entity_keys[self.base_entity_offsets[doc]: self.base_entity_offsets[doc + 1]]
        return tuple(self.base_entities.keys[n] for n in numbers)

    def snapshot(self) -> tuple[dict, dict, dict, np.ndarray, list[str], np.ndarray, int]:
        """What a save merges, copied under the lock so that writes go on while it is merged and written."""
        return ({t: (list(d), list(f)) for t, (d, f) in self.postings.items()},
                {k: list(v) for k, v in self.identifiers.items()}, {k: list(v) for k, v in self.by_entity.items()},
                self.lengths[: self.size].copy(), list(self.ids), self.hashes[: self.size].copy(), self.unsaved)

    def merged(self, snapshot) -> SavedPostings:
        """The snapshot's documents as flat arrays (no lock needed: the base is never changed in place)."""
        added_terms, added_identifiers, added_entities, lengths, ids, hashes, _unsaved = snapshot
        return SavedPostings(
            self.base_terms.merged({t: d for t, (d, _f) in added_terms.items()},
                                   {t: f for t, (_d, f) in added_terms.items()}),
            self.base_identifiers.merged(added_identifiers), self.base_entities.merged(added_entities),
            lengths, ids, hashes)

    def use_merged(self, saved: SavedPostings, unsaved_then: int) -> None:
        """After a save (caller holds the lock): the merged arrays become the base, and the lists keep only the
        documents added while it was written."""
        size = len(saved.ids)
        self._use_base(saved)
        self.postings = {t: (d[i:], f[i:]) for t, (d, f) in self.postings.items()
                         if (i := bisect_left(d, size)) < len(d)}
        self.identifiers = {k: v[i:] for k, v in self.identifiers.items() if (i := bisect_left(v, size)) < len(v)}
        self.by_entity = {k: v[i:] for k, v in self.by_entity.items() if (i := bisect_left(v, size)) < len(v)}
        self.added_entity_keys = self.added_entity_keys[len(self.added_entity_keys) - (self.size - size):]
        self._arrays.clear()
        self.unsaved -= unsaved_then

    def bm25(self, query: str, limit: int) -> list[tuple[str, float]]:
        """Vectorised BM25: each query term adds its contribution to a dense score array in one numpy step.

        Terms in more than COMMON_SHARE of the memories (at least COMMON_MIN_DOCS) only re-rank the best
        candidates the rarer terms found, like Lucene's cutoff-frequency query: at a million memories a word in
        every other one would otherwise cost more than the rest of the search."""
        n = self.size
        if n == 0:
            return []
        lengths, average = self.lengths[:n], max(self.total_length / n, 1.0)

        def norm(docs: np.ndarray) -> np.ndarray:  # of the documents scored only: a whole array costs 1 ms at 1M
            return K1 * (1 - B + B * lengths[docs] / average)

        postings = [arrays for term in dict.fromkeys(query_terms(query))
                    if (arrays := self._posting_arrays(term)) is not None]
        cutoff = max(COMMON_MIN_DOCS, COMMON_SHARE * n)
        rare = [p for p in postings if len(p[0]) <= cutoff]
        common = [p for p in postings if len(p[0]) > cutoff] if rare else []
        scores = np.zeros(n, dtype=np.float32)
        for docs, tfs in rare or postings:
            scores[docs] += _idf(n, len(docs)) * tfs * (K1 + 1) / (tfs + norm(docs))  # docs are unique within a term
        boosted = [docs for token in identifiers(query) if len(docs := self.identifier_docs(token))]
        for docs in boosted:
            scores[docs] *= IDENTIFIER_BOOST
        if self.dropped:
            scores[self.dead[:n]] = 0.0
        found = np.flatnonzero(scores > 0)  # through a bool array: on floats it is ten times slower (5 ms at 1M)
        if len(found) == 0:
            return []
        pool = max(limit * CANDIDATES_PER_HIT, MIN_CANDIDATES)
        candidates = found if len(found) <= pool else found[np.argpartition(-scores[found], pool - 1)[:pool]]
        if common:
            boost = np.ones(len(candidates), dtype=np.float32)
            for docs in boosted:
                boost[_found_in(docs, candidates)[1]] *= IDENTIFIER_BOOST
            for docs, tfs in common:
                at, present = _found_in(docs, candidates)
                hit_docs, hit_tfs = candidates[present], tfs[at[present]]
                scores[hit_docs] += (_idf(n, len(docs)) * hit_tfs * (K1 + 1) / (hit_tfs + norm(hit_docs))
                                     * boost[present])
        candidate_scores = scores[candidates]
        count = min(limit, len(candidates))
        top = np.argpartition(-candidate_scores, count - 1)[:count]
        top = candidates[top[np.argsort(-candidate_scores[top], kind="stable")]]
        return [(self.ids[doc], float(scores[doc])) for doc in top]


    def query_weight(self, query: str) -> float:
        """What a document matching every query term once, at average length, would score: a BM25 score divided by
        it is the share of the query's weight matched, comparable between indexes with different statistics."""
        n = self.size
        return sum(_idf(n, self.document_frequency(term)) for term in dict.fromkeys(query_terms(query))) if n else 0.0


def _found_in(docs: np.ndarray, candidates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each candidate would be in `docs` (a posting list: ascending, not empty), and whether it is there; a
    binary search for each (np.isin sorts both, ten times slower here)."""
    at = np.minimum(np.searchsorted(docs, candidates), len(docs) - 1)
    return at, docs[at] == candidates


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


class LexicalSource(Protocol):
    """Where a namespace's index comes from: the store, read whole, or (to check and catch up a saved index) as
    each memory's pair_hash(id, digest) and the memories the save did not have."""

    def all(self, namespace: str) -> Iterable[IndexedMemory]: ...

    def hashes(self, namespace: str) -> dict[str, int]: ...

    def fingerprint(self, namespace: str) -> tuple[int, int]: ...

    def some(self, namespace: str, ids: Sequence[str]) -> Iterable[IndexedMemory]: ...


class LexicalIndex:
    """Loaded per namespace on first use; DuckDB stays the source of truth (its own fts tokenizer drops every
    non-letter, so "3.12" and snake_case parts would never match).

    With `index_root`, a namespace of at least `save_from` memories is saved there (periodically and at stop) and
    the next start loads it and catches it up with the store (memories written, deleted or edited since) instead of
    tokenizing every memory again; a saved index that is damaged, stale or far behind is rebuilt from the store.
    Loading a namespace holds only its own slot (NamespaceSlots), and each namespace's searches and writes take
    only its own lock, so a load or a save in one blocks no other."""

    def __init__(self, source: LexicalSource | Callable[[str], Iterable[IndexedMemory]],
                 index_root: Path | None = None, save_from: int = 5_000,
                 loaded_from_save: Callable[[str], None] | None = None) -> None:
        self._source = source if not callable(source) else _WholeLoads(source)
        self._root = index_root
        self._save_from = save_from
        self._loaded_from_save = loaded_from_save  # told when a namespace came from its save, not the store
        self._namespaces: NamespaceSlots[_NamespaceIndex] = NamespaceSlots(self._built)

    def search(self, namespaces: Sequence[str], query: str, limit: int) -> list[tuple[str, float]]:
        """(memory id, BM25 score) of the best matches across the namespaces, best first."""
        found: list[tuple[str, float]] = []
        for namespace in namespaces:
            index = self._index(namespace)
            with index.lock:
                found += index.bm25(query, limit)
        return sorted(found, key=lambda item: -item[1])[:limit]

    def load_saved(self, namespace: str) -> bool:
        """Load the namespace now if its index was saved (see VectorIndex.load_saved); False when it was not."""
        if self._root is None or not IndexFiles.of(self._root, namespace).lexical_exist():
            return False
        self._index(namespace)
        return True

    def query_weight(self, namespaces: Sequence[str], query: str) -> float:
        """The largest of the namespaces' query weights (see _NamespaceIndex.query_weight)."""
        weights = []
        for namespace in namespaces:
            index = self._index(namespace)
            with index.lock:
                weights.append(index.query_weight(query))
        return max(weights, default=0.0)

    def memories_with_entities(self, namespaces: Sequence[str], keys: Iterable[str],
                               max_memories: int = 0) -> dict[str, set[str]]:
        """Entity key -> ids of the memories that mention it; keys shared by more than max_memories are left out."""
        keys = list(keys)
        found: dict[str, set[str]] = {}
        for namespace in namespaces:
            index = self._index(namespace)
            with index.lock:
                for key in keys:
                    count = index.entity_count(key)
                    if count and (not max_memories or count <= max_memories):
                        docs = index.entity_docs(key)
                        if docs:
                            found.setdefault(key, set()).update(index.ids[d] for d in docs)
        return found

    def entities_of(self, namespaces: Sequence[str], memory_ids: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Memory id -> the entity keys it mentions."""
        memory_ids = list(memory_ids)
        found: dict[str, tuple[str, ...]] = {}
        for namespace in namespaces:
            index = self._index(namespace)
            with index.lock:
                for memory_id, position in zip(memory_ids, index.positions.positions_of(memory_ids)):
                    if position is not None:
                        found[memory_id] = index.entity_keys_of(position)
        return found

    def known_entity_keys(self, namespaces: Sequence[str], keys: Iterable[str]) -> set[str]:
        """Those of the keys that some memory in the namespaces mentions."""
        keys = set(keys)
        known: set[str] = set()
        for namespace in namespaces:
            index = self._index(namespace)
            with index.lock:
                known.update(key for key in keys if index.knows_entity(key))
        return known

    def add(self, namespace: str, memories: Iterable[IndexedMemory]) -> None:
        """Index rows just stored. A namespace not loaded yet is left alone (its first use reads them from the store);
        one being loaded is written once its load is done (the load may have read them already: they count once)."""
        index = self._namespaces.loaded(namespace)
        if index is None:
            return
        with index.lock:
            for memory in memories:
                index.add(memory)

    def drop(self, namespace: str, memory_ids: Iterable[str]) -> None:
        """Memories forgotten, or edited in place (added again with their new text after): out of search now. A
        namespace not loaded is left alone: its next load reads the store (and checks a save against it)."""
        index = self._namespaces.loaded(namespace)
        if index is not None:
            with index.lock:
                index.drop(memory_ids)

    def forget(self, namespace: str) -> None:
        """Drop the namespace's index; the next use loads it again (after a restore wrote behind it: a saved index
        is caught up with the store then, as at a start)."""
        self._namespaces.forget(namespace)

    def rebuild(self, namespace: str) -> None:
        """Throw the namespace's index and its save away (`cortexd reindex`); the next use builds it from the store."""
        self._namespaces.forget(namespace)
        if self._root is not None:
            IndexFiles.of(self._root, namespace).remove_lexical()

    def save_unsaved(self) -> int:
        """Save every namespace of at least save_from memories changed since its last save; how many were saved.
        Writes to a namespace go on while its arrays are merged and written."""
        if self._root is None:
            return 0
        saved = 0
        for namespace, index in self._namespaces.items():
            if not index.saving.acquire(blocking=False):
                continue  # a save of it is running (the periodic one, as the daemon stops)
            try:
                with index.lock:
                    if not index.unsaved or index.size < self._save_from:
                        continue
                    snapshot = index.snapshot()
                merged = index.merged(snapshot)
                try:
                    lexical_files.save(IndexFiles.of(self._root, namespace), namespace, merged)
                except OSError as error:
                    log_event("lexical_index_not_saved", level=logging.WARNING, namespace=namespace, detail=str(error))
                    continue
                with index.lock:
                    index.use_merged(merged, snapshot[-1])
                saved += 1
            finally:
                index.saving.release()
        return saved

    def _index(self, namespace: str) -> _NamespaceIndex:
        return self._namespaces.get(namespace)

    def _built(self, namespace: str) -> _NamespaceIndex:
        if self._root is not None and (files := IndexFiles.of(self._root, namespace)).lexical_exist():
            try:
                index = self._from_saved(namespace, files)
            except UnusableIndex as error:
                log_event("lexical_index_rebuild", level=logging.WARNING, namespace=namespace, detail=str(error))
                files.remove_lexical()
            else:
                if self._loaded_from_save is not None:
                    self._loaded_from_save(namespace)
                return index
        index = _NamespaceIndex()
        for memory in self._source.all(namespace):
            index.add(memory)
        return index

    def _from_saved(self, namespace: str, files: IndexFiles) -> _NamespaceIndex:
        """The saved index caught up with the store: memories deleted or edited since the save are dropped, and
        those written since (or lost by a kill before the save) are added. Never trusted over the store: a save
        whose fingerprint equals the store's holds exactly its memories as they are, and the rest is compared."""
        saved = lexical_files.load(files, namespace)
        if fingerprint_of(saved.hashes, saved.ids) == self._source.fingerprint(namespace):
            return _NamespaceIndex(saved)
        stored = self._source.hashes(namespace)
        stale = [memory_id for memory_id, saved_hash in zip(saved.ids, saved.hashes.tolist())
                 if memory_id and stored.get(memory_id) != saved_hash]
        held = set(saved.ids) - set(stale) - {""}
        missing = [memory_id for memory_id in stored if memory_id not in held]
        refuse_if_far_behind(len(missing), len(stale), len(stored), "memories")
        index = _NamespaceIndex(saved)
        index.drop(stale)
        for memory in self._source.some(namespace, missing):
            index.add(memory)
        return index


class _WholeLoads:
    """A source that can only read a namespace whole (an index that is never saved)."""

    def __init__(self, load: Callable[[str], Iterable[IndexedMemory]]) -> None:
        self.all = load

    def hashes(self, namespace: str) -> dict[str, int]:
        raise NotImplementedError("this index is never saved")

    def fingerprint(self, namespace: str) -> tuple[int, int]:
        raise NotImplementedError("this index is never saved")

    def some(self, namespace: str, ids: Sequence[str]) -> Iterable[IndexedMemory]:
        raise NotImplementedError("this index is never saved")
