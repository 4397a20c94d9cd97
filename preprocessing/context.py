"""Conversation context: the last few messages per session, so a reply can be read against what came before."""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass


# A short reply that leans on the previous turn ("yes, let's go with that", "the first one", "moved it to Thursdays").
_LEANS_ON_CONTEXT = re.compile(
    r"^\W*(yes|yeah|yep|ok(ay)?|sure|agreed|sounds good|do it|go with|let'?s (go|do|use|pick)|the (first|second|latter|former)|"
    r"that one|this one)\b|\b(that|it|this|those|them|the latter|the former)\b",
    re.IGNORECASE,
)
# Pronouns that point back to something named earlier, for updates that do not repeat their subject.
_POINTS_BACK = re.compile(r"\b(it|it's|its|they|they're|them|their|there|that|this|those|he|she|his|her)\b", re.I)
# A change whose object is a pronoun: "pushed it to 10 June", "we'll move it to Postgres", "so it becomes 14 days".
_CHANGES_UNNAMED = re.compile(
    r"\b(?:mov|push|shift|chang|switch|migrat|rais|lower|bump|reduc|reschedul|postpon|cut|increas|decreas)\w* "
    r"(?:it|that|this|them) (?:to|back|up|down|out|until|from)\b|\b(?:it|that|this) (?:becomes|became|is now)\b",
    re.IGNORECASE,
)
# "that" after these introduces a clause ("remember that the staging DB is db-stg-2"); it points at nothing.
_COMPLEMENTIZER = re.compile(
    r"\b(?:remember|note|noted|keep in mind|know|knew|think|thought|say|said|says|tell|told|believe|sure|mean|means"
    r"|seems?|guess|hope|realized?|realised?|notice|noticed|assume|agree|found|learned|learnt|turns out|so|such|given"
    r"|ensure|decided|understand|heard|read|fact|idea|reminder)\s+that\b(?!\s+ones?\b)(?!\s*(?:[.,!?;:]|$))",
    re.IGNORECASE,
)
# A statement that starts with a pronoun subject, or with its verb and has a pronoun object ("she moved it to
# Wednesdays", "bumped it to 2.0 this week"): what it is about was named before it. A past-tense verb first is a
# left-out "I" or "we"; with a named object ("replaced Celery with Dramatiq") it names what it changes.
_SUBJECT_PRONOUNS = frozenset(("it", "it's", "its", "they", "they're", "she", "he", "she's", "he's", "that", "this",
                               "these", "those", "that's"))
_PAST_VERB = re.compile(r"^[a-z]{2,}(?<!e)ed$|^(?:went|got|made|took|put|set|cut|bought|sold|gave|swapped|"
                        r"upped|ran|began|left|kept|brought|sent|spent|paid|told)$", re.IGNORECASE)
_OBJECT_PRONOUNS = frozenset(("it", "that", "this", "them", "those", "these", "her", "him"))
MAX_LEANING_WORDS = 12
MAX_POINTING_WORDS = 30


def leans_on_context(message: str) -> bool:
    """A short message that only makes sense with what was said before it."""
    return len(message.split()) <= MAX_LEANING_WORDS and bool(_LEANS_ON_CONTEXT.search(_COMPLEMENTIZER.sub(" ", message)))


def names_no_subject(message: str) -> bool:
    """A statement of up to 30 words whose subject is a pronoun, or left out before a pronoun object, so it leans on
    what was named before it ("she moved it to Wednesdays", "scaled it to five after the load test")."""
    words = message.split()
    if not words or len(words) > MAX_POINTING_WORDS:
        return False
    first, *rest = [w.strip("\"'()[]:;,.!?").lower() for w in words]
    return first in _SUBJECT_PRONOUNS or bool(_PAST_VERB.match(first)) and bool(_OBJECT_PRONOUNS.intersection(rest))


def points_back(message: str) -> bool:
    """A message of up to 30 words that refers to something by pronoun ("they're closed, so ... instead")."""
    return len(message.split()) <= MAX_POINTING_WORDS and bool(_POINTS_BACK.search(_COMPLEMENTIZER.sub(" ", message)))


def changes_unnamed_subject(message: str) -> bool:
    """A message that changes something it names only by pronoun ("moved it to Thursdays")."""
    return len(message.split()) <= MAX_POINTING_WORDS and bool(_CHANGES_UNNAMED.search(message))


@dataclass
class _Session:
    turns: deque[str]
    last_seen: float = 0.0


class ConversationContext:
    """Per-session ring buffers, thread-safe, bounded in sessions and pruned when idle."""

    def __init__(
        self,
        window: int = 10,
        idle_seconds: float = 3600,
        max_sessions: int = 1000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if window < 1:
            raise ValueError("window must be >= 1")
        if max_sessions < 1:
            raise ValueError("max_sessions must be >= 1")
        if idle_seconds <= 0:
            raise ValueError("idle_seconds must be > 0")
        self.window = window
        self.idle_seconds = idle_seconds
        self.max_sessions = max_sessions
        self._clock = clock
        # Least recently used first: every touch moves a session to the end, so both
        # idle pruning and LRU eviction only ever look at the front.
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, session_id: str, text: str) -> None:
        with self._lock:
            now = self._clock()
            self._prune(now)
            session = self._sessions.get(session_id)
            if session is None:
                session = self._sessions[session_id] = _Session(deque(maxlen=self.window))
            session.turns.append(text)
            self._touch(session_id, session, now)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)

    def recent(self, session_id: str) -> tuple[str, ...]:
        """The session's last `window` messages, oldest first; () for an unknown or expired session."""
        with self._lock:
            now = self._clock()
            self._prune(now)
            session = self._sessions.get(session_id)
            if session is None:
                return ()
            self._touch(session_id, session, now)
            return tuple(session.turns)

    def remove(self, unwanted: Callable[[object], bool]) -> int:
        """Drop every kept item, in every session, for which `unwanted` is true; returns how many went."""
        removed = 0
        with self._lock:
            for session in self._sessions.values():
                kept = [item for item in session.turns if not unwanted(item)]
                removed += len(session.turns) - len(kept)
                session.turns.clear()
                session.turns.extend(kept)
        return removed

    def clear(self, session_id: str) -> None:
        with self._lock:
            self._sessions.pop(session_id, None)

    def __len__(self) -> int:
        with self._lock:
            self._prune(self._clock())
            return len(self._sessions)

    def _touch(self, session_id: str, session: _Session, now: float) -> None:
        session.last_seen = now
        self._sessions.move_to_end(session_id)

    def _prune(self, now: float) -> None:
        # Front-first works because last_seen never decreases along the order.
        while self._sessions:
            session = next(iter(self._sessions.values()))
            if now - session.last_seen <= self.idle_seconds:
                break
            self._sessions.popitem(last=False)
