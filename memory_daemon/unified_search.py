"""search_memory over every kind: memories from the hybrid retriever, and facts, episodes and decisions from the
item index, scored by the same four signals and merged into one ranking."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from memory_daemon.config import RetrievalSettings
from memory_daemon.errors import InvalidArgument
from memory_daemon.graph import fact_status
from memory_daemon.item_index import ITEM_KINDS, Item, ItemIndex
from memory_daemon.memories import MemoryService
from memory_daemon.store.graph import EpisodeRow, FactRow
from memory_daemon.store.items import ItemRepository
from memory_daemon.retrieval import FEEDBACK_HITS, MAX_KEY_MEMORIES, SIGNALS, STALE_FACTOR, SearchQuery, decay, fuse
from memory_daemon.timefmt import utc_now
from preprocessing.terms import salient_keys

KINDS = ("memory", *ITEM_KINDS)


@dataclass(frozen=True)
class SearchResult:
    kind: str  # memory, fact, episode or decision
    row: object  # MemoryRow, FactRow, EpisodeRow or DecisionRow
    score: float
    signal_scores: dict[str, float] = field(default_factory=dict)


def checked_kinds(kinds: Iterable[str]) -> tuple[str, ...]:
    """The kinds asked for: memories only when none are named; "all" means every kind."""
    wanted = list(dict.fromkeys(k.strip().lower() for k in kinds if k.strip()))
    if "all" in wanted:
        return KINDS
    unknown = [k for k in wanted if k not in KINDS]
    if unknown:
        raise InvalidArgument(f"kinds: unknown {', '.join(unknown)}; use any of {', '.join(KINDS)} or all")
    return tuple(wanted) or ("memory",)


def item_temporal_score(row, now: datetime, settings: RetrievalSettings) -> float:
    """The memory decay model applied to an item: a fact's confidence decays from when it was recorded, an episode
    from when it happened, a decision from its last access and is lifted by its access count."""
    if isinstance(row, FactRow):
        strength, since, uses = row.confidence, row.recorded_at, 0
    elif isinstance(row, EpisodeRow):
        strength, since, uses = 1.0, row.occurred_at, 0
    else:
        strength, since, uses = 1.0, row.last_accessed_at, row.access_count
    age_days = (now - since).total_seconds() / 86400
    return strength * decay(age_days, settings.half_life_days, settings.decay_model) * (
        1.0 + settings.use_boost * math.log1p(uses))


def _kind_of(row) -> str:
    return "fact" if isinstance(row, FactRow) else "episode" if isinstance(row, EpisodeRow) else "decision"


class UnifiedSearch:
    """One ranked list over the kinds asked for, every hit with its per-signal scores."""

    def __init__(self, memories: MemoryService, items: ItemIndex, rows_of: Callable[[str, Sequence[str], Sequence[str]], list],
                 embed: Callable[[list[str]], np.ndarray | None], settings: RetrievalSettings,
                 graph_neighbours: Callable[[Sequence[str], str], list[tuple[str, float]]] | None = None) -> None:
        self._memories = memories
        self._items = items
        self._rows_of = rows_of  # (kind, namespaces, ids) -> fresh rows
        self._embed = embed
        self._settings = settings
        self._graph_neighbours = graph_neighbours

    def search(self, query: SearchQuery, kinds: Iterable[str] = (), episode_kinds: Sequence[str] = ()) -> list[SearchResult]:
        """The best `query.limit` hits of the kinds asked for (episodes only of `episode_kinds` when given)."""
        kinds = checked_kinds(kinds)
        memory_hits = [SearchResult("memory", h.memory, h.score, h.signal_scores)
                       for h in self._memories.retrieve(query)] if "memory" in kinds else []
        item_kinds = tuple(k for k in kinds if k != "memory")
        if not item_kinds or query.tags:  # only memories carry tags
            return memory_hits
        item_scores, rows = self._item_signals(query, item_kinds, tuple(episode_kinds))
        return self._merged(memory_hits, item_scores, rows, query)

    # -- items ---------------------------------------------------------------

    def _item_signals(self, query: SearchQuery, kinds: Sequence[str],
                      episode_kinds: Sequence[str]) -> tuple[dict[str, dict[str, float]], dict[str, object]]:
        signals = query.signals or SIGNALS
        self._items.refresh(query.namespaces)
        items = {i: item for i, item in self._items.items(query.namespaces).items()
                 if self._eligible(item, query, kinds) and (not episode_kinds or item.kind != "episode"
                                                            or item.episode_kind in episode_kinds)}
        depth = max(self._settings.candidates, query.limit * 3)
        found: dict[str, dict[str, float]] = {}
        if "lexical" in signals:
            found["lexical"] = {i: s for i, s in self._items.lexical.search(query.namespaces, query.text, 4 * depth) if i in items}
        if "dense" in signals:
            vectors = self._embed([query.text])
            found["dense"] = {} if vectors is None else {
                i: s for i, s in self._items.nearest(query.namespaces, vectors[0], 4 * depth,
                                                     self._settings.min_dense_similarity).items() if i in items}
        if "graph" in signals:
            found["graph"] = self._graph(query, found, items)
        found = {s: dict(heapq.nlargest(depth, scores.items(), key=lambda x: x[1])) for s, scores in found.items()}
        candidates = {i for scores in found.values() for i in scores}
        rows = self._fresh_rows(query, candidates, items)
        if "temporal" in signals and rows:
            now = utc_now()
            found["temporal"] = {i: item_temporal_score(r, now, self._settings) for i, r in rows.items()}
        return {s: {i: v for i, v in scores.items() if i in rows} for s, scores in found.items()}, rows

    @staticmethod
    def _eligible(item: Item, query: SearchQuery, kinds: Sequence[str]) -> bool:
        return (item.kind in kinds
                and (not query.session_id or item.session_id == query.session_id)
                and (query.since is None or item.at >= query.since)
                and (query.until is None or item.at < query.until)
                and (not query.entity_keys or bool(set(query.entity_keys) & set(item.entity_keys))))

    def _graph(self, query: SearchQuery, found: dict[str, dict[str, float]], items: dict[str, Item]) -> dict[str, float]:
        """Spreading activation, as for memories: the query's entities, their neighbours over active facts and the
        entities of the best text matches activate the items that mention them."""
        hop_decay = self._settings.graph_hop_decay
        activation = {key: 1.0 for key in salient_keys(query.text)}
        best = list(dict.fromkeys(i for scores in found.values()
                                  for i, _ in heapq.nlargest(FEEDBACK_HITS, scores.items(), key=lambda x: x[1])))
        for rank, item_id in enumerate(best[:FEEDBACK_HITS]):
            for key in items[item_id].entity_keys:
                activation[key] = max(activation.get(key, 0.0), hop_decay * (0.8 ** rank))
        if self._graph_neighbours is not None:
            for key, weight in list(activation.items()):
                for neighbour, strength in self._graph_neighbours(query.namespaces, key):
                    activation[neighbour] = max(activation.get(neighbour, 0.0), weight * hop_decay * strength)
        scores: dict[str, float] = {}
        mentioning = self._items.lexical.memories_with_entities(query.namespaces, activation, MAX_KEY_MEMORIES)
        for key, ids in mentioning.items():
            share = activation[key] / math.sqrt(len(ids))
            for item_id in ids & items.keys():
                scores[item_id] = scores.get(item_id, 0.0) + share
        return scores

    def _fresh_rows(self, query: SearchQuery, candidates: set[str], items: dict[str, Item]) -> dict[str, object]:
        """Candidates' rows as stored now; facts that are no longer true (superseded, ended, retracted, not yet
        valid) only with include_history."""
        rows: dict[str, object] = {}
        now = utc_now()
        for kind in ITEM_KINDS:
            ids = [i for i in candidates if items[i].kind == kind]
            for row in self._rows_of(kind, query.namespaces, ids):
                if kind != "fact" or query.include_history or fact_status(row, now) == "active":
                    rows[row.id] = row
        return rows

    # -- one ranking ---------------------------------------------------------

    def _merged(self, memory_hits: list[SearchResult], item_scores: dict[str, dict[str, float]], rows: dict[str, object],
                query: SearchQuery) -> list[SearchResult]:
        """Both kinds' signal scores in one weighted RRF (BM25 as the share of the query's weight it matched);
        memories keep the order their retriever gave them, items are placed among them by the fused score."""
        pools = [({s: {h.row.id: v for h in memory_hits if (v := h.signal_scores.get(s)) is not None} for s in SIGNALS},
                  self._memories.lexical_query_weight(query) if memory_hits else 0.0),
                 (item_scores, self._items.lexical.query_weight(query.namespaces, query.text))]
        union: dict[str, dict[str, float]] = {}
        for pool, lexical_weight in pools:
            for signal, scores in pool.items():
                # BM25 depends on each index's statistics: compared as the share of the query's weight matched.
                scale = (1.0 / lexical_weight if lexical_weight > 0 else 0.0) if signal == "lexical" else 1.0
                union.setdefault(signal, {}).update({i: v * scale for i, v in scores.items()})
        fused = fuse(union, self._settings.weights(), self._settings.rrf_k)
        now = utc_now()
        for item_id, row in rows.items():
            if isinstance(row, FactRow) and fact_status(row, now) != "active" and item_id in fused:
                fused[item_id] *= STALE_FACTOR
        items = sorted((i for i in rows if i in fused), key=lambda i: -fused[i])
        merged: list[SearchResult] = []
        ceiling = math.inf
        memories = []
        for hit in memory_hits:  # never above the memory ranked before it
            ceiling = min(ceiling, fused.get(hit.row.id, 0.0))
            memories.append((ceiling, hit))
        m = i = 0
        while len(merged) < query.limit and (m < len(memories) or i < len(items)):
            if i >= len(items) or (m < len(memories) and memories[m][0] >= fused[items[i]]):
                score, hit = memories[m]
                merged.append(SearchResult("memory", hit.row, score, hit.signal_scores))
                m += 1
            else:
                item_id = items[i]
                merged.append(SearchResult(_kind_of(rows[item_id]), rows[item_id], fused[item_id],
                                           {s: round(v[item_id], 4) for s, v in item_scores.items() if item_id in v}))
                i += 1
        return merged


def unified_search(memories: MemoryService, database, embed: Callable[[list[str]], np.ndarray | None],
                   settings: RetrievalSettings, graph=None) -> UnifiedSearch:
    """The daemon's search: memories plus an item index over the same store."""
    repository = ItemRepository(database)
    return UnifiedSearch(memories, ItemIndex(repository, embed), repository.rows, embed, settings,
                         graph.neighbour_keys if graph is not None else None)
