"""Saves the namespaces' vector graphs every so often in a thread of its own, and once more when stopped."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from memory_daemon.core.logs import log_event


class PeriodicSave:
    """Calls `save` every `seconds` and once at stop(); a failing save is logged, and the next one tries again."""

    def __init__(self, save: Callable[[], int], seconds: float) -> None:
        self._save = save
        self._seconds = seconds
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cortexd-index-save", daemon=True)

    def start(self) -> PeriodicSave:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()
        self._save_once()

    def _run(self) -> None:
        while not self._stopping.wait(self._seconds):
            self._save_once()

    def _save_once(self) -> None:
        try:
            saved = self._save()
        except Exception as error:  # noqa: BLE001 - the graphs stay in RAM; the store is untouched
            log_event("vector_index_save_failed", level=logging.ERROR, detail=f"{type(error).__name__}: {error}")
            return
        if saved:
            log_event("vector_indexes_saved", namespaces=saved)
