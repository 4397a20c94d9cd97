"""compile_context: the three-tier, token-budgeted, provenance-cited context a host reads before a task."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from memory_daemon.journal.decisions import DecisionLog
from memory_daemon.core.errors import InvalidArgument, NotFound
from memory_daemon.core.validation import checked_text
from memory_daemon.journal.sessions import SessionMemory
from memory_daemon.graph.service import GraphService
from memory_daemon.memory.service import MemoryService
from memory_daemon.store.graph import EpisodeRow, FactRow
from memory_daemon.store.memories import PARTIAL_UPDATE_KEY
from memory_daemon.core.timefmt import format_iso
from memory_daemon.context.unified_search import SearchResult, UnifiedSearch
from memory_daemon.retrieval.spare_thread import SpareThread
from preprocessing.relevance_model import MIN_DENSE_ON_TOPIC
from preprocessing.terms import identifiers, query_terms, salient_keys

DEFAULT_BUDGET = 350
MIN_BUDGET, MAX_BUDGET = 50, 8000
TOKEN_ESTIMATOR = "ceil(characters / 4), counted on every line including headings"
MIN_RELEVANCE = 0.35  # share of the best match's fused score a memory needs to enter tier 2
MIN_DENSE_WITH_WORDS = 0.3  # cosine a memory sharing words with the task needs, unless it shares an identifier
TIER_WEIGHT = {1: 3.0, 2: 1.0, 3: 0.6}
TIER_TITLE = {1: "Working memory (this session)", 2: "Relevant knowledge", 3: "Session summary"}
HEADER = "# Context for: {task}\n"
MAX_LINE_CHARS = 400
SEARCH_DEPTH = 20  # hits of one search (memories, episodes and decisions) considered for tier 2
# The best hits the cosine rule turned away that the relevance model reads again, in one batch (4 to 5 ms a pair,
# more on a busy machine), and only when the rule kept fewer than RELEVANCE_WHEN_FEWER hits: the model is there for
# the question whose answer shares no word with it, and a context the rule already filled would pay for it on every
# call (a 10k store's compile_context p50 went from 15 to 66 ms with the model asked every time).
RELEVANCE_DEPTH = 4
RELEVANCE_WHEN_FEWER = 3
INVARIANT_BONUS = 0.2  # an invariant is a rule the task must not break: it counts for more than its match


def estimate_tokens(text: str) -> int:
    """The one token estimator: about four characters a token, the usual rule of thumb for English BPE tokenizers."""
    return math.ceil(len(text) / 4)


@dataclass(frozen=True)
class ContextLine:
    tier: int
    kind: str  # memory, fact, decision, episode, note or summary
    id: str
    text: str  # citation included
    relevance: float  # in [0, 1]

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text + "\n")

    @property
    def utility(self) -> float:
        return TIER_WEIGHT[self.tier] * self.relevance


@dataclass(frozen=True)
class CompiledContext:
    markdown: str
    lines: tuple[ContextLine, ...]
    tokens_used: int
    max_tokens: int
    left_out: tuple[str, ...]


def _clip(text: str, limit: int = MAX_LINE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def task_heading(task: str, budget: int) -> str:
    """The heading that names the task, clipped so that the task in it takes at most half the budget."""
    return HEADER.format(task=_clip(task, min(MAX_LINE_CHARS, 2 * budget)))


def pack(lines: Sequence[ContextLine], budget: int) -> tuple[list[ContextLine], list[ContextLine]]:
    """Greedy utility-density knapsack: best utility per token first; a line enters only if it still fits."""
    chosen, left = [], []
    used = 0
    for line in sorted(lines, key=lambda l: (-l.utility / max(l.tokens, 1), -l.utility)):
        section = 0 if any(c.tier == line.tier for c in chosen) else estimate_tokens(f"\n## {TIER_TITLE[line.tier]}\n")
        if used + line.tokens + section <= budget:
            chosen.append(line)
            used += line.tokens + section
        else:
            left.append(line)
    return chosen, left


def render(heading: str, lines: Sequence[ContextLine]) -> str:
    parts = [heading]
    for tier in (1, 2, 3):
        tier_lines = sorted((l for l in lines if l.tier == tier), key=lambda l: -l.relevance)
        if tier_lines:
            parts.append(f"\n## {TIER_TITLE[tier]}\n")
            parts.extend(line.text + "\n" for line in tier_lines)
    return "".join(parts)


class ContextCompiler:
    """Gathers candidates from working memory, retrieval and the graph, then packs them under the budget."""

    def __init__(self, memories: MemoryService, graph: GraphService, search: UnifiedSearch,
                 working_memory: Callable[[str, str], Sequence[ContextLine]] | None = None,
                 decisions: DecisionLog | None = None,
                 on_topic: Callable[[str, Sequence[str], Sequence[float]], list[bool] | None] | None = None) -> None:
        self._memories = memories
        # The relevance model's verdict on (task, texts, their cosines to it), or None when it cannot answer: then the
        # rule decides.
        self._on_topic_model = on_topic
        self._search = search
        self._graph = graph
        self._working_memory = working_memory
        self._decisions = decisions
        self._spare = SpareThread("cortexd-context")  # the precedence reading, beside the relation judge's

    def compile(self, namespace: str, task: str, session_id: str = "", max_tokens: int | None = None,
                episode_kinds: Sequence[str] = ("invariant", "adr", "decision", "bug_root_cause", "migration")) -> CompiledContext:
        task = task.strip()
        if not task:
            raise InvalidArgument("task must not be empty")
        limits = self._memories.limits
        checked_text(task, "task", limits.max_query_chars)
        session_id = checked_text(session_id, "session_id", limits.max_id_chars, required=False)
        budget = DEFAULT_BUDGET if max_tokens is None else max_tokens
        if not MIN_BUDGET <= budget <= MAX_BUDGET:
            raise InvalidArgument(f"max_tokens must be between {MIN_BUDGET} and {MAX_BUDGET}, got {budget}")
        candidates: list[ContextLine] = []
        if session_id and self._working_memory is not None:
            candidates += self._current_working_memory(namespace, session_id)
        candidates += self._searched_lines(namespace, task, episode_kinds)
        candidates += self._fact_lines(namespace, task)
        if session_id and self._decisions is not None:
            summary = self._decisions.session_summary(namespace, session_id).text
            if summary:
                candidates.append(ContextLine(3, "summary", session_id, f"- {_clip(summary)} [SESSION:{session_id}]", 0.5))
        unique = list({(c.kind, c.id): c for c in candidates}.values())
        heading = task_heading(task, budget)
        chosen, left = pack(unique, budget - estimate_tokens(heading))
        markdown = render(heading, chosen)
        return CompiledContext(markdown, tuple(chosen), estimate_tokens(markdown), budget, tuple(l.id for l in left))

    def _current_working_memory(self, namespace: str, session_id: str) -> list[ContextLine]:
        """Tier 1 without the notes whose memory was superseded or archived after it was saved in the session."""
        lines = self._working_memory(namespace, session_id)
        current = self._memories.current_ids(namespace, [l.id for l in lines if l.kind == "note"])
        return [l for l in lines if l.kind != "note" or l.id in current]

    def _searched_lines(self, namespace: str, task: str, episode_kinds: Sequence[str]) -> list[ContextLine]:
        """Memories, episodes and decisions from one search: only current memories, none that a newer memory among
        them updates or (by the precedence model, sure of it) answers the task in its place, only on-topic hits,
        each as relevant as its fused score against the best; a decision shows its outcome, an invariant counts for
        more."""
        kinds = ("memory", "episode", "decision") if self._decisions is not None else ("memory", "episode")
        # Not reranked: the model costs about 3 ms a pair on a call every prompt makes, whose budget is 30 ms, and the
        # gate below already has it read the doubtful hits (README, Quality, "Session 39").
        query = replace(self._memories.search_query(namespace, task, SEARCH_DEPTH, (), "", ""), rerank=False)
        hits = self._on_topic_hits(task, [h for h in self._search.search(query, kinds, episode_kinds)
                                          if h.kind != "memory" or h.row.superseded_by is None])
        if not hits:
            return []
        relevant = [(hit, share) for hit, share in zip(hits, shares_of_best([h.score for h in hits]))
                    if share >= MIN_RELEVANCE]
        # A memory a newer one here wholly updates is outdated even where import left the two unlinked, and so is,
        # for this task, one whose partial update here changed what the task asks (search's partial-update reading).
        memories = [hit for hit, _ in relevant if hit.kind == "memory"]
        rows = [hit.row for hit in memories]
        changed = changed_in_what_is_asked(memories)
        pairs = self._memories.close_pairs(rows)
        unchanged = [p for p in pairs if p[1].id not in changed and p[2].id not in changed]

        # The precedence model reads its pair on a spare core while the relation judge reads its own (README,
        # Quality, "Session 47, D3"); on a busy one, after it.
        def answered() -> set[str]:
            return self._memories.answered_by_newer(task, unchanged)

        beside = self._spare.submit(answered) if unchanged else None
        outdated = self._memories.updated_among(pairs) | changed
        outdated |= beside.result() if beside is not None else answered()
        lines = []
        for hit, relevance in relevant:
            row = hit.row
            if hit.kind == "memory" and row.id in outdated:
                continue
            if hit.kind == "memory":
                lines.append(ContextLine(2, "memory", row.id, f"- {_clip(row.content)} [MEM:{row.id}]", relevance))
            elif hit.kind == "episode":
                bonus = INVARIANT_BONUS if row.kind == "invariant" else 0.0
                lines.append(ContextLine(2, "episode", row.id, _episode_text(row), min(1.0, relevance + bonus)))
            else:
                outcome = "" if row.outcome_recorded_at is None else (" (worked)" if row.was_successful else " (did not work)")
                lines.append(ContextLine(2, "decision", row.id, f"- {_clip(row.summary)}{outcome} [DEC:{row.id}]", relevance))
        return lines

    def _on_topic_hits(self, task: str, hits: list[SearchResult]) -> list[SearchResult]:
        """The hits the cosine rule keeps and, when it kept few, those of the best it turns away that the relevance
        model's gate reads as about the task (a paraphrased question shares no word and often has a cosine under
        0.45)."""
        kept, doubtful = hits_to_read_again(task, [(h.signal_scores, _text_of(h)) for h in hits])
        if doubtful and self._on_topic_model is not None:
            verdicts = self._on_topic_model(task, [_text_of(hits[i]) for i in doubtful],
                                            [hits[i].signal_scores.get("dense", 0.0) for i in doubtful])
            for i, verdict in zip(doubtful, verdicts or ()):
                kept[i] = verdict
        return [h for h, keep in zip(hits, kept) if keep]

    def _fact_lines(self, namespace: str, task: str) -> list[ContextLine]:
        """Active facts about the task's entities (superseded and retracted facts are never candidates)."""
        facts: dict[str, FactRow] = {}
        for key in salient_keys(task) | set(query_terms(task)):
            try:
                about = self._graph.facts_about(namespace, key)
            except (NotFound, InvalidArgument):
                continue
            for fact in about:
                facts.setdefault(fact.id, fact)
        names = self._graph.entity_names(namespace, [f.subject_id for f in facts.values()])
        return [ContextLine(2, "fact", f.id, f"- {names.get(f.subject_id, f.subject_id)} {f.predicate} {_clip(f.object_value)}"
                            f" (since {format_iso(f.valid_from)[:10]}) [FACT:{f.id}]" + (f" (source {f.source})" if f.source else ""),
                            0.9 * f.confidence)
                for f in facts.values()]


