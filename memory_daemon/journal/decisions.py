"""The decision log: validates and records decisions with a generated summary, tracks outcomes, moves tiers."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from memory_daemon.core.config import Limits
from memory_daemon.core.secrets import SecretFilter
from memory_daemon.core.errors import InvalidArgument, NotFound
from memory_daemon.core.validation import checked_text
from memory_daemon.graph.service import new_id, normalised_predicate
from memory_daemon.memory.service import visible_namespaces
from memory_daemon.journal.sessions import SessionMemory, SessionSummary, SessionView, summarise_session
from memory_daemon.store.decisions import DecisionRepository, DecisionRow
from memory_daemon.core.timefmt import utc_now

TIERS = ("hot", "warm", "cold")  # warmest first
DEFAULT_CONFIDENCE = 0.8
DEFAULT_LIMIT = 20
MAX_LIMIT = 200
# The generated one-line summary: "Chose X over Y, Z for <question>: <short reasoning>".
MAX_SUMMARY_CHARS = 240
SUMMARY_PART_CHARS = {"chosen": 60, "other": 40, "question": 90, "reasoning": 80}
SUMMARY_OTHERS = 3
KEY_CHOICE_WORDS = 5
MAX_KEY_CHOICE_CHARS = 60

# "Use Redis", "let's go with Redis" -> "Redis": the verb says nothing about the choice.
_LEAD_IN = re.compile(r"^(?:let'?s\s+)?(?:use|using|go with|adopt|pick|choose|switch to|move to|migrate to|"
                      r"stay with|stick with|keep)\s+", re.IGNORECASE)
# Where the choice ends and its qualification begins: "PostgreSQL 16 (on RDS), because ..." -> "PostgreSQL 16".
_QUALIFIER = re.compile(r"\s*(?:[(,;:]|\s[-–—]\s|\b(?:because|since|so that|instead of|over|rather than)\b)",
                        re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


@dataclass(frozen=True)
class TierRules:
    """When a decision is hot, warm or cold; tiers order hot > warm > cold.

    1. A new decision is hot.
    2. Idleness demotes: a decision not accessed for more than `hot_idle` (7 days) is at most warm, and
       for more than `warm_idle` (30 days) cold. Demotion never warms a decision, and skips tiers when
       the idle time calls for it (hot, idle 40 days -> cold).
    3. An access promotes one tier (cold -> warm -> hot) and restarts the idle time. Accesses are:
       being returned by list_decisions or get_decision, and having an outcome recorded.
    4. A proven decision goes straight to hot on an access and cools three times slower
       (`proven_hot_idle` 21 days, `proven_warm_idle` 90 days). Proven: accessed at least
       `proven_accesses` (5) times, or a recorded successful outcome with impact >= `proven_impact` (0.5).
    Demotions are applied when decisions are listed (so a tier filter sees current tiers) and before each
    access; nothing runs in the background.
    """

    hot_idle: timedelta = timedelta(days=7)
    warm_idle: timedelta = timedelta(days=30)
    proven_hot_idle: timedelta = timedelta(days=21)
    proven_warm_idle: timedelta = timedelta(days=90)
    proven_accesses: int = 5
    proven_impact: float = 0.5

    def __post_init__(self) -> None:
        if not (timedelta(0) < self.hot_idle < self.warm_idle
                and timedelta(0) < self.proven_hot_idle < self.proven_warm_idle):
            raise ValueError("idle thresholds must be positive, hot before warm")

    @property
    def first_demotion(self) -> timedelta:
        """No decision idle for less than this can be demoted."""
        return min(self.hot_idle, self.proven_hot_idle)

    def proven(self, row: DecisionRow) -> bool:
        return row.access_count >= self.proven_accesses or (
            bool(row.was_successful) and (row.impact_score or 0.0) >= self.proven_impact)

    def settled(self, row: DecisionRow, now: datetime) -> str:
        """The row's tier once idleness since its last access is applied (rule 2)."""
        hot_idle, warm_idle = ((self.proven_hot_idle, self.proven_warm_idle) if self.proven(row)
                               else (self.hot_idle, self.warm_idle))
        idle = now - row.last_accessed_at
        by_idle = "cold" if idle > warm_idle else "warm" if idle > hot_idle else "hot"
        return TIERS[max(TIERS.index(row.tier), TIERS.index(by_idle))]

    def accessed(self, settled_tier: str, row: DecisionRow) -> str:
        """The tier after an access (rules 3 and 4); `row` is the decision as the access left it."""
        return "hot" if self.proven(row) else TIERS[max(0, TIERS.index(settled_tier) - 1)]


@dataclass(frozen=True)
class NewDecision:
    type: str
    question: str
    chosen: str
    options: tuple[str, ...] = ()
    reasoning: str = ""
    confidence: float | None = None
    session_id: str = ""


def _clip(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word boundary when it is too long."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-") + "…"


