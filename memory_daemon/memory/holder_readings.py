"""The holder model's reading of each memory, made in the background once it is written and kept, so search finds it."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence

from memory_daemon.core.logs import log_event
from memory_daemon.core.background_pass import BackgroundPass
from memory_daemon.store.holder_readings import HolderReadingStore, content_digest
from memory_daemon.store.memories import MemoryRow

READ_CHUNK = 32  # memories read per model call, and readings stored per transaction
MAX_QUEUED = 100_000  # memories waiting to be read; beyond this, search reads them when it needs them
REMEMBERED = 65_536  # readings kept in RAM, most recently used first
FAILED_READ_PAUSE_SECONDS = 5.0

Reading = tuple[str, bool]  # (digest of the text read, whether it states another's own fact)


class HolderReadings(BackgroundPass):
    """others(rows) for search: each memory's reading from RAM, else from the store, else read now (and then kept).

    Memories written (saved, imported, edited) are queued and read by a background thread, 32 to a model call, so a
    search over them reads nothing. What is still queued at a stop is read when a search first needs it. Readings
    carry the model's sha256 and the digest of the text read: a retrained model or an edited text is read again.
    """

    THREAD_NAME = "cortexd-holder-readings"

    def __init__(self, store: HolderReadingStore, read: Callable[[Sequence[str]], list[bool] | None],
                 model: Callable[[], str | None], ready: Callable[[], bool]) -> None:
        super().__init__()
        self._store = store
        self._read = read  # the holder model over texts (None while loading, without the model, or if it fails)
        self._model = model  # the loaded holder model's sha256, or None without one
        self._ready = ready  # whether the models have loaded
        self._remembered: OrderedDict[str, Reading] = OrderedDict()
        self._queued: OrderedDict[str, MemoryRow] = OrderedDict()
        self._unstored: dict[str, Reading] = {}  # read by a search, for the thread to store
        self._cleaned = False

    def queue(self, rows: Sequence[MemoryRow]) -> None:
        """Memories just written, to be read in the background."""
        with self._lock:
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

    def others(self, rows: Sequence[MemoryRow]) -> list[bool] | None:
        """Whether each memory states another person's or group's own fact; None without the model."""
        model = self._model() if self._ready() else None
        if model is None:
            return None
        digests = {row.id: content_digest(row.content) for row in rows}
        found = self._known([row.id for row in rows], digests, model)
        unread = [row for row in rows if row.id not in found]
        if unread:
            read = self._read([row.content for row in unread])
            if read is None:
                return None
            fresh = {row.id: (digests[row.id], other) for row, other in zip(unread, read, strict=True)}
            found.update(fresh)
            with self._lock:
                self._unstored.update(fresh)
                self._remember(fresh)
                self._lock.notify_all()
        return [found[row.id][1] for row in rows]

    def _known(self, ids: Sequence[str], digests: dict[str, str], model: str) -> dict[str, Reading]:
        """The readings of these memories' current texts in RAM, then in the store."""
        with self._lock:
            found = {i: r for i in ids if (r := self._remembered.get(i)) is not None and r[0] == digests[i]}
            for memory_id in found:
                self._remembered.move_to_end(memory_id)
        missing = [i for i in ids if i not in found]
        if missing:
            stored = {i: r for i, r in self._store.read(missing, model).items() if r[0] == digests[i]}
            found.update(stored)
            with self._lock:
                self._remember(stored)
        return found

    def _remember(self, readings: dict[str, Reading]) -> None:
        """Called with the lock held."""
        for memory_id, reading in readings.items():
            self._remembered[memory_id] = reading
            self._remembered.move_to_end(memory_id)
        while len(self._remembered) > REMEMBERED:
            self._remembered.popitem(last=False)

    def _run(self) -> None:
        """Until stopped, storing what searches read; what is still queued then is left unread."""
        while True:
            with self._lock:
                while not self._stopping and not self._unstored and not (self._queued and self._ready()):
                    self._lock.wait(1.0)
                if self._stopping and not self._unstored:
                    return
                unstored, self._unstored = self._unstored, {}
                rows = [self._queued.popitem(last=False)[1] for _ in range(min(READ_CHUNK, len(self._queued)))] \
                    if self._ready() and not self._stopping else []
            try:
                self._read_and_store(rows, unstored)
            except Exception as error:  # noqa: BLE001 - a failed chunk leaves those memories for search to read
                log_event("holder_readings_failed", level=logging.WARNING, error=repr(error), memories=len(rows))
                with self._lock:
                    self._lock.wait(FAILED_READ_PAUSE_SECONDS)

    def _read_and_store(self, rows: list[MemoryRow], unstored: dict[str, Reading]) -> None:
        model = self._model()
        if model is None:  # no holder model after the load: nothing to read with
            return
        if not self._cleaned:
            self._store.drop_other_models(model)
            self._cleaned = True
        if rows:
            digests = {row.id: content_digest(row.content) for row in rows}
            known = self._known([row.id for row in rows], digests, model)
            unread = [row for row in rows if row.id not in known]
            read = self._read([row.content for row in unread]) if unread else []
            if read is not None:
                fresh = {row.id: (digests[row.id], other) for row, other in zip(unread, read, strict=True)}
                unstored = {**unstored, **fresh}
                with self._lock:
                    self._remember(fresh)
        self._store.keep(unstored, model)
