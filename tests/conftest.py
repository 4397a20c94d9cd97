"""Fixtures that start real daemons and real `cortexd proxy` processes on temporary data dirs."""

from __future__ import annotations

import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from memory_daemon.client.launcher import CORTEXD_COMMAND as CORTEXD
from memory_daemon.client.launcher import DaemonProcess
from memory_daemon.client.launcher import proxy_session as mcp_session

__all__ = ["CORTEXD", "Daemon", "free_port", "mcp_session"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def workdir():
    # Short paths: a Unix socket path must stay under 108 bytes.
    path = Path(tempfile.mkdtemp(prefix="cx"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Daemon(DaemonProcess):
    """A real `cortexd serve` process on its own temporary data dir and socket."""


@pytest.fixture
def daemon(workdir):
    running = Daemon(workdir).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def module_daemon():
    """One real daemon for a whole test module (each test picks its own namespace)."""
    root = Path(tempfile.mkdtemp(prefix="cx"))  # short: a Unix socket path must stay under 108 bytes
    running = Daemon(root).start()
    yield running
    running.stop()
    shutil.rmtree(root, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
