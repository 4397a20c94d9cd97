"""Hands the heap pages a bulk load freed back to the OS (glibc keeps them otherwise)."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import cache


@cache
def _libc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return libc if hasattr(libc, "malloc_trim") else None  # musl has none
    except OSError:
        return None


def release_freed_memory() -> None:
    """malloc_trim(0) after a load that built many objects and dropped its transient ones (the rows a namespace's
    indexes and row cache were read from): the daemon's RSS then shows what it holds, not what it once read."""
    libc = _libc()
    if libc is not None:
        libc.malloc_trim(0)
