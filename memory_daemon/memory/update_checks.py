"""The background pass that reads imported statements against what came before them, off the import's path."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from memory_daemon.core.logs import log_event
from memory_daemon.core.background_pass import BackgroundPass
from memory_daemon.core.timefmt import utc_now
from memory_daemon.store.memories import MemoryRow
from memory_daemon.store.update_checks import UpdateCheckQueue

CHECK_CHUNK = 32  # statements checked per round: a round's findings are stored in one transaction
ROUNDS_PER_READ = 8  # rounds taken from one read of the queue (each read sorts what is queued)
IMPORT_QUIET_SECONDS = 0.5  # the pass waits this long after the last import batch, so imports keep the cores
FAILED_ROUND_PAUSE_SECONDS = 5.0


class UpdateCheckPass(BackgroundPass):
    """Owns the queue's in-RAM copy and the thread that drains it, oldest statement first.

    An import stores its records and indexes their words at once, and queues each statement here; the pass then reads
    it with the relation model against the namespace's memories, as the import used to inline, records the updates
    found, and adds the statement to the vector index. Until then a statement is not found by meaning, and it and what
    it replaces are both current. Statements still queued are not in the vector index, so every statement is read
    only against what came before it, as it would have been inline.
    """

    THREAD_NAME = "cortexd-update-checks"

    def __init__(self, queue: UpdateCheckQueue, check: Callable[[list[MemoryRow], list[str]], None],
                 ready: Callable[[], bool]) -> None:
        super().__init__()
        self._queue = queue
        self._check = check  # reads a round's statements and stores what it found, taking them off the queue
        self._ready = ready  # whether the models have loaded
        self._pending = queue.pending()
        self._importing = 0
        self._imports_started = 0
        self._last_import = 0.0

    @contextmanager
    def importing(self) -> Iterator[None]:
        """Held by an import while it runs: the pass waits until imports have been quiet for a moment."""
        with self._lock:
            self._importing += 1
            self._imports_started += 1
        try:
            yield
        finally:
            with self._lock:
                self._importing -= 1
                self._last_import = time.monotonic()
                self._lock.notify_all()

    def queue(self, rows: Sequence[MemoryRow]) -> None:
        """Mark rows as waiting before they are stored (so no round reads a later statement as earlier)."""
        with self._lock:
            for row in rows:
                self._pending.setdefault(row.namespace, set()).add(row.id)

    def unqueue(self, rows: Sequence[MemoryRow]) -> None:
        """Rows queued whose insert failed."""
        failed: dict[str, list[str]] = {}
        for row in rows:
            failed.setdefault(row.namespace, []).append(row.id)
        self._settled(failed)

    def busy(self) -> bool:
        """Whether an import runs, ended under IMPORT_QUIET_SECONDS ago, or left statements to check: other
        background work (the holder readings) waits for the imports and for this pass."""
        with self._lock:
            return bool(self._importing) or time.monotonic() - self._last_import < IMPORT_QUIET_SECONDS \
                or any(self._pending.values())

    def waiting(self, namespace: str, memory_id: str) -> bool:
        """Whether the memory's own check has not run yet."""
        with self._lock:
            return memory_id in self._pending.get(namespace, ())

    def counts(self) -> dict[str, int]:
        """Namespace -> statements waiting for their check, for those that have any."""
        with self._lock:
            return {namespace: len(ids) for namespace, ids in sorted(self._pending.items()) if ids}

    def wait_until_done(self, timeout: float) -> bool:
        """Block until nothing is queued (True) or `timeout` seconds pass (False)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while any(self._pending.values()):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
            return True

    def _settled(self, checked: dict[str, list[str]]) -> None:
        with self._lock:
            for namespace, ids in checked.items():
                waiting = self._pending.get(namespace)
                if waiting is not None:
                    waiting.difference_update(ids)
                    if not waiting:
                        del self._pending[namespace]
            self._lock.notify_all()

    def _wait_for_work(self) -> bool:
        """Until something is queued, the models are loaded and imports are quiet; False once stopping."""
        with self._lock:
            while not self._stopping:
                quiet_for = time.monotonic() - self._last_import
                if self._pending and not self._importing and quiet_for >= IMPORT_QUIET_SECONDS and self._ready():
                    return True
                self._lock.wait(max(IMPORT_QUIET_SECONDS - quiet_for, 0.1) if self._pending else None)
            return False

    def _run(self) -> None:
        """Until stopped; what is still queued then stays in the store for the next start."""
        while self._wait_for_work():
            try:
                rows, gone = self._queue.next_rows(CHECK_CHUNK * ROUNDS_PER_READ)
            except Exception as error:  # noqa: BLE001 - the store failed; the next round tries again
                self._failed(error)
                continue
            if not rows and not gone:
                self._reread_queue()
                continue
            if gone:
                self._round([], gone)
            for start in range(0, len(rows), CHECK_CHUNK):
                if self._stopping or not self._round(rows[start: start + CHECK_CHUNK], []):
                    break

    def _round(self, rows: list[MemoryRow], gone: list[str]) -> bool:
        """Check these statements; if the round fails, each on its own, and one that still fails is left unchecked
        (current, as if no check had run) and logged, so it cannot hold up the queue. False if the store failed."""
        try:
            self._check(rows, gone)
        except Exception as error:  # noqa: BLE001 - retried statement by statement below
            if len(rows) <= 1:
                log_event("update_check_skipped", level=logging.ERROR, memory_ids=[r.id for r in rows] + gone,
                          detail=f"{type(error).__name__}: {error}")
                try:
                    self._queue.finish([r.id for r in rows] + gone, [], [], utc_now())
                except Exception as store_error:  # noqa: BLE001 - the store failed; the next round tries again
                    self._failed(store_error)
                    return False
            elif not all(self._round([row], []) for row in rows):
                return False
        checked: dict[str, list[str]] = {}
        for row in rows:
            checked.setdefault(row.namespace, []).append(row.id)
        with self._lock:
            for namespace, ids in self._pending.items():
                checked.setdefault(namespace, []).extend(m for m in gone if m in ids)
        self._settled(checked)
        return True

    def _failed(self, error: Exception) -> None:
        log_event("update_check_failed", level=logging.ERROR, detail=f"{type(error).__name__}: {error}")
        with self._lock:
            self._lock.wait(FAILED_ROUND_PAUSE_SECONDS)

    def _reread_queue(self) -> None:
        """Queued in RAM but not in the store: an insert in flight (wait for it), or, once no import runs, ids
        that never reached the store (the RAM copy is read again from the queue table)."""
        with self._lock:
            if self._importing:
                self._lock.wait(0.05)
                return
            imports_before = self._imports_started
        pending = self._queue.pending()
        with self._lock:
            if self._imports_started == imports_before:  # no import began meanwhile
                self._pending = pending
                self._lock.notify_all()
