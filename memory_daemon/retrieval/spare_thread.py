"""One spare thread that runs a search's dense signal while the caller scores its words; a busy one is not waited on."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

from memory_daemon.core.priority import in_background

T = TypeVar("T")


class SpareThread:
    """Takes a job only when idle, and only from a thread at the reads' priority (its own thread inherits the priority
    of the one that starts it); otherwise submit() returns None and the caller runs the job itself. On two cores a
    search embeds its query and walks the vector graph on the second core while the first scores BM25."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[tuple[Callable[[], object], Future]] = queue.SimpleQueue()
        self._idle = threading.Semaphore(1)
        self._start_lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def submit(self, job: Callable[[], T]) -> Future[T] | None:
        if in_background() or not self._idle.acquire(blocking=False):
            return None
        with self._start_lock:
            if self._thread is None:  # started by a reader, so at the readers' priority
                self._thread = threading.Thread(target=self._serve, name=self._name, daemon=True)
                self._thread.start()
        future: Future[T] = Future()
        self._jobs.put((job, future))
        return future

    def _serve(self) -> None:
        while True:
            job, future = self._jobs.get()
            try:
                result, error = job(), None
            except BaseException as raised:  # the caller's result() raises it
                result, error = None, raised
            self._idle.release()  # before the caller wakes, so its next search finds this thread free
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)
