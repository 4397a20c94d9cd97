"""Hybrid retrieval: BM25, dense cosine, graph activation and time (recency or a named span), fused by weighted RRF."""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from memory_daemon.core.config import RetrievalSettings
from memory_daemon.core.errors import InvalidArgument
from memory_daemon.retrieval.lexical import LexicalIndex
from memory_daemon.retrieval.row_cache import RowCache
from memory_daemon.retrieval.spare_thread import SpareThread
from memory_daemon.store import MemoryRow
from memory_daemon.store.memories import PARTIAL_UPDATE_KEY
from memory_daemon.core.timefmt import utc_now
from memory_daemon.retrieval.vectors import VectorIndex
from preprocessing.holders import Holders, StatementHolders, asks_only_of_the_user, holders_differ, names_the_user
from preprocessing.terms import asks_about_the_past, salient_keys
from preprocessing.time_window import named_window

SIGNALS = ("lexical", "dense", "graph", "temporal")
# The signals that bring memories in: a memory must match the query's words or its meaning. The graph and temporal
# signals only re-rank those (the graph brings memories in only when it is the one signal asked for).
RETRIEVERS = ("lexical", "dense")
FEEDBACK_HITS = 3
MAX_KEY_MEMORIES = 100  # an entity more memories mention than this is a hub: it carries no activation
STALE_FACTOR = 0.25  # fused score kept by a superseded memory when history is asked for
MAX_SUCCESSION_STEPS = 16  # how far a chain of updates is followed to reach the current version
# A query that names a span of time ("last week", "in March", "two days ago"): the temporal signal ranks the matches
# by how close their time is to that span instead of by recency, with at least this weight.
NAMED_TIME_WEIGHT = 1.0
# A memory that revises part of an older one is placed just above it when the question is as close in meaning to it
# as to the older one, within this cosine: it is then about the part that changed.
PARTIAL_MARGIN = 0.05
PARTIAL_DEPTH = 5  # a partial update and the memory it revises are read by the partial-update reader when one is this high
# The relevance model's probabilities are read within [clip, 1 - clip] (a logit of at most ±2.94): it is not calibrated
# where it is sure, and its int8 activations are scaled per call, so 0.98 against 0.99 says nothing; the fused order
# (words, meaning, a named time span) decides among the hits it is sure of.
RERANK_CLIP = 0.05

# The relevance model's decision in training: a memory read at this probability or more is about the query.
RELEVANT_AT = 0.5
# A search over every signal that brings in fewer than THIN_SEARCH memories has the relevance model read the nearest
# memories under the dense floor ([retrieval] thin_search_depth of them): an answer told in other words than it is
# asked ("Which vehicle is parked in my driveway?" against "Picked up a used Skoda Octavia estate last spring") shares
# no word with the question and often has a cosine under the floor, which keeps look-alikes out of every other search
# (README, Quality, "Session 45, F").
THIN_SEARCH = 3

# (query, texts) -> the probability that each text answers the query, or None when no model can say
Relevance = Callable[[str, Sequence[str]], "list[float] | None"]
# (question, [(older text, newer text)]) -> for each pair, True when the newer answers the question now, False when the
# older does, None when the model is not sure; None for all when no model can say
Precedence = Callable[[str, Sequence[tuple[str, str]]], "list[bool | None] | None"]
# (question, memories) -> (older id, newer id) for each pair of them whose newer memory answers the question now, by
# the precedence model sure of it and the relation judge reading an update (MemoryService.newer_answering); [] for none
UpdateReading = Callable[[str, Sequence[MemoryRow]], "list[tuple[str, str]]"]
# text -> whose fact it states (preprocessing.holders), or None when no parser can say
HolderReading = Callable[[str], Holders | None]
# memories -> whose fact each states, by the parse and the holder model (read when it was written and kept, or read
# now), or None when no parser can say
StatementReading = Callable[[Sequence[MemoryRow]], "list[StatementHolders] | None"]


