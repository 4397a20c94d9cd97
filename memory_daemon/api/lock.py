"""The single-daemon guarantee: an exclusive lock file per data dir and per socket, naming the holder."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

# The holder takes the lock, then writes who it is: a daemon started in the same instant can find the lock held and
# the file still empty. It rereads for up to this long, so its message (which a racing proxy reads to decide whether
# the winner is its own daemon) names the holder instead of "pid ?, listening on ?".
HOLDER_WRITE_WAIT_SECONDS = 1.0


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
            holder = _holder_once_written(handle)
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


def _holder_once_written(handle) -> dict:
    deadline = time.monotonic() + HOLDER_WRITE_WAIT_SECONDS
    while True:
        handle.seek(0)
        holder = _holder(handle.read())
        if "address" in holder or time.monotonic() >= deadline:
            return holder
        time.sleep(0.02)


def _holder(text: str) -> dict:
    try:
        return json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return {}