def changed_in_what_is_asked(memories: Sequence[SearchResult]) -> set[str]:
    """The memories of these hits that a partial update among them revises, where search's partial-update reading
    (signal "partial") found the task asks what the update changed: the older memory then carries only the outdated
    value of what is asked. Where the task asks what the update left, or the reader was not sure, both stay."""
    revised_here = {hit.row.meta.get(PARTIAL_UPDATE_KEY) for hit in memories}
    return {hit.row.id for hit in memories if hit.row.id in revised_here and hit.signal_scores.get("partial") == 0.0}


def shares_of_best(scores: Sequence[float]) -> list[float]:
    """Each score as a share of the best one. Every hit can score 0 (a store where nothing but the words matched, all
    decayed): then all are equal, at 1."""
    best = max(scores, default=0.0)
    return [score / best if best > 0 else 1.0 for score in scores]


def hits_to_read_again(task: str, hits: Sequence[tuple[dict[str, float], str]]) -> tuple[list[bool], list[int]]:
    """For hits given as (signal scores, text) in search order: which the cosine rule keeps, and the positions of
    those the relevance model's gate reads again: the best RELEVANCE_DEPTH it turns away, when it kept fewer than
    RELEVANCE_WHEN_FEWER (models/relevance/fit_gate.py fits the gate on these)."""
    task_identifiers = set(identifiers(task))
    kept = [_on_topic(scores, text, task_identifiers) for scores, text in hits]
    if sum(kept) >= RELEVANCE_WHEN_FEWER:
        return kept, []
    return kept, [i for i, keep in enumerate(kept) if not keep][:RELEVANCE_DEPTH]


