"""Facts, episodes and decisions as search items: each namespace's BM25 terms, embeddings and entity keys in RAM,
rebuilt from the store when its rows changed."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memory_daemon.lexical import IndexedMemory, LexicalIndex
from memory_daemon.store.items import ItemRepository
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


def _words(predicate: str) -> str:
    return predicate.replace("_", " ")


def _items(repository: ItemRepository, namespace: str) -> list[Item]:
    items = [Item(f.id, "fact", f"{subject or f.subject_id} {_words(f.predicate)} {f.object_value}",
                  tuple(k for k in (subject_key, object_key) if k), f.recorded_at)
             for f, subject, subject_key, object_key in repository.facts_in(namespace)]
    episodes = repository.episodes_in(namespace)
    if episodes:
        keys = repository.entity_keys(namespace)
        for e in episodes:
            text = " ".join([f"{e.kind.replace('_', ' ')}: {e.title}.", e.body, *e.files])
            linked = [keys[i] for i in e.entity_ids if i in keys]
            items.append(Item(e.id, "episode", text, tuple(dict.fromkeys([*linked, *sorted(salient_keys(text))])),
                              e.occurred_at, episode_kind=e.kind))
    for d in repository.decisions_in(namespace):
        # The summary usually quotes the question and the reasoning already; each word is counted once.
        text = " ".join([d.summary, *(part for part in (d.question, d.reasoning) if part.lower() not in d.summary.lower())])
        items.append(Item(d.id, "decision", text, tuple(sorted(salient_keys(text))), d.created_at, d.session_id))
    return items


class _Loaded:
    def __init__(self, signature: tuple, items: list[Item], vectors: dict[str, np.ndarray]) -> None:
        self.signature = signature
        self.items = {item.id: item for item in items}
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
        self._lock = threading.Lock()
        self.lexical = LexicalIndex(self._indexed)

    def _indexed(self, namespace: str) -> list[IndexedMemory]:
        loaded = self._loaded.get(namespace)
        return [IndexedMemory(i.id, i.text, i.entity_keys) for i in loaded.items.values()] if loaded else []

    def refresh(self, namespaces: Sequence[str]) -> None:
        """Bring each namespace up to date with the store (one cheap query when nothing changed)."""
        for namespace in namespaces:
            signature = self._repository.signature(namespace)
            with self._lock:
                loaded = self._loaded.get(namespace)
                if loaded is not None and loaded.signature == signature:
                    continue
                items = _items(self._repository, namespace)
                newest = sorted(items, key=lambda i: i.at, reverse=True)[:MAX_EMBEDDED_ITEMS]
                missing = [i for i in newest if i.id not in self._vectors]
                for start in range(0, len(missing), EMBED_BATCH):
                    batch = missing[start: start + EMBED_BATCH]
                    vectors = self._embed([i.text for i in batch])
                    if vectors is None:
                        break  # no encoder: words and graph still find items
                    self._vectors.update(zip((i.id for i in batch), vectors))
                vectors = {i.id: self._vectors[i.id] for i in newest if i.id in self._vectors}
                self._loaded[namespace] = _Loaded(signature, items, vectors)
                self.lexical.forget(namespace)

    def items(self, namespaces: Sequence[str]) -> dict[str, Item]:
        found: dict[str, Item] = {}
        for namespace in namespaces:
            loaded = self._loaded.get(namespace)
            if loaded is not None:
                found.update(loaded.items)
        return found

    def nearest(self, namespaces: Sequence[str], vector: np.ndarray, limit: int, min_similarity: float) -> dict[str, float]:
        """Item id -> cosine for the closest embedded items at or above min_similarity."""
        found: dict[str, float] = {}
        for namespace in namespaces:
            loaded = self._loaded.get(namespace)
            if loaded is None or not loaded.embedded_ids:
                continue
            similarities = loaded.matrix @ vector
            count = min(limit, len(similarities))
            for position in np.argpartition(-similarities, count - 1)[:count]:
                if similarities[position] >= min_similarity:
                    found[loaded.embedded_ids[position]] = float(similarities[position])
        return found
