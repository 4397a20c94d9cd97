"""search_memory over every kind: memories from the hybrid retriever, and facts, episodes and decisions from the
item index, scored by the same four signals and merged into one ranking."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

import numpy as np

from memory_daemon.core.config import RetrievalSettings
from memory_daemon.core.errors import InvalidArgument
from memory_daemon.retrieval.item_index import ITEM_KINDS, Item, ItemIndex
from memory_daemon.memory.service import MemoryService
from memory_daemon.retrieval.hybrid import (SIGNALS, STALE_FACTOR, Neighbours, SearchQuery, activated_entities, decay,
                                            fuse, spread)
from memory_daemon.store.items import ItemRepository
from memory_daemon.core.timefmt import utc_now
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


def item_temporal_score(item: Item, now: datetime, settings: RetrievalSettings) -> float:
    """The memory decay model applied to an item: a fact's confidence decays from when it was recorded, an episode
    from when it happened, a decision from its last access and is lifted by its access count."""
    age_days = (now - (item.decays_from or item.at)).total_seconds() / 86400
    return item.strength * decay(age_days, settings.half_life_days, settings.decay_model) * (
        1.0 + settings.use_boost * math.log1p(item.uses))


class UnifiedSearch:
    """One ranked list over the kinds asked for, every hit with its per-signal scores."""

    def __init__(self, memories: MemoryService, items: ItemIndex, rows_of: Callable[[str, Sequence[str], Sequence[str]], list],
                 settings: RetrievalSettings,
                 graph_neighbours: Neighbours | None = None) -> None:
        self._memories = memories
        self._items = items
        self._rows_of = rows_of  # (kind, namespaces, ids) -> fresh rows
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
        item_scores, items = self._item_signals(query, item_kinds, tuple(episode_kinds))
        return self._merged(memory_hits, item_scores, items, query)

    # -- items ---------------------------------------------------------------

    def _item_signals(self, query: SearchQuery, kinds: Sequence[str],
                      episode_kinds: Sequence[str]) -> tuple[dict[str, dict[str, float]], dict[str, Item]]:
        """Each signal's scores for the eligible items it finds; facts no longer (or not yet) true only with
        include_history."""
        signals = query.signals or SIGNALS
        self._items.refresh(query.namespaces, kinds)
        now = utc_now()
        items = {item.id: item for item in self._items.items(query.namespaces, kinds, None if query.include_history else now)
                 if self._eligible(item, query)
                 and (not episode_kinds or item.kind != "episode" or item.episode_kind in episode_kinds)}
        if not items:
            return {}, {}
        depth = max(self._settings.candidates, query.limit * 3)
        found: dict[str, dict[str, float]] = {}
        if "lexical" in signals:
            found["lexical"] = {i: s for i, s in self._items.lexical.search(query.namespaces, query.text, 4 * depth) if i in items}
        if "dense" in signals:
            vector = self._memories.embed_query(query.text)
            found["dense"] = {} if vector is None else self._items.nearest(
                query.namespaces, vector, depth, self._settings.min_dense_similarity, items)
        if "graph" in signals:
            found["graph"] = self._graph(query, found, items)
        found = {s: dict(heapq.nlargest(depth, scores.items(), key=lambda x: x[1])) for s, scores in found.items()}
        if "temporal" in signals:
            candidates = {i for scores in found.values() for i in scores}
            found["temporal"] = {i: item_temporal_score(items[i], now, self._settings) for i in candidates}
        return found, items

    @staticmethod
    def _eligible(item: Item, query: SearchQuery) -> bool:
        return ((not query.session_id or item.session_id == query.session_id)
                and (query.since is None or item.at >= query.since)
                and (query.until is None or item.at < query.until)
                and (not query.entity_keys or bool(set(query.entity_keys) & set(item.entity_keys))))

    def _graph(self, query: SearchQuery, found: dict[str, dict[str, float]], items: dict[str, Item]) -> dict[str, float]:
        """Spreading activation, as for memories (one hop): the query's entities, their neighbours over active facts
        and the entities of the best text matches activate the eligible items that mention them."""
        lexical = self._items.lexical
        activation = activated_entities(lexical, query.namespaces, {key: 1.0 for key in salient_keys(query.text)},
                                        found, self._settings.graph_hop_decay, self._graph_neighbours)
        return {i: score for i, score in spread(lexical, query.namespaces, activation).items() if i in items}

    def _rows(self, query: SearchQuery, items: Sequence[Item]) -> dict[str, object]:
        """The returned items' rows as stored now (a fact's status, a decision's outcome and counters)."""
        rows: dict[str, object] = {}
        for kind in ITEM_KINDS:
            for row in self._rows_of(kind, query.namespaces, [i.id for i in items if i.kind == kind]):
                rows[row.id] = row
        return rows

    # -- one ranking ---------------------------------------------------------

    def _merged(self, memory_hits: list[SearchResult], item_scores: dict[str, dict[str, float]], items: dict[str, Item],
                query: SearchQuery) -> list[SearchResult]:
        """Memories keep the order their retriever gave them and items the order of their own weighted RRF; the two
        lists are interleaved by the signals whose scores mean the same in both: cosine, and BM25 as the share of the
        query's weight matched. Graph and decay scores depend on each index's shape, so they order within a list only."""
        now = utc_now()
        item_fused = fuse(item_scores, self._settings.weights(), self._settings.rrf_k)
        for item_id in item_fused:
            if not items[item_id].true_at(now):  # a fact asked for with include_history
                item_fused[item_id] *= STALE_FACTOR
        ranked_items = [SearchResult(items[i].kind, items[i], item_fused[i],
                                     {s: round(v[i], 4) for s, v in item_scores.items() if i in v})
                        for i in sorted(item_fused, key=lambda i: -item_fused[i])]
        memory_weight = self._memories.lexical_query_weight(query) if memory_hits else 0.0
        item_weight = self._items.lexical.query_weight(query.namespaces, query.text)
        merged = _interleaved([(self._comparable(h.signal_scores, memory_weight), h) for h in memory_hits],
                              [(self._comparable(h.signal_scores, item_weight), h) for h in ranked_items], query.limit)
        rows = self._rows(query, [r.row for r in merged if r.kind != "memory"])
        return [r if r.kind == "memory" else replace(r, row=rows[r.row.id])
                for r in merged if r.kind == "memory" or r.row.id in rows]

    def _comparable(self, scores: dict[str, float], lexical_weight: float) -> float:
        """What a hit's signals say on a scale shared by every index: weighted cosine plus weighted share of the
        query's BM25 weight matched (at most all of it)."""
        share = min(scores.get("lexical", 0.0) / lexical_weight, 1.0) if lexical_weight > 0 else 0.0
        return self._settings.dense_weight * scores.get("dense", 0.0) + self._settings.lexical_weight * share