@dataclass(frozen=True)
class SearchQuery:
    namespaces: tuple[str, ...]
    text: str
    limit: int
    tags: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    signals: tuple[str, ...] = ()
    session_id: str = ""
    entity_keys: tuple[str, ...] = ()  # only memories that mention this entity (any of its canonical keys)
    include_history: bool = False  # rank superseded memories by relevance (x STALE_FACTOR), not after every current one
    # (a query about the past, "what did we use before X?", always does, and without the factor)
    rerank: bool = True  # the relevance model reads the best hits ([retrieval] rerank_depth); compile_context's does not


@dataclass(frozen=True)
class ScoredMemory:
    memory: MemoryRow
    score: float
    signal_scores: dict[str, float] = field(default_factory=dict)


def decay(age_days: float, half_life_days: float, model: str) -> float:
    """How much of a memory's strength is left after age_days: exponential, or power law with the same half-life."""
    age_days = max(age_days, 0.0)
    if model == "power":
        # (1 + t/s)^-a halves at t = half_life with a = 1 and s = half_life; it keeps a long tail.
        return 1.0 / (1.0 + age_days / half_life_days)
    return math.pow(0.5, age_days / half_life_days)


def temporal_score(memory: MemoryRow, now: datetime, settings: RetrievalSettings) -> float:
    """Strength, decayed since last use, lifted by how often the memory was used (spaced repetition)."""
    age_days = (now - memory.last_used_at).total_seconds() / 86400
    return memory.strength * decay(age_days, settings.half_life_days, settings.decay_model) * (
        1.0 + settings.use_boost * math.log1p(memory.use_count))


def check_signals(signals: Sequence[str]) -> None:
    unknown = sorted(set(signals) - set(SIGNALS))
    if unknown:
        raise InvalidArgument(f"signals: unknown {', '.join(unknown)}; use any of {', '.join(SIGNALS)}")


def fuse(scores: dict[str, dict[str, float]], weights: dict[str, float], k: float) -> dict[str, float]:
    """Weighted reciprocal-rank fusion: sum over signals of weight / (k + rank).

    Equal scores share a rank, so a signal that cannot tell two memories apart leaves the choice to the others.
    """
    fused: dict[str, float] = {}
    for signal, by_memory in scores.items():
        weight = weights.get(signal, 0.0)
        rank, previous = 0, None
        for position, (memory_id, score) in enumerate(sorted(by_memory.items(), key=lambda x: -x[1]), 1):
            if score != previous:
                rank, previous = position, score
            fused[memory_id] = fused.get(memory_id, 0.0) + weight / (k + rank)
    # A candidate a signal did not find ranks just after everything it did find.
    everyone = set(fused)
    for signal, by_memory in scores.items():
        if by_memory:
            missing_share = weights.get(signal, 0.0) / (k + len(by_memory) + 1)
            for memory_id in everyone - by_memory.keys():
                fused[memory_id] += missing_share
    return fused


# The graph's one hop: for each entity key asked about, the keys one active fact away and the fact's confidence.
Neighbours = Callable[[Sequence[str], Sequence[str]], dict[str, list[tuple[str, float]]]]


def activated_entities(lexical: LexicalIndex, namespaces: Sequence[str], seeds: dict[str, float],
                       found: dict[str, dict[str, float]], hop_decay: float,
                       neighbours: Neighbours | None) -> dict[str, float]:
    """Entity key -> activation: the seeds (the query's entities), the entities of the best text matches (decayed
    by hop and by rank), then one hop over active facts from each of them."""
    activation = dict(seeds)
    feedback = list(dict.fromkeys(
        m for scores in found.values() for m, _ in heapq.nlargest(FEEDBACK_HITS, scores.items(), key=lambda x: x[1])
    ))[:FEEDBACK_HITS]
    for rank, keys in enumerate(lexical.entities_of(namespaces, feedback).values()):
        for key in keys:
            activation[key] = max(activation.get(key, 0.0), hop_decay * (0.8 ** rank))
    if neighbours is not None and activation:
        weights = dict(activation)  # each neighbour is reached from its entity's weight before this hop
        for key, reached in neighbours(namespaces, list(weights)).items():
            weight = weights[key]
            for neighbour, strength in reached:
                activation[neighbour] = max(activation.get(neighbour, 0.0), weight * hop_decay * strength)
    return activation


