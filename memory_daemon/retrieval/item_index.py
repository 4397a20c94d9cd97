"""Facts, episodes and decisions as search items: each namespace's BM25 terms, embeddings and entity keys in RAM,
rebuilt from the store when its rows changed."""

from __future__ import annotations

import threading
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memory_daemon.retrieval.lexical import IndexedMemory, LexicalIndex
from memory_daemon.store.items import ItemRepository
from memory_daemon.core.timefmt import utc_now
from preprocessing.terms import salient_keys

ITEM_KINDS = ("fact", "episode", "decision")
MAX_EMBEDDED_ITEMS = 20_000  # per namespace; beyond it only the newest are embedded, the rest found by words and graph
EMBED_BATCH = 64


@dataclass(frozen=True)
class Item:
    id: str
    kind: str  # fact, episode or decision
    text: str
    entity_keys: tuple[str, ...]
    at: datetime  # recorded (fact), happened (episode) or decided (decision): what time filters compare
    session_id: str = ""  # decisions only
    episode_kind: str = ""  # episodes only: adr, invariant, bug_root_cause, …
    # Facts only: when it is true, and whether it was retracted (a retraction changes the store's signature, so
    # these stay right until the next reload; only the clock can make a fact true or untrue in between).
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    retracted: bool = False
    # What the decay model starts from: a fact's confidence, 1.0 otherwise; the time decay runs from (recorded,
    # happened, last accessed) and the use count (a decision's accesses).
    strength: float = 1.0
    decays_from: datetime | None = None
    uses: int = 0

    def true_at(self, now: datetime) -> bool:
        """Episodes and decisions always; a fact while it is valid and not retracted."""
        return not self.retracted and (self.valid_from is None or self.valid_from <= now) \
            and (self.valid_to is None or self.valid_to > now)


def _words(predicate: str) -> str:
    return predicate.replace("_", " ")


def _items(repository: ItemRepository, namespace: str) -> list[Item]:
    items = [Item(f.id, "fact", f"{subject or f.subject_id} {_words(f.predicate)} {f.object_value}",
                  tuple(k for k in (subject_key, object_key) if k), f.recorded_at, valid_from=f.valid_from,
                  valid_to=f.valid_to, retracted=f.retracted_at is not None, strength=f.confidence,
                  decays_from=f.recorded_at)
             for f, subject, subject_key, object_key in repository.facts_in(namespace)]
    episodes = repository.episodes_in(namespace)
    if episodes:
        keys = repository.entity_keys(namespace)
        for e in episodes:
            text = " ".join([f"{e.kind.replace('_', ' ')}: {e.title}.", e.body, *e.files])
            linked = [keys[i] for i in e.entity_ids if i in keys]
            items.append(Item(e.id, "episode", text, tuple(dict.fromkeys([*linked, *sorted(salient_keys(text))])),
                              e.occurred_at, episode_kind=e.kind, decays_from=e.occurred_at))
    for d in repository.decisions_in(namespace):
        # The summary usually quotes the question and the reasoning already; each word is counted once.
        text = " ".join([d.summary, *(part for part in (d.question, d.reasoning) if part.lower() not in d.summary.lower())])
        items.append(Item(d.id, "decision", text, tuple(sorted(salient_keys(text))), d.created_at, d.session_id,
                          decays_from=d.last_accessed_at, uses=d.access_count))
    return items


class _Loaded:
    def __init__(self, signature: tuple, items: list[Item], vectors: dict[str, np.ndarray], now: datetime,
                 embedded_kinds: set[str]) -> None:
        self.signature = signature
        self.embedded_kinds = embedded_kinds
        self.items = {item.id: item for item in items}
        # Per kind: every item (for history), and those that are or may become true (facts not retracted and not
        # ended by the load time): a search for what is true now only looks at the latter.
        self.by_kind: dict[str, list[Item]] = {kind: [] for kind in ITEM_KINDS}
        self.live_by_kind: dict[str, list[Item]] = {kind: [] for kind in ITEM_KINDS}
        for item in items:
            self.by_kind[item.kind].append(item)
            if not item.retracted and (item.valid_to is None or item.valid_to > now):
                self.live_by_kind[item.kind].append(item)
        self.embedded_ids = list(vectors)
        self.matrix = np.stack(list(vectors.values())) if vectors else np.zeros((0, 0), dtype=np.float32)