def _options(values: Sequence[str], chosen: str, limits: Limits) -> tuple[str, ...]:
    """The options, trimmed and without repeats (ignoring case); the chosen one is added when missing."""
    if len(values) > limits.max_options:
        raise InvalidArgument(f"options: at most {limits.max_options}, got {len(values)}")
    options: dict[str, str] = {}
    for position, value in enumerate(values, 1):
        option = checked_text(value, f"options[{position}]", limits.max_choice_chars)
        options.setdefault(option.casefold(), option)
    options.setdefault(chosen.casefold(), chosen)
    return tuple(options.values())


def _tier_filter(tier: str) -> str:
    tier = tier.strip().lower()
    if tier and tier not in TIERS:
        raise InvalidArgument(f"tier must be one of {', '.join(TIERS)} (or empty for all), got {tier[:40]!r}")
    return tier


def summarise_decision(question: str, options: Sequence[str], chosen: str, reasoning: str) -> str:
    """"Chose X over Y, Z for <question>: <short reasoning>", one line of at most MAX_SUMMARY_CHARS."""
    others = [_clip(o, SUMMARY_PART_CHARS["other"]) for o in options if o.casefold() != chosen.casefold()]
    summary = f"Chose {_clip(chosen, SUMMARY_PART_CHARS['chosen'])}"
    if len(others) > SUMMARY_OTHERS:
        summary += f" over {', '.join(others[:SUMMARY_OTHERS - 1])} and {len(others) - SUMMARY_OTHERS + 1} others"
    elif others:
        summary += f" over {', '.join(others)}"
    summary += f" for {_lower_first(_clip(question, SUMMARY_PART_CHARS['question']).rstrip('?.! '))}"
    why = _SENTENCE_END.split(" ".join(reasoning.split()), maxsplit=1)[0].rstrip(".!;")
    if why:
        summary += f": {_lower_first(_clip(why, SUMMARY_PART_CHARS['reasoning']))}"
    return _clip(summary, MAX_SUMMARY_CHARS)


def _lower_first(text: str) -> str:
    """"Which cache ..." reads on mid-sentence as "which cache ..."; "PostgreSQL ..." and "I ..." stay."""
    return text[0].lower() + text[1:] if len(text) > 1 and text[0].isupper() and text[1].islower() else text


def key_choice_of(chosen: str) -> str:
    """The chosen option in a few words: without a leading "use"/"go with" and any qualification after it."""
    text = " ".join(chosen.split())
    core = _LEAD_IN.sub("", text, count=1) or text
    core = _QUALIFIER.split(core, maxsplit=1)[0].strip() or core
    return _clip(" ".join(core.split()[:KEY_CHOICE_WORDS]).rstrip(".,;:!?"), MAX_KEY_CHOICE_CHARS)