def spread(lexical: LexicalIndex, namespaces: Sequence[str], activation: dict[str, float]) -> dict[str, float]:
    """Documents mentioning activated entities, each scored by the activation it receives."""
    scores: dict[str, float] = {}
    for key, documents in lexical.memories_with_entities(namespaces, activation, MAX_KEY_MEMORIES).items():
        share = activation[key] / math.sqrt(len(documents))  # a key many documents share says little
        for document in documents:
            scores[document] = scores.get(document, 0.0) + share
    return scores


def final_scores(fused: dict[str, float], rows: dict[str, MemoryRow], looking_back: bool) -> dict[str, float]:
    """Fused score per hit. A question about the past ("what did we use before X?") is answered by outdated memories:
    they keep their score. Otherwise a superseded memory keeps STALE_FACTOR of it (and, unless history is asked for,
    the search then caps it with below_every_current)."""
    final = dict(fused)
    if looking_back:
        return final
    for memory_id, score in final.items():
        if rows[memory_id].superseded_by:
            final[memory_id] = score * STALE_FACTOR
    return final


def below_every_current(final: dict[str, float], rows: dict[str, MemoryRow]) -> None:
    """Caps each superseded memory's score just under the lowest current one (which the reranker may make negative):
    it comes after every current memory and still fills the places no current memory matches."""
    current = [score for m, score in final.items() if not rows[m].superseded_by]
    if current:
        ceiling = math.nextafter(min(current), -math.inf)
        for memory_id, score in final.items():
            if rows[memory_id].superseded_by:
                final[memory_id] = min(score, ceiling)


def logit(probability: float) -> float:
    probability = min(max(probability, RERANK_CLIP), 1 - RERANK_CLIP)
    return math.log(probability / (1 - probability))


def reranked(final: dict[str, float], rows: dict[str, MemoryRow], text: str, relevance: Relevance,
             depth: int, weight: float, with_history: bool) -> dict[str, float]:
    """The best `depth` hits (current ones only, unless the past is asked for) read with the query by the relevance
    model in one batch, each moved by `weight` x the best score per logit of its verdict: among hits the fused
    signals barely tell apart (three memories on one subject, the newest first by recency), the one that answers
    comes first, and a look-alike ("Raised the search service timeout to 4s" for "the checkout service's timeout")
    goes down. The read hits are ordered among themselves: one that would sink to or under the best hit not read is
    lifted just above it, in the order of their moved scores, so the reranker never hands first place to a hit it did
    not read. Returns each read hit's probability; {} when the model cannot answer (the order stays)."""
    eligible = [m for m in final if with_history or not rows[m].superseded_by]
    top = heapq.nlargest(depth, eligible, key=lambda m: (final[m], rows[m].created_at.timestamp(), m))
    if len(top) < 2:
        return {}
    probabilities = relevance(text, [rows[m].content for m in top])
    if probabilities is None:
        return {}
    read = set(top)
    floor = max((final[m] for m in eligible if m not in read), default=-math.inf)
    step = weight * final[top[0]]
    for memory_id, probability in zip(top, probabilities, strict=True):
        final[memory_id] += step * logit(probability)
    level = floor
    for memory_id in sorted((m for m in top if final[m] <= floor), key=lambda m: final[m]):
        level = math.nextafter(level, math.inf)
        final[memory_id] = level
    return dict(zip(top, probabilities, strict=True))


