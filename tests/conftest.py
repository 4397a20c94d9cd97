"""Fixtures that start real daemons and real `cortexd proxy` processes on temporary data dirs."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from memory_daemon.client.launcher import CORTEXD_COMMAND as CORTEXD
from memory_daemon.client.launcher import DaemonProcess
from memory_daemon.client.launcher import proxy_session as mcp_session

__all__ = ["CORTEXD", "Daemon", "free_port", "mcp_session", "store_cells_holding"]


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


def running_daemon(**environment: str):
    """A real daemon on a fresh short-named data dir, with these environment variables on top of this process's
    (e.g. CORTEXD_RETRIEVAL_RERANK_DEPTH="0"); a generator for a fixture to yield from."""
    root = Path(tempfile.mkdtemp(prefix="cx"))  # short: a Unix socket path must stay under 108 bytes
    running = Daemon(root, env={**os.environ, **environment} if environment else None).start()
    yield running
    running.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def module_daemon():
    """One real daemon for a whole test module (each test picks its own namespace)."""
    yield from running_daemon()


def payload(result) -> dict:
    """The JSON a successful MCP tool call returned (a failed call fails the test with the tool's error text)."""
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def store_cells_holding(database_path: Path, needles) -> dict[str, list[str]]:
    """needle -> every table.column of a stopped daemon's store whose value holds it (text, lists and blobs alike)."""
    import duckdb

    found: dict[str, list[str]] = {}
    with duckdb.connect(str(database_path), read_only=True) as db:
        for (table,) in db.execute("SELECT table_name FROM information_schema.tables").fetchall():
            for (column,) in db.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?",
                                        [table]).fetchall():
                for needle in needles:
                    for (value,) in db.execute(f'SELECT "{column}" FROM "{table}"').fetchall():
                        raw = value if isinstance(value, bytes) else str(value).encode("utf-8")
                        if needle.encode("utf-8") in raw:
                            found.setdefault(needle, []).append(f"{table}.{column}")
                            break
    return found
