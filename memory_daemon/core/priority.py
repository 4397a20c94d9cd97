"""Background threads: the OS schedules them after the threads that serve reads, and their helpers inherit that."""

from __future__ import annotations

import os
import sys
import threading

BACKGROUND_NICENESS = 10  # added to the thread's nice value: a busy reader gets ≈ 90% of a core it shares
MAX_NICENESS = 19

_thread = threading.local()


def run_in_background() -> None:
    """Lower this thread's CPU priority (Linux schedules threads one by one; elsewhere this only marks the thread)
    and mark it, so the work it hands to helper threads is run at background priority too."""
    _thread.background = True
    if sys.platform.startswith("linux"):
        thread_id = threading.get_native_id()
        try:
            niceness = os.getpriority(os.PRIO_PROCESS, thread_id)
            os.setpriority(os.PRIO_PROCESS, thread_id, min(MAX_NICENESS, niceness + BACKGROUND_NICENESS))
        except OSError:  # not permitted here: the lanes still keep reads from queueing behind writes
            pass


def in_background() -> bool:
    return getattr(_thread, "background", False)
