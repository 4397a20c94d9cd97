"""Per-namespace values loaded on first use, each load holding only its own namespace's lock."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class _Slot(Generic[T]):
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.value: T | None = None


class NamespaceSlots(Generic[T]):
    """get(namespace) loads a namespace once, and only its own callers wait for that (seconds at a million memories);
    loaded(namespace) is what is loaded, after any load in progress, or None; forget(namespace) drops it."""

    def __init__(self, load: Callable[[str], T]) -> None:
        self._load = load
        self._slots: dict[str, _Slot[T]] = {}
        self._lock = threading.Lock()  # guards the map only, never held during a load

    def get(self, namespace: str) -> T:
        with self._lock:
            slot = self._slots.setdefault(namespace, _Slot())
            if slot.value is not None:
                return slot.value
        with slot.lock:
            if slot.value is None:
                slot.value = self._load(namespace)  # a failed load leaves None: the next get loads again
            return slot.value

    def loaded(self, namespace: str) -> T | None:
        with self._lock:
            slot = self._slots.get(namespace)
        if slot is None:
            return None
        with slot.lock:  # waits for a load in progress
            return slot.value

    def items(self) -> list[tuple[str, T]]:
        """The namespaces loaded now and their values (a load in progress is left out, not waited for)."""
        with self._lock:
            return [(namespace, slot.value) for namespace, slot in self._slots.items() if slot.value is not None]

    def forget(self, namespace: str) -> None:
        """Drop the namespace; the next get loads it again (a load in progress finishes for its own callers only)."""
        with self._lock:
            self._slots.pop(namespace, None)