class ItemIndex:
    """Loaded per namespace on first use and reloaded when the store's signature for it changed; embeddings are
    kept by id across reloads (item text never changes), so a reload embeds only what is new."""

    def __init__(self, repository: ItemRepository, embed: Callable[[list[str]], np.ndarray | None]) -> None:
        self._repository = repository
        self._embed = embed
        self._loaded: dict[str, _Loaded] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._read_stored: set[str] = set()  # namespaces whose stored embeddings were read
        self._checked_at: dict[str, int] = {}  # namespace -> the store's write count when its signature last matched
        self._lock = threading.Lock()
        self.lexical = LexicalIndex(self._indexed)

    def _indexed(self, namespace: str) -> list[IndexedMemory]:
        loaded = self._loaded.get(namespace)
        return [IndexedMemory(i.id, i.text, i.entity_keys) for i in loaded.items.values()] if loaded else []

    def refresh(self, namespaces: Sequence[str], kinds: Sequence[str] = ITEM_KINDS) -> None:
        """Bring each namespace up to date with the store: nothing to do when the store saw no write since the last
        check, one cheap query when it did, a reload when that query says these tables changed. Only the kinds
        asked for are embedded (compile_context never pays for embedding facts it does not search)."""
        writes = self._repository.write_count()
        for namespace in namespaces:
            loaded = self._loaded.get(namespace)
            if loaded is not None and self._checked_at.get(namespace) == writes and set(kinds) <= loaded.embedded_kinds:
                continue
            signature = self._repository.signature(namespace)
            with self._lock:
                loaded = self._loaded.get(namespace)
                if loaded is not None and loaded.signature == signature:
                    self._checked_at[namespace] = writes
                    if set(kinds) <= loaded.embedded_kinds:
                        continue
                    items = list(loaded.items.values())
                    reloaded = False
                else:
                    items = _items(self._repository, namespace)
                    reloaded = True
                embedded_kinds = set(kinds) | (loaded.embedded_kinds if loaded is not None and not reloaded else set())
                self._loaded[namespace] = _Loaded(signature, items, self._embedded(namespace, items, embedded_kinds), utc_now(),
                                                  embedded_kinds)
                if reloaded:  # after the swap: a search that rebuilds the BM25 index now reads the new items
                    self.lexical.forget(namespace)
                self._checked_at[namespace] = writes

    def _embedded(self, namespace: str, items: list[Item], kinds: set[str]) -> dict[str, np.ndarray]:
        """Vectors of the newest MAX_EMBEDDED_ITEMS items of these kinds: from RAM, else from the store, else
        embedded now and stored."""
        newest = sorted((i for i in items if i.kind in kinds), key=lambda i: i.at, reverse=True)[:MAX_EMBEDDED_ITEMS]
        missing = [i for i in newest if i.id not in self._vectors]
        if missing and namespace not in self._read_stored:  # once: after that, what is missing is new
            self._read_stored.add(namespace)
            self._vectors.update(self._repository.embeddings(namespace))  # every kind's, as later searches may want them
            missing = [i for i in missing if i.id not in self._vectors]
        fresh: dict[str, np.ndarray] = {}
        for start in range(0, len(missing), EMBED_BATCH):
            batch = missing[start: start + EMBED_BATCH]
            vectors = self._embed([i.text for i in batch])
            if vectors is None:
                break  # no encoder: words and graph still find items
            fresh.update(zip((i.id for i in batch), vectors))
        if fresh:
            self._repository.save_embeddings(namespace, fresh)
            self._vectors.update(fresh)
        return {i.id: self._vectors[i.id] for i in newest if i.id in self._vectors}

    def items(self, namespaces: Sequence[str], kinds: Sequence[str], now: datetime | None) -> list[Item]:
        """The loaded items of these kinds: all of them, or (given `now`) those true at that time."""
        found: list[Item] = []
        for namespace in namespaces:
            loaded = self._loaded.get(namespace)
            if loaded is None:
                continue
            for kind in kinds:
                if now is None:
                    found += loaded.by_kind[kind]
                else:
                    found += [item for item in loaded.live_by_kind[kind] if item.true_at(now)]
        return found

    def nearest(self, namespaces: Sequence[str], vector: np.ndarray, limit: int, min_similarity: float,
                allowed: Container[str]) -> dict[str, float]:
        """Item id -> cosine for the closest `allowed` embedded items at or above min_similarity, per namespace."""
        found: dict[str, float] = {}
        for namespace in namespaces:
            loaded = self._loaded.get(namespace)
            if loaded is None or not loaded.embedded_ids:
                continue
            similarities = loaded.matrix @ vector
            usable = np.fromiter((i in allowed for i in loaded.embedded_ids), dtype=bool, count=len(loaded.embedded_ids))
            candidates = np.flatnonzero(usable & (similarities >= min_similarity))
            if len(candidates) > limit:
                candidates = candidates[np.argpartition(-similarities[candidates], limit - 1)[:limit]]
            found.update((loaded.embedded_ids[p], float(similarities[p])) for p in candidates)
        return found
