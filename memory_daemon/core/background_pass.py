"""A daemon's background thread: started once, run at background priority, stopped after the round in progress."""

from __future__ import annotations

import threading
from typing import Self

from memory_daemon.core.priority import run_in_background


class BackgroundPass:
    """start() runs `_run` on a daemon thread named THREAD_NAME; stop() sets `_stopping` under `_lock` (the condition
    the pass waits on, and notifies when work arrives), wakes it and waits for `_run` to return."""

    THREAD_NAME = "cortexd-background"

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        self._thread = threading.Thread(target=self._main, name=self.THREAD_NAME, daemon=True)
        self._thread.start()
        return self

    @property
    def started(self) -> bool:
        return self._thread is not None

    def stop(self, timeout: float = 30.0) -> None:
        """Stop after the round in progress (the pass returns once it sees `_stopping`)."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    def _main(self) -> None:
        run_in_background()
        self._run()

    def _run(self) -> None:
        raise NotImplementedError