class DecisionLog:
    """Decisions per namespace; logging one also puts it in its session's working memory."""

    def __init__(self, repository: DecisionRepository, sessions: SessionMemory | None = None,
                 rules: TierRules = TierRules(), clock: Callable[[], datetime] = utc_now,
                 limits: Limits = Limits(), secrets: SecretFilter = SecretFilter()) -> None:
        self._repository = repository
        self._limits = limits
        self._secrets = secrets
        self._db = repository.database
        self._sessions = sessions if sessions is not None else SessionMemory()
        self._rules = rules
        self._clock = clock

    @property
    def sessions(self) -> SessionMemory:
        return self._sessions

    @property
    def rules(self) -> TierRules:
        return self._rules

    # -- writes --------------------------------------------------------------

    def log_decision(self, namespace: str, new: NewDecision) -> DecisionRow:
        text = self._secrets.text
        new = replace(new, question=text(namespace, new.question), chosen=text(namespace, new.chosen),
                      options=self._secrets.texts(namespace, new.options), reasoning=text(namespace, new.reasoning))
        decision_type = normalised_predicate(new.type, "type")
        limits = self._limits
        question = checked_text(new.question, "question", limits.max_question_chars)
        chosen = checked_text(new.chosen, "chosen", limits.max_choice_chars)
        options = _options(new.options, chosen, limits)
        reasoning = checked_text(new.reasoning, "reasoning", limits.max_reasoning_chars, required=False)
        confidence = DEFAULT_CONFIDENCE if new.confidence is None else new.confidence
        if not 0.0 <= confidence <= 1.0:
            raise InvalidArgument(f"confidence must be in [0, 1], got {confidence}")
        session_id = checked_text(new.session_id, "session_id", limits.max_id_chars, required=False)
        now = self._clock()
        row = DecisionRow(
            id=new_id("dec"), namespace=namespace, type=decision_type, question=question, options=options,
            chosen=chosen, reasoning=reasoning, confidence=confidence, session_id=session_id,
            summary=summarise_decision(question, options, chosen, reasoning), key_choice=key_choice_of(chosen),
            tier=TIERS[0], created_at=now, last_accessed_at=now, access_count=0,
        )
        with self._db.writing() as cursor:
            self._repository.insert(cursor, row)
        self._sessions.add_decision(namespace, session_id, row.id, row.summary, now)
        return row

    def record_outcome(self, namespace: str, decision_id: str, was_successful: bool, impact_score: float | None,
                       learnings: str) -> DecisionRow:
        """Record (or revise) how a decision turned out; this counts as an access to it."""
        decision_id = checked_text(decision_id, "decision_id", self._limits.max_id_chars)
        impact = 0.0 if impact_score is None else impact_score
        if not -1.0 <= impact <= 1.0:
            raise InvalidArgument(f"impact_score must be in [-1, 1], got {impact}")
        learnings = checked_text(self._secrets.text(namespace, learnings), "learnings",
                                 self._limits.max_reasoning_chars, required=False)
        now = self._clock()
        with self._db.transaction() as cursor:
            found = self._repository.by_id([namespace], [decision_id])
            if not found:
                raise NotFound(f"no decision {decision_id!r} in namespace {namespace!r}")
            before = found[0]
            after = replace(before, outcome_recorded_at=now, was_successful=was_successful, impact_score=impact,
                            learnings=learnings, last_accessed_at=now, access_count=before.access_count + 1)
            after = replace(after, tier=self._rules.accessed(self._rules.settled(before, now), after))
            self._repository.save_outcome(cursor, after)
        return after

    # -- reads (each one an access) -------------------------------------------

    def recent(self, namespace: str, limit: int) -> list[DecisionRow]:
        """The newest decisions, read without counting as an access (context compilation scans them)."""
        return self._repository.newest(visible_namespaces(namespace), limit, "", "", "")

    def list_decisions(self, namespace: str, session_id: str = "", decision_type: str = "", tier: str = "",
                       limit: int = 0) -> list[DecisionRow]:
        """Decisions newest first, narrowed by session, type and tier (as it was before this read)."""
        session_id = checked_text(session_id, "session_id", self._limits.max_id_chars, required=False)
        decision_type = normalised_predicate(decision_type, "type") if decision_type.strip() else ""
        tier = _tier_filter(tier)
        if not 0 <= limit <= MAX_LIMIT:
            raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
        visible = visible_namespaces(namespace)
        now = self._clock()
        with self._db.transaction() as cursor:
            self._demote_idle(cursor, visible, now)
            rows = self._repository.newest(visible, limit or DEFAULT_LIMIT, session_id, decision_type, tier)
            return self._accessed(cursor, rows, now)

    def get_decision(self, namespace: str, decision_id: str) -> DecisionRow:
        decision_id = checked_text(decision_id, "decision_id", self._limits.max_id_chars)
        now = self._clock()
        with self._db.transaction() as cursor:
            found = self._repository.by_id(visible_namespaces(namespace), [decision_id])
            if not found:
                raise NotFound(f"no decision {decision_id!r} in namespace {namespace!r}")
            return self._accessed(cursor, found, now)[0]

    def session(self, namespace: str, session_id: str) -> SessionView:
        """The session's working memory and the summary of its decisions; empty for a session never seen."""
        session_id = checked_text(session_id, "session_id", self._limits.max_id_chars)
        return SessionView(session_id, tuple(self._sessions.working_memory(namespace, session_id)),
                           self.session_summary(namespace, session_id))

    def session_summary(self, namespace: str, session_id: str) -> SessionSummary:
        """Counts, outcomes and text over every decision logged in the session (its working memory may be gone)."""
        if not session_id.strip():
            return summarise_session([])
        return summarise_session(self._repository.in_session(namespace, session_id.strip()))

    # -- tiers -----------------------------------------------------------------

    def _demote_idle(self, cursor, namespaces: Sequence[str], now: datetime) -> None:
        moves: dict[str, list[str]] = {}
        for row in self._repository.idle_since(namespaces, now - self._rules.first_demotion):
            tier = self._rules.settled(row, now)
            if tier != row.tier:
                moves.setdefault(tier, []).append(row.id)
        for tier, ids in moves.items():
            self._repository.set_tier(cursor, ids, tier)

    def _accessed(self, cursor, rows: Sequence[DecisionRow], now: datetime) -> list[DecisionRow]:
        """Count one access to each row: settle, promote, and store it in one statement per resulting tier."""
        after: list[DecisionRow] = []
        by_tier: dict[str, list[str]] = {}
        for row in rows:
            touched = replace(row, last_accessed_at=now, access_count=row.access_count + 1)
            touched = replace(touched, tier=self._rules.accessed(self._rules.settled(row, now), touched))
            after.append(touched)
            by_tier.setdefault(touched.tier, []).append(row.id)
        for tier, ids in by_tier.items():
            self._repository.record_access(cursor, ids, now, tier)
        return after
