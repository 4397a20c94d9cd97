"""A call's deadline where its work runs: a write that could not be stored and answered in time is not stored at all."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

from memory_daemon.core.errors import DeadlineExceeded
from memory_daemon.core.logs import log_event

# Kept free at the commit: the commit itself (an fsync, ≈ 4 ms here, more under load), the writes that complete the
# call after it (a save's facts and supersessions) and the reply's way back.
COMMIT_RESERVE_SECONDS = 0.05

T = TypeVar("T")
_current: ContextVar["Deadline | None"] = ContextVar("cortexd_deadline", default=None)


class Deadline:
    """When the caller stops waiting for one call, and whether the call has stored anything yet.

    Until its first write, a call whose deadline is (nearly) gone stops and stores nothing, and says so with
    DEADLINE_EXCEEDED. From its first write on, it finishes: stopping half-way would leave part of it stored.
    """

    def __init__(self, method: str, seconds_left: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.method = method
        self._clock = clock
        self._expires_at = clock() + seconds_left
        self._stored = False

    def seconds_left(self) -> float:
        return self._expires_at - self._clock()

    def run(self, work: Callable[[], T]) -> T:
        """work() with this deadline in force in this thread; work whose caller has already gone is not started."""
        self._refuse_if_late("before it started", 0.0)
        token = _current.set(self)
        try:
            return work()
        finally:
            _current.reset(token)

    def before_write(self) -> None:
        """Called by the store just before a write commits."""
        if not self._stored:
            self._refuse_if_late("before anything was stored", COMMIT_RESERVE_SECONDS)

    def stored(self) -> None:
        """Called by the store once a write has committed: the call now runs to its end."""
        self._stored = True

    def _refuse_if_late(self, stage: str, reserve: float) -> None:
        left = self.seconds_left()
        if left >= reserve:
            return
        log_event("deadline_exceeded", logging.WARNING, method=self.method, stage=stage,
                  ms_left=round(left * 1000, 1))
        raise DeadlineExceeded(f"{self.method}: the caller's deadline ran out {stage} ({left * 1000:.0f} ms left, "
                               f"{reserve * 1000:.0f} ms needed to store and answer); nothing was stored: send it "
                               "again with a longer deadline")


def current_deadline() -> Deadline | None:
    """The deadline of the call this thread is serving, if any (Deadline.run sets it)."""
    return _current.get()
