"""Whose fact each memory states, read in the background once it is written and kept, so search finds it read."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime

from memory_daemon.core.background_pass import BackgroundPass
from memory_daemon.core.logs import log_event
from memory_daemon.store.holder_readings import HolderReadingStore, StoredReading, Unread, content_digest
from memory_daemon.store.memories import MemoryRow
from preprocessing.holders import Holders, StatementHolders

READ_CHUNK = 32  # memories read per round, and readings stored per transaction
MAX_QUEUED = 100_000  # memories waiting to be read; beyond this, search reads them when it needs them
SWEEP_PAGE = 1024  # memories the start-up sweep queues at a time, each time the queue runs empty
REMEMBERED = 65_536  # readings kept in RAM, most recently used first
FAILED_READ_PAUSE_SECONDS = 5.0
IDLE_CHECK_SECONDS = 0.5  # how often a waiting pass looks again (for the models, or for imports to go quiet)

Written = MemoryRow | Unread  # a memory to read: just written, or found by the sweep


class HolderReadings(BackgroundPass):
    """statements(rows) for search: each memory's reading (its parse's holders and the holder model's verdict) from
    RAM, else from the store, else read now and then kept.

    Memories written (saved, imported, edited) are queued and read by a background thread, so a search over them
    parses and runs nothing. Once the models have loaded, the thread also sweeps the store, newest first, for current
    memories it has no reading of (written before readings were kept, still queued at the last stop, or read by
    another reader) and reads them when nothing written waits; until then a search reads those it needs. A reading
    names its reader (the model's sha256 and threshold, and the parse rules' digest) and the digest of the text read:
    a retrained model, another threshold, new rules or an edited text are read again.
    """

    THREAD_NAME = "cortexd-holder-readings"

    def __init__(self, store: HolderReadingStore, read: Callable[[Sequence[str]], list[StatementHolders] | None],
                 reader: Callable[[], str | None], busy: Callable[[], bool] = lambda: False,
                 sweep: bool = False) -> None:
        super().__init__()
        self._store = store
        self._read = read  # texts -> their readings (None while loading, without the parser, or if it fails)
        self._reader = reader  # what reads now (None until the models have loaded)
        self._busy = busy  # whether imports want the cores: queued memories wait (a search's readings are stored)
        self._remembered: OrderedDict[str, StoredReading] = OrderedDict()
        self._queued: OrderedDict[str, Written] = OrderedDict()
        self._unstored: dict[str, StoredReading] = {}  # read by a search, for the thread to store
        self._cleaned = False
        self._sweeping = sweep  # until the sweep has paged through the store's unread memories
        self._swept_to: tuple[datetime, str] | None = None  # created_at and id of the last memory it queued
        self._unswept: int | None = None  # memories the sweep has still to queue (None: not counted yet)

    def queue(self, rows: Sequence[MemoryRow]) -> None:
        """Memories just written, to be read in the background (once the pass has started: a service used without it
        reads at search time)."""
        with self._lock:
            if not self.started:
                return
            for row in rows:
                if len(self._queued) >= MAX_QUEUED:
                    break
                self._queued[row.id] = row
                self._queued.move_to_end(row.id)
            self._lock.notify_all()

    def forget(self, ids: Sequence[str]) -> None:
        """Forgotten memories: out of RAM and the queue (the store deletes their readings with them)."""
        with self._lock:
            for memory_id in ids:
                self._remembered.pop(memory_id, None)
                self._queued.pop(memory_id, None)
                self._unstored.pop(memory_id, None)

    def pending(self) -> int:
        """Memories queued and not yet read, and those the sweep has still to queue (counted once the models load)."""
        unswept = self._unswept_count()
        with self._lock:
            return len(self._queued) + unswept

    def statements(self, rows: Sequence[MemoryRow]) -> list[StatementHolders] | None:
        """Whose fact each memory states; None until the models have loaded or without the parser."""
        reader = self._reader()
        if reader is None:
            return None
        found = self._known(rows, reader)
        unread = [row for row in rows if row.id not in found]
        if unread:
            fresh = self._read_now(unread)
            if fresh is None:
                return None
            found.update(fresh)
            with self._lock:
                if self.started:
                    self._unstored.update(fresh)
                    self._lock.notify_all()
        return [_statement(found[row.id]) for row in rows]

    def _known(self, rows: Sequence[Written], reader: str) -> dict[str, StoredReading]:
        """The readings of these memories' current texts in RAM, then in the store."""
        digests = {row.id: content_digest(row.content) for row in rows}
        with self._lock:
            found = {i: r for i in digests if (r := self._remembered.get(i)) is not None and r.digest == digests[i]}
            for memory_id in found:
                self._remembered.move_to_end(memory_id)
        missing = [i for i in digests if i not in found]
        if missing:
            stored = {i: r for i, r in self._store.read(missing, reader).items() if r.digest == digests[i]}
            found.update(stored)
            self._remember(stored)
        return found

    def _read_now(self, rows: Sequence[Written]) -> dict[str, StoredReading] | None:
        read = self._read([row.content for row in rows])
        if read is None:
            return None
        fresh = {row.id: StoredReading(content_digest(row.content), statement.holders.first_person,
                                       tuple(sorted(statement.holders.others)), statement.other)
                 for row, statement in zip(rows, read, strict=True)}
        self._remember(fresh)
        return fresh

    def _remember(self, readings: dict[str, StoredReading]) -> None:
        with self._lock:
            for memory_id, reading in readings.items():
                self._remembered[memory_id] = reading
                self._remembered.move_to_end(memory_id)
            while len(self._remembered) > REMEMBERED:
                self._remembered.popitem(last=False)

    def _run(self) -> None:
        """Until stopped, storing what searches read; what is still queued then is left unread."""
        while True:
            with self._lock:
                while not self._stopping and not self._unstored and not self._can_read():
                    self._lock.wait(IDLE_CHECK_SECONDS)
                if self._stopping and not self._unstored:
                    return
                unstored, self._unstored = self._unstored, {}
                rows = [self._queued.popitem(last=False)[1] for _ in range(min(READ_CHUNK, len(self._queued)))] \
                    if not self._stopping and self._can_read() else []
                sweep = not rows and self._sweeping and not self._stopping and self._can_read()
            try:
                self._read_and_store(rows, unstored)
                if sweep:
                    self._sweep_page()
            except Exception as error:  # noqa: BLE001 - a failed round leaves those memories for search to read
                log_event("holder_readings_failed", level=logging.WARNING, error=repr(error), memories=len(rows))
                with self._lock:
                    self._lock.wait(FAILED_READ_PAUSE_SECONDS)

    def _can_read(self) -> bool:
        """Something is queued or left to sweep, the models have loaded and no import runs (called with the lock
        held)."""
        return (bool(self._queued) or self._sweeping) and self._reader() is not None and not self._busy()

    def _read_and_store(self, rows: list[Written], unstored: dict[str, StoredReading]) -> None:
        reader = self._reader()
        if reader is None:
            return
        if not self._cleaned:
            self._store.drop_other_readers(reader)
            self._cleaned = True
        if rows:
            known = self._known(rows, reader)
            unread = [row for row in rows if row.id not in known]
            unstored = {**unstored, **((self._read_now(unread) or {}) if unread else {})}
        self._store.keep(unstored, reader)

    def _sweep_page(self) -> None:
        """Queue the next SWEEP_PAGE current memories the reader has not read, newest first (one written since is
        already queued with its text); the sweep ends with a short page."""
        reader = self._reader()
        if reader is None:
            return
        if (total := self._unswept_count()) and self._swept_to is None:
            log_event("holder_readings_sweep", memories=total)  # the first page
        page = self._store.unread(reader, self._swept_to, SWEEP_PAGE)
        with self._lock:
            for memory in page:
                self._queued.setdefault(memory.id, memory)
            self._unswept = max(0, (self._unswept or 0) - len(page))
            if len(page) < SWEEP_PAGE:
                self._sweeping, self._unswept = False, 0
            else:
                self._swept_to = (page[-1].created_at, page[-1].id)

    def _unswept_count(self) -> int:
        """The memories the sweep has still to queue: counted in the store the first time it is asked once the models
        have loaded (0 before, and once the sweep is done)."""
        if self._unswept is None and self._sweeping and (reader := self._reader()) is not None:
            total = self._store.count_unread(reader)
            with self._lock:
                if self._unswept is None and self._sweeping:
                    self._unswept = total
        return self._unswept or 0


def _statement(reading: StoredReading) -> StatementHolders:
    return StatementHolders(Holders(reading.first_person, frozenset(reading.named)), reading.other)