def _on_topic(scores: dict[str, float], text: str, task_identifiers: set[str]) -> bool:
    """The hit means nearly what the task says; or it shares words with the task and is at least loosely
    related in meaning, or it names the same identifier. Graph and decay alone are not enough, and neither is
    one shared word ("run the tests" against "the cron job runs at 02:00")."""
    dense = scores.get("dense", 0.0)
    if dense >= MIN_DENSE_ON_TOPIC:
        return True
    if scores.get("lexical", 0.0) <= 0:
        return False
    return dense >= MIN_DENSE_WITH_WORDS or bool(task_identifiers & set(identifiers(text)))


def _text_of(hit: SearchResult) -> str:
    row = hit.row
    if hit.kind == "memory":
        return row.content
    if hit.kind == "episode":
        return " ".join([row.title, row.body, *row.files])
    return f"{row.question} {row.chosen} {row.reasoning}"


def working_memory_lines(sessions: SessionMemory) -> Callable[[str, str], list[ContextLine]]:
    """Tier 1 from a session's working memory: its last decisions and notes, newest most relevant."""
    def lines(namespace: str, session_id: str) -> list[ContextLine]:
        items = sessions.working_memory(namespace, session_id)
        return [ContextLine(1, item.kind, item.id, f"- {_clip(item.text)} [{'DEC' if item.kind == 'decision' else 'MEM'}:{item.id}]",
                            1.0 - 0.1 * rank) for rank, item in enumerate(items)]
    return lines


def _episode_text(episode: EpisodeRow) -> str:
    body = f": {episode.body}" if episode.body.strip() else ""
    return f"- {episode.kind} {format_iso(episode.occurred_at)[:10]} {_clip(episode.title + body)} [EP:{episode.id}]"
