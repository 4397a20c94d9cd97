"""Starts a detached daemon when none answers; the daemon's own lock makes concurrent starts safe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def spawn_daemon(socket_path: Path, data_dir: str | None) -> subprocess.Popen:
    """Start `cortexd serve` on socket_path in its own session, logging next to the socket."""
    socket_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    command = [sys.executable, "-m", "memory_daemon", "serve", "--listen", f"unix:{socket_path}"]
    if data_dir:
        command += ["--data-dir", data_dir]
    log_path = socket_path.with_name("daemon.log")
    descriptor = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        return subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=descriptor, stderr=descriptor,
            start_new_session=True, close_fds=True,
        )
    finally:
        os.close(descriptor)
