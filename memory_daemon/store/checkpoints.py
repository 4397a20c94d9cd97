"""Folds the write-ahead log into the DuckDB file while the daemon serves: after enough WAL or writes, and when idle."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import duckdb

from memory_daemon.core.config import StoreSettings
from memory_daemon.core.logs import log_event
from memory_daemon.store.database import Database, unwritable_reason

POLL_SECONDS = 0.5
# A read that began before the last commit holds that commit's cleanup, and with it the checkpoint; reads take
# milliseconds, so a few short waits outlast it.
ATTEMPTS = 20
ATTEMPT_PAUSE_SECONDS = 0.05


class WalCheckpointer:
    """One thread that checkpoints between writes, only while the data dir is writable (a checkpoint that fails
    midway invalidates the open database), and reports an invalidated store through `on_store_lost`."""

    def __init__(self, database: Database, settings: StoreSettings,
                 on_store_lost: Callable[[str], None] = lambda message: None) -> None:
        self._database = database
        self._wal_bytes = int(settings.checkpoint_wal_mib * 1024 * 1024)
        self._writes = settings.checkpoint_writes
        self._idle_seconds = settings.checkpoint_idle_seconds
        self._on_store_lost = on_store_lost
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cortexd-checkpoint", daemon=True)
        self._deferred = False

    def start(self) -> "WalCheckpointer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()

    def _trigger(self, wal_bytes: int, writes_since: int, idle_seconds: float) -> str | None:
        if wal_bytes >= self._wal_bytes:
            return "wal_bytes"
        if writes_since >= self._writes:
            return "writes"
        # What a SIGKILL left (replayed at open) or the last writes; once folded in, the WAL is gone.
        if wal_bytes > 0 and idle_seconds >= self._idle_seconds:
            return "idle"
        return None

    def _run(self) -> None:
        database = self._database
        writes_at_checkpoint = last_write_count = database.write_count
        last_write_seen = time.monotonic()
        paused_because: str | None = None  # said once when checkpoints pause, and once when they resume
        while not self._stopping.wait(POLL_SECONDS):
            writes, now = database.write_count, time.monotonic()
            if writes != last_write_count:
                last_write_count, last_write_seen = writes, now
            wal_bytes = database.wal_bytes()
            trigger = self._trigger(wal_bytes, writes - writes_at_checkpoint, now - last_write_seen)
            if trigger is None:
                continue
            if (reason := unwritable_reason(database.path.parent)) is not None:
                if paused_because is None:
                    log_event("checkpoints_paused", logging.WARNING, data_dir=str(database.path.parent), reason=reason,
                              wal_bytes=wal_bytes, note="the WAL keeps every write; checkpoints resume once the data "
                                                        "dir is writable")
                paused_because = reason
                continue
            if paused_because is not None:
                log_event("checkpoints_resumed", data_dir=str(database.path.parent))
                paused_because = None
            try:
                if self._checkpoint(trigger, wal_bytes, writes - writes_at_checkpoint):
                    writes_at_checkpoint = writes
            except duckdb.FatalException as error:
                self._on_store_lost(f"the store {database.path} was invalidated by a failed checkpoint ({error}); "
                                    "its WAL keeps every acknowledged write and is replayed at the next start")
                return
            except Exception as error:  # noqa: BLE001 — the thread must outlive any one failed checkpoint
                log_event("checkpoint_failed", logging.WARNING, trigger=trigger, error=f"{type(error).__name__}: {error}")

    def _checkpoint(self, trigger: str, wal_bytes: int, writes: int) -> bool:
        started = time.perf_counter()
        for attempt in range(1, ATTEMPTS + 1):
            try:
                self._database.checkpoint()
            except duckdb.TransactionException:
                # A read older than the last commit is still running: wait outside the write lock, so writes go on.
                if self._stopping.wait(ATTEMPT_PAUSE_SECONDS):
                    return False
                continue
            self._deferred = False
            log_event("checkpoint", trigger=trigger, wal_bytes=wal_bytes, writes=writes, attempts=attempt,
                      ms=round((time.perf_counter() - started) * 1000, 1))
            return True
        if not self._deferred:  # said once until a checkpoint succeeds
            log_event("checkpoint_deferred", trigger=trigger, wal_bytes=wal_bytes, attempts=ATTEMPTS,
                      note="reads older than the last commit kept running; trying again at the next poll")
        self._deferred = True
        return False