def _interleaved(first: list[tuple[float, SearchResult]], second: list[tuple[float, SearchResult]],
                 limit: int) -> list[SearchResult]:
    """Merge two ranked lists by a shared score without reordering either: each hit's score is capped by the score
    of the hit ranked before it in its own list, and becomes the hit's score."""
    def capped(hits: list[tuple[float, SearchResult]]) -> list[tuple[float, SearchResult]]:
        ceiling, out = math.inf, []
        for score, hit in hits:
            ceiling = min(ceiling, score)
            out.append((ceiling, hit))
        return out

    a, b = capped(first), capped(second)
    merged: list[SearchResult] = []
    i = j = 0
    while len(merged) < limit and (i < len(a) or j < len(b)):
        if j >= len(b) or (i < len(a) and a[i][0] >= b[j][0]):
            score, hit = a[i]
            i += 1
        else:
            score, hit = b[j]
            j += 1
        merged.append(replace(hit, score=score))  # the shared score: comparable down the whole list
    return merged


def unified_search(memories: MemoryService, database, embed: Callable[[list[str]], np.ndarray | None],
                   settings: RetrievalSettings, graph=None) -> UnifiedSearch:
    """The daemon's search: memories plus an item index over the same store."""
    repository = ItemRepository(database)
    return UnifiedSearch(memories, ItemIndex(repository, embed), repository.rows, settings,
                         graph.neighbour_keys if graph is not None else None)
