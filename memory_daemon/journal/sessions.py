"""Sessions: each session's working memory (its last decisions and notes, in daemon RAM) and its summary."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memory_daemon.store.decisions import DecisionRow
from preprocessing.context import ConversationContext

WORKING_ITEMS = 5
DEFAULT_IDLE_SECONDS = 2 * 3600
DEFAULT_MAX_SESSIONS = 1000
MAX_ITEM_CHARS = 200
SUMMARY_TYPES = 5  # per-type lines in a summary's text
SUMMARY_CHOICES = 5  # latest key choices named in a summary's text


@dataclass(frozen=True)
class WorkingItem:
    kind: str  # decision or note
    id: str
    text: str
    at: datetime


@dataclass(frozen=True)
class SessionSummary:
    decisions: int
    decisions_by_type: dict[str, int]
    outcomes_recorded: int
    successes: int
    # Share of recorded outcomes that succeeded; 0 when none were recorded.
    success_rate: float
    # A few lines of text; empty when the session logged no decisions.
    text: str


@dataclass(frozen=True)
class SessionView:
    session_id: str
    working_memory: tuple[WorkingItem, ...]
    summary: SessionSummary


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_ITEM_CHARS else text[: MAX_ITEM_CHARS - 1] + "…"


class SessionMemory:
    """Working memory per (namespace, session): the newest items first, thread-safe, pruned when idle.

    The ring buffers are preprocessing's ConversationContext, which already bounds sessions, evicts the least
    recently used and prunes idle ones; reading a session's working memory counts as activity.
    """

    def __init__(self, size: int = WORKING_ITEMS, idle_seconds: float = DEFAULT_IDLE_SECONDS,
                 max_sessions: int = DEFAULT_MAX_SESSIONS, clock: Callable[[], float] = time.monotonic) -> None:
        if size < 1:
            raise ValueError("size must be >= 1")
        self.size = size
        # Twice the size, so an item added again (a merged memory) still leaves `size` distinct ones.
        self._buffers = ConversationContext(window=2 * size, idle_seconds=idle_seconds, max_sessions=max_sessions,
                                            clock=clock)

    def add_decision(self, namespace: str, session_id: str, decision_id: str, text: str, at: datetime) -> None:
        self._add(namespace, session_id, WorkingItem("decision", decision_id, _one_line(text), at))

    def add_note(self, namespace: str, session_id: str, memory_id: str, text: str, at: datetime) -> None:
        """A memory saved in the session; a no-op without a session id."""
        self._add(namespace, session_id, WorkingItem("note", memory_id, _one_line(text), at))

    def drop(self, ids: Iterable[str]) -> None:
        """Forget the items of memories or decisions that no longer exist."""
        gone = set(ids)
        if gone:
            self._buffers.remove(lambda item: item.id in gone)

    def working_memory(self, namespace: str, session_id: str) -> list[WorkingItem]:
        """The session's last `size` items, newest first; [] for an unknown or idle-pruned session."""
        if not session_id:
            return []
        newest: dict[tuple[str, str], WorkingItem] = {}
        for item in reversed(self._buffers.recent(_key(namespace, session_id))):
            newest.setdefault((item.kind, item.id), item)
        return list(newest.values())[: self.size]

    def __len__(self) -> int:
        return len(self._buffers)

    def _add(self, namespace: str, session_id: str, item: WorkingItem) -> None:
        if session_id:
            self._buffers.add(_key(namespace, session_id), item)


def _key(namespace: str, session_id: str) -> str:
    # Namespaces never contain a unit separator (memories.checked_namespace), so keys cannot collide.
    return f"{namespace}\x1f{session_id}"


def summarise_session(decisions: Sequence[DecisionRow]) -> SessionSummary:
    """Counts per type, outcomes and success rate of a session's decisions (newest first), and a few lines of text."""
    if not decisions:
        return SessionSummary(0, {}, 0, 0, 0.0, "")
    by_type = dict(sorted(Counter(d.type for d in decisions).items(), key=lambda kv: (-kv[1], kv[0])))
    recorded = [d for d in decisions if d.has_outcome]
    successes = sum(1 for d in recorded if d.was_successful)
    rate = successes / len(recorded) if recorded else 0.0

    head = f"{_count(len(decisions), 'decision')} ({', '.join(f'{t} {n}' for t, n in by_type.items())})"
    head += (f"; {_count(len(recorded), 'outcome')} recorded, {rate:.0%} successful."
             if recorded else "; no outcomes recorded yet.")
    lines = [head]
    # One type's figures are the head line's; several types get a line each.
    for decision_type, count in list(by_type.items())[:SUMMARY_TYPES] if len(by_type) > 1 else ():
        typed = [d for d in recorded if d.type == decision_type]
        won = sum(1 for d in typed if d.was_successful)
        lines.append(f"- {decision_type}: {_count(count, 'decision')}, "
                     + (f"{won} of {len(typed)} outcomes successful ({won / len(typed):.0%})" if typed
                        else "no outcomes yet"))
    choices = list(dict.fromkeys(d.key_choice for d in decisions))[:SUMMARY_CHOICES]
    lines.append(f"Latest choices: {', '.join(choices)}.")
    return SessionSummary(len(decisions), by_type, len(recorded), successes, rate, "\n".join(lines))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
