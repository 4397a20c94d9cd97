"""The single-daemon guarantee: an exclusive lock file per data dir and per socket, naming the holder."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path


class AlreadyRunning(Exception):
    """Another daemon holds the lock; the message names it."""


class DaemonLock:
    """Held for the daemon's lifetime; the kernel releases it if the process dies."""

    def __init__(self, path: Path, handle) -> None:
        self.path = path
        self._handle = handle

    @classmethod
    def acquire(cls, path: Path, what: str, address: str) -> "DaemonLock":
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        handle = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o600), "r+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = _holder(handle.read())
            handle.close()
            raise AlreadyRunning(
                f"another cortexd daemon (pid {holder.get('pid', '?')}, listening on {holder.get('address', '?')}) "
                f"already owns {what}; stop it first (kill {holder.get('pid', '<pid>')}) or use another --data-dir/--listen"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "address": address}))
        handle.flush()
        return cls(path, handle)

    def release(self) -> None:
        try:
            self._handle.seek(0)
            self._handle.truncate()
        finally:
            fcntl.flock(self._handle, fcntl.LOCK_UN)
            self._handle.close()


def _holder(text: str) -> dict:
    try:
        return json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {}