def other_holders_down(final: dict[str, float], rows: dict[str, MemoryRow], text: str, holders: HolderReading,
                       statements: StatementReading, depth: int, factor: float) -> None:
    """A question about the user's own ("what time is my standup?") or a named holder's ("when does Elin's school
    let out?") is not answered by the same attribute of another's ("The platform team's standup moved to 10:15",
    "My son Bram's school changed its finishing time"), which its words and meaning match as well: of the best
    `depth` current hits, each that states its fact of another holder keeps `factor` of its score, once. Another
    holder is one the hit's parse names and the question does not; or, for a question about the user's own fact
    alone, one the holder model reads with no mark the parse finds ("legal moved down to floor 2", "hes gone off
    fornacella's"), but for an assistant's note about "the user", which the model takes for a third party. Each hit's
    reading was made when it was written (`statements`), so a search parses only the question."""
    current = [m for m in final if not rows[m].superseded_by]
    top = heapq.nlargest(depth, current, key=lambda m: (final[m], rows[m].created_at.timestamp(), m))
    if not top or (asked := holders(text)) is None or not (asked.first_person or asked.others):
        return
    read = statements([rows[m] for m in top])
    if read is None:
        return
    only_the_users = asks_only_of_the_user(text, asked)
    for memory_id, statement in zip(top, read, strict=True):
        content = rows[memory_id].content
        named = bool(statement.holders.others) and holders_differ(text, asked, content, statement.holders)
        unmarked = only_the_users and bool(statement.other) and not names_the_user(content)
        if named or unmarked:
            final[memory_id] *= factor


def revisions_above_revised(final: dict[str, float], rows: dict[str, MemoryRow],
                            found: dict[str, dict[str, float]], text: str = "",
                            reader: Precedence | None = None, depth: int = PARTIAL_DEPTH) -> dict[str, float]:
    """A partial update ("the Bergen train moved to 5 July") beside the memory it revises ("fly to Oslo 2 July, train
    to Bergen 4 July, fly home 9 July"): the older one stays current for what the update leaves unchanged, and only the
    question says which of the two answers. The partial-update reader (`reader`) reads each such pair of which one is
    among the best `depth` hits, in one call: where it is sure the question asks what changed, the update is placed just
    above the older memory; where it is sure it asks what was left, the older memory just above the update. Where it is
    not sure, or without it, a question as close in meaning to the update as to the older memory asks what changed,
    and the update is placed just above it; an update that names its subject only by pronoun ("she moved it to
    Wednesdays") carries the memory it revises as its context, and is placed above it whenever the words match it.
    Returns the reader's verdicts as scores, 1.0 for the memory of a pair that answers and 0.0 for the other ({} when
    nothing was read)."""
    dense, lexical = found.get("dense", {}), found.get("lexical", {})
    linked = [(memory_id, revised) for memory_id in final
              if (revised := rows[memory_id].meta.get(PARTIAL_UPDATE_KEY)) in final and not rows[revised].superseded_by]
    verdicts: list[bool | None] = [None] * len(linked)
    if reader is not None and linked:
        best = set(heapq.nlargest(depth, final, key=lambda m: (final[m], rows[m].created_at.timestamp(), m)))
        read = [i for i, pair in enumerate(linked) if best.intersection(pair)]
        said = reader(text, [(rows[linked[i][1]].content, rows[linked[i][0]].content) for i in read]) if read else None
        for i, verdict in zip(read, said or (), strict=False):
            verdicts[i] = verdict
    readings: dict[str, float] = {}
    for (memory_id, revised), verdict in zip(linked, verdicts, strict=True):
        if verdict is not None:
            winner, loser = (memory_id, revised) if verdict else (revised, memory_id)
            readings[winner], readings[loser] = 1.0, 0.0
            if final[winner] <= final[loser]:
                final[winner] = math.nextafter(final[loser], math.inf)
            continue
        if final[memory_id] > final[revised]:
            continue
        as_close = memory_id in dense and revised in dense and dense[memory_id] >= dense[revised] - PARTIAL_MARGIN
        leans_on_it = memory_id in lexical and rows[revised].content in rows[memory_id].context
        if as_close or leans_on_it:
            final[memory_id] = math.nextafter(final[revised], math.inf)
    return readings


