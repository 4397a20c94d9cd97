"""Whose fact each memory states, read in the background once it is written and kept, so search finds it read."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence

from memory_daemon.core.background_pass import BackgroundPass
from memory_daemon.core.logs import log_event
from memory_daemon.store.holder_readings import HolderReadingStore, StoredReading, content_digest
from memory_daemon.store.memories import MemoryRow
from preprocessing.holders import Holders, StatementHolders

READ_CHUNK = 32  # memories read per round, and readings stored per transaction
MAX_QUEUED = 100_000  # memories waiting to be read; beyond this, search reads them when it needs them
REMEMBERED = 65_536  # readings kept in RAM, most recently used first
FAILED_READ_PAUSE_SECONDS = 5.0
IDLE_CHECK_SECONDS = 0.5  # how often a waiting pass looks again (for the models, or for imports to go quiet)


class HolderReadings(BackgroundPass):
    """statements(rows) for search: each memory's reading (its parse's holders and the holder model's verdict) from
    RAM, else from the store, else read now and then kept.

    Memories written (saved, imported, edited) are queued and read by a background thread, so a search over them
    parses and runs nothing. What is still queued at a stop is read when a search first needs it. A reading names its
    reader (the model's sha256 and threshold, and the parse rules' digest) and the digest of the text read: a
    retrained model, another threshold, new rules or an edited text are read again.
    """

    THREAD_NAME = "cortexd-holder-readings"

    def __init__(self, store: HolderReadingStore, read: Callable[[Sequence[str]], list[StatementHolders] | None],
                 reader: Callable[[], str | None], busy: Callable[[], bool] = lambda: False) -> None:
        super().__init__()
        self._store = store
        self._read = read  # texts -> their readings (None while loading, without the parser, or if it fails)
        self._reader = reader  # what reads now (None until the models have loaded)
        self._busy = busy  # whether imports want the cores: queued memories wait (a search's readings are stored)
        self._remembered: OrderedDict[str, StoredReading] = OrderedDict()
        self._queued: OrderedDict[str, MemoryRow] = OrderedDict()
        self._unstored: dict[str, StoredReading] = {}  # read by a search, for the thread to store
        self._cleaned = False

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
        """Memories queued and not yet read."""
        with self._lock:
            return len(self._queued)

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

    def _known(self, rows: Sequence[MemoryRow], reader: str) -> dict[str, StoredReading]:
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

    def _read_now(self, rows: Sequence[MemoryRow]) -> dict[str, StoredReading] | None:
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
            try:
                self._read_and_store(rows, unstored)
            except Exception as error:  # noqa: BLE001 - a failed round leaves those memories for search to read
                log_event("holder_readings_failed", level=logging.WARNING, error=repr(error), memories=len(rows))
                with self._lock:
                    self._lock.wait(FAILED_READ_PAUSE_SECONDS)

    def _can_read(self) -> bool:
        """Something is queued, the models have loaded and no import runs (called with the lock held)."""
        return bool(self._queued) and self._reader() is not None and not self._busy()

    def _read_and_store(self, rows: list[MemoryRow], unstored: dict[str, StoredReading]) -> None:
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


def _statement(reading: StoredReading) -> StatementHolders:
    return StatementHolders(Holders(reading.first_person, frozenset(reading.named)), reading.other)