def newer_above_older(final: dict[str, float], rows: dict[str, MemoryRow], text: str, read_updates: UpdateReading,
                      depth: int, decided: dict[str, float]) -> dict[str, float]:
    """An update import left unlinked ("choir is at the oakfield school gym from now on" beside "The choir rehearses at
    St. Aidan's church hall"): the best `depth` current hits are read as compile_context reads its memories
    (`read_updates`: the closest pair in time order, by the precedence model with the question and the relation judge
    without it), and where both say the newer memory answers now, it is placed just above the older one. Hits the
    partial-update reader decided (`decided`) are not read. Returns 1.0 for each newer memory read so and 0.0 for its
    older one ({} when none was)."""
    current = [m for m in final if not rows[m].superseded_by]
    top = [m for m in heapq.nlargest(depth, current, key=lambda m: (final[m], rows[m].created_at.timestamp(), m))
           if m not in decided]
    if len(top) < 2:
        return {}
    readings: dict[str, float] = {}
    for older, newer in read_updates(text, [rows[m] for m in top]):
        readings[newer], readings[older] = 1.0, 0.0
        if final[newer] <= final[older]:
            final[newer] = math.nextafter(final[older], math.inf)
    return readings


def ordered_by_precedence(final: dict[str, float], rows: dict[str, MemoryRow], text: str, precedence: Precedence,
                          depth: int, relevant: Callable[[Sequence[str]], "set[str] | None"]) -> dict[str, float]:
    """The best `depth` current hits read in pairs, each pair in time order, by the precedence model: which of the two
    answers the question now. "My running club meets on Tuesday evenings" and, later, "Running club has moved its
    meetup to Thursdays, still at Fenwick Park" both stay current (a partial update), and only the question says
    which one answers: the day, or the park. A verdict counts only for a memory the relevance model reads as about
    the question (`relevant`: those of the given hits it does): the precedence model learnt which of two memories on
    the question's subject answers it, and a statement of change about another subject is outside that. A pair of
    which neither is relevant is not read; one the model is not sure of counts for neither. The hits are ordered by
    the pairs each wins, a tie (none, or a cycle) keeping the fused order, and take the same scores in that order,
    so the order is still the scores'. Returns each read hit's wins; {} when a model cannot answer (the order
    stays)."""
    current = [m for m in final if not rows[m].superseded_by]
    top = heapq.nlargest(depth, current, key=lambda m: (final[m], rows[m].created_at.timestamp(), m))
    if len(top) < 2 or (about := relevant(top)) is None:
        return {}
    in_time = [tuple(sorted(pair, key=lambda m: (rows[m].created_at, m))) for pair in
               ((a, b) for i, a in enumerate(top) for b in top[i + 1:]) if about.intersection(pair)]
    if not in_time:
        return {}
    verdicts = precedence(text, [(rows[older].content, rows[later].content) for older, later in in_time])
    if verdicts is None:
        return {}
    wins = dict.fromkeys(top, 0)
    for (older, later), newer_answers in zip(in_time, verdicts, strict=True):
        if newer_answers is not None and (winner := later if newer_answers else older) in about:
            wins[winner] += 1
    ordered = sorted(top, key=lambda m: -wins[m])  # stable: ties keep the fused order
    level = max((final[m] for m in current if m not in wins), default=-math.inf)
    # From the last up, each takes its place's score, nudged just above the one below it (or the best hit not read)
    # where they are equal, so the order is strict and no hit left out comes between.
    for memory_id, score in reversed(list(zip(ordered, [final[m] for m in top], strict=True))):
        level = score if score > level else math.nextafter(level, math.inf)
        final[memory_id] = level
    return {m: float(w) for m, w in wins.items()}


class HybridRetriever:
    """Each signal proposes candidates with its own scores; weighted RRF fuses them; every hit keeps its per-signal scores."""

    def __init__(self, rows: RowCache, lexical: LexicalIndex, vectors: VectorIndex,
                 embed: Callable[[str], np.ndarray | None], settings: RetrievalSettings,
                 graph_neighbours: Neighbours | None = None,
                 relevance: Relevance | None = None, holders: HolderReading | None = None,
                 statements: StatementReading | None = None, precedence: Precedence | None = None,
                 partial_reader: Precedence | None = None, update_reading: UpdateReading | None = None) -> None:
        self._row_cache = rows
        self._lexical = lexical
        self._vectors = vectors
        self._embed = embed
        self._settings = settings
        self._graph_neighbours = graph_neighbours  # entity key -> [(neighbour key, weight)] over active facts
        self._relevance = relevance  # the reranker: the relevance model's reading of (query, hit)
        self._holders = holders  # whose fact a text states
        self._statements = statements  # whose fact each memory states, kept from when it was written
        self._precedence = precedence  # which of two memories, in time order, answers a question now
        self._partial_reader = partial_reader  # of a memory and its partial update, which the question asks about
        self._update_reading = update_reading  # of two hits, is the newer an update that answers the question now
        self._spare = SpareThread("cortexd-dense")  # the dense signal, beside the lexical one

    def search(self, query: SearchQuery) -> list[ScoredMemory]:
        """The hits in the order of their final score, which is the score each reports."""
        signals = query.signals or SIGNALS
        check_signals(signals)
        depth = max(self._settings.candidates, query.limit * 3)
        found: dict[str, dict[str, float]] = {}
        # The query's embedding and the vector graph's walk release the GIL: they run beside BM25 when a core is free.
        dense = self._spare.submit(lambda: self._dense(query, depth)) if {"lexical", "dense"} <= set(signals) else None
        if "lexical" in signals:
            found["lexical"] = dict(self._lexical.search(query.namespaces, query.text, depth))
        # The graph signal starts from the best text matches, which are lexical's when it found FEEDBACK_HITS: then it
        # needs nothing from the dense signal and is computed while that is still running.
        graph = (self._graph(query, found, depth)
                 if "graph" in signals and ("dense" not in signals or len(found.get("lexical", ())) >= FEEDBACK_HITS)
                 else None)
        if "dense" in signals:
            found["dense"] = dense.result() if dense is not None else self._dense(query, depth)
        if "graph" in signals:
            found["graph"] = graph if graph is not None else self._graph(query, found, depth)
        retrievers = [s for s in RETRIEVERS if s in signals] or ["graph"]
        candidates = {m for s in retrievers for m in found.get(s, {})}
        mentioning = set().union(*self._lexical.memories_with_entities(query.namespaces, query.entity_keys).values()) \
            if query.entity_keys else None
        if mentioning is not None:
            candidates &= mentioning
        if len(candidates) < THIN_SEARCH and self._relevance is not None and query.rerank and not query.signals \
                and self._settings.thin_search_depth > 0:
            under_floor = self._read_under_floor(query, candidates, mentioning)
            found.setdefault("dense", {}).update(under_floor)
            candidates |= set(under_floor)
        # A signal's score counts only for the memories the retrievers brought in.
        found = {s: {m: v for m, v in scores.items() if m in candidates} for s, scores in found.items()}
        if not candidates:
            return []
        rows = {r.id: r for r in self._rows(query, candidates, signals)}
        self._pass_relevance_to_successors(query, found, rows, signals)
        # The rows now also hold the versions between a stale hit and its current one: only what matched is ranked.
        matched = {m for scores in found.values() for m in scores if m in rows}
        weights = self._settings.weights()
        window = None
        if "temporal" in signals:
            now = utc_now()
            window = named_window(query.text, now) if query.since is None and query.until is None else None
            if window is not None:
                found["temporal"] = {m: window.closeness(rows[m].created_at) for m in matched}
                weights["temporal"] = max(weights["temporal"], NAMED_TIME_WEIGHT)
            else:
                found["temporal"] = {m: temporal_score(rows[m], now, self._settings) for m in matched}
        eligible = {s: {m: v for m, v in scores.items() if m in rows} for s, scores in found.items()}
        fused = fuse(eligible, weights, self._settings.rrf_k)
        looking_back = asks_about_the_past(query.text)
        with_history = looking_back or query.include_history
        final = final_scores(fused, rows, looking_back)
        # A search for every signal (not one asked for alone) is reranked by the relevance model.
        if self._relevance is not None and query.rerank and not query.signals and self._settings.rerank_depth > 1:
            read = reranked(final, rows, query.text, self._relevance, self._settings.rerank_depth,
                            self._settings.rerank_weight, with_history)
            if read:
                found["rerank"] = read
        if self._holders is not None and self._statements is not None and not query.signals \
                and self._settings.holder_factor < 1.0:
            other_holders_down(final, rows, query.text, self._holders, self._statements, self._settings.holder_depth,
                               self._settings.holder_factor)
        if not with_history:
            below_every_current(final, rows)
        # A question about the past, or one naming a span of time, is not asked about now: the span decides.
        asked_now = not with_history and window is None
        read = revisions_above_revised(final, rows, found, query.text,
                                       self._partial_reader if asked_now and not query.signals else None)
        if read:
            found["partial"] = read
        if self._update_reading is not None and query.rerank and not query.signals and asked_now \
                and self._settings.update_reading_depth > 1:
            updates = newer_above_older(final, rows, query.text, self._update_reading,
                                        self._settings.update_reading_depth, found.get("partial", {}))
            if updates:
                found["update"] = updates
        if self._precedence is not None and query.rerank and not query.signals and asked_now \
                and self._settings.precedence_depth > 1:
            wins = ordered_by_precedence(final, rows, query.text, self._precedence, self._settings.precedence_depth,
                                         lambda top: self._about_the_question(query.text, top, rows, found))
            if wins:
                found["precedence"] = wins
        ranked = sorted(final, key=lambda m: (-final[m], -rows[m].created_at.timestamp(), m))[: query.limit]
        return [ScoredMemory(rows[m], final[m], {s: round(found[s][m], 4) for s in found if m in found[s]})
                for m in ranked]

    def _read_under_floor(self, query: SearchQuery, candidates: set[str], mentioning: set[str] | None) -> dict[str, float]:
        """For a thin search: of the thin_search_depth nearest current memories under the dense floor that pass the
        search's filters, those the relevance model, reading them with the query in one batch, takes for about it
        (RELEVANT_AT or more), each with its cosine; {} when the model cannot say."""
        vector = self._embed(query.text)
        if vector is None:
            return {}
        floor, depth = self._settings.min_dense_similarity, self._settings.thin_search_depth
        under: dict[str, float] = {}
        for namespace in query.namespaces:
            for memory_id, similarity in self._vectors.nearest(namespace, vector, depth + len(candidates),
                                                               include_superseded=False):
                if similarity < floor and memory_id not in candidates \
                        and (mentioning is None or memory_id in mentioning):
                    under[memory_id] = similarity
        nearest = set(heapq.nlargest(depth, under, key=lambda m: (under[m], m)))
        rows = [r for r in self._rows(query, nearest, SIGNALS) if not r.superseded_by]
        if not rows or (probabilities := self._relevance(query.text, [r.content for r in rows])) is None:
            return {}
        return {r.id: under[r.id] for r, probability in zip(rows, probabilities, strict=True)
                if probability >= RELEVANT_AT}

    def _about_the_question(self, text: str, hits: Sequence[str], rows: dict[str, MemoryRow],
                            found: dict[str, dict[str, float]]) -> set[str] | None:
        """Those of `hits` the relevance model reads as about the question (probability RELEVANT_AT or more): the
        reranker's readings where it made them, the others read now in one batch; None when the model cannot say."""
        read = dict(found.get("rerank", {}))
        unread = [m for m in hits if m not in read]
        if unread:
            if self._relevance is None or (probabilities := self._relevance(text, [rows[m].content for m in unread])) \
                    is None:
                return None
            read.update(zip(unread, probabilities, strict=True))
        return {m for m in hits if read[m] >= RELEVANT_AT}

    def _pass_relevance_to_successors(self, query: SearchQuery, found: dict[str, dict[str, float]],
                                      rows: dict[str, MemoryRow], signals: Sequence[str]) -> None:
        """A question that matches an outdated memory is answered by its current version, whatever words that uses.

        "We moved deploys to Thursdays" may share no word with "which day do we deploy?", while the memory it
        superseded ("Deploys are on Tuesdays") matches well: each signal's score for a superseded memory is
        carried, at most, to the end of its chain of successors (added to `rows` when it passes the filters)."""
        successor_of = {m: r.superseded_by for m, r in rows.items() if r.superseded_by}
        current_of: dict[str, str] = {}
        for stale_id in successor_of:
            seen, step = {stale_id}, successor_of[stale_id]
            for _ in range(MAX_SUCCESSION_STEPS):
                if step not in rows:
                    fetched = self._rows(query, {step}, signals)
                    if not fetched:
                        break
                    rows[step] = fetched[0]
                successor = rows[step].superseded_by
                if not successor or successor in seen:
                    for version in seen:
                        current_of.setdefault(version, step)
                    break
                seen.add(step)
                step = successor
        for signal, scores in found.items():
            for stale_id, current_id in current_of.items():
                if stale_id in scores and scores[stale_id] > scores.get(current_id, float("-inf")):
                    scores[current_id] = scores[stale_id]

    def _dense(self, query: SearchQuery, depth: int) -> dict[str, float]:
        vector = self._embed(query.text)
        if vector is None:
            return {}
        found: dict[str, float] = {}
        for namespace in query.namespaces:
            for memory_id, similarity in self._vectors.nearest(namespace, vector, depth):
                if similarity >= self._settings.min_dense_similarity:
                    found[memory_id] = similarity
        return found

    def _graph(self, query: SearchQuery, found: dict[str, dict[str, float]], depth: int) -> dict[str, float]:
        """Spreading activation: from the query's entities and those of the best text matches, two hops out.

        Hop 1 is the memories mentioning an activated entity; hop 2 goes through the entities those memories
        share and through active facts between entities, each hop decaying the activation.
        """
        namespaces = query.namespaces
        hop_decay = self._settings.graph_hop_decay
        known = self._lexical.known_entity_keys(namespaces, salient_keys(query.text))
        activation = activated_entities(self._lexical, namespaces, dict.fromkeys(known, 1.0),
                                        found, hop_decay, self._graph_neighbours)
        scores = spread(self._lexical, namespaces, activation)
        # Hop 2: the other entities of the memories reached first, activated in proportion to those memories.
        top = heapq.nlargest(2 * FEEDBACK_HITS, scores.items(), key=lambda x: x[1])
        best = top[0][1] if top else 0.0
        second: dict[str, float] = {}
        for memory_id, keys in self._lexical.entities_of(namespaces, [m for m, _ in top]).items():
            for key in keys:
                if key not in activation:
                    second[key] = max(second.get(key, 0.0), hop_decay * scores[memory_id] / best)
        for memory_id, score in spread(self._lexical, namespaces, second).items():
            scores[memory_id] = scores.get(memory_id, 0.0) + score
        return dict(heapq.nlargest(depth, scores.items(), key=lambda x: x[1]))

    def _rows(self, query: SearchQuery, ids: set[str], signals: Sequence[str]) -> list[MemoryRow]:
        rows = self._row_cache.get_many(list(ids), query.namespaces) if ids else []
        return [r for r in rows
                if set(query.tags) <= set(r.tags)
                and (query.since is None or r.created_at >= query.since)
                and (query.until is None or r.created_at < query.until)
                and (not query.session_id or r.session_id == query.session_id)
                and r.archived_at is None]
