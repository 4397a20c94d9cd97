"""Fixtures that start real daemons and real `cortexd proxy` processes on temporary data dirs."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from memory_daemon.client import CortexdClient

CORTEXD = [sys.executable, "-m", "memory_daemon"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def workdir():
    # Short paths: a Unix socket path must stay under 108 bytes.
    path = Path(tempfile.mkdtemp(prefix="cx"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@dataclass
class Daemon:
    """A `cortexd serve` process on its own data dir and socket."""

    root: Path
    extra_args: list[str] = field(default_factory=list)
    process: subprocess.Popen | None = None

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def socket(self) -> Path:
        return self.root / "run" / "cortexd.sock"

    @property
    def address(self) -> str:
        return f"unix:{self.socket}"

    @property
    def log_path(self) -> Path:
        return self.root / "daemon.log"

    def start(self, wait: bool = True) -> "Daemon":
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            CORTEXD + ["serve", "--data-dir", str(self.data_dir), "--listen", self.address, *self.extra_args],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL,
        )
        log.close()
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"daemon exited with {self.process.returncode}:\n{self.log()}")
            if self.socket.exists():
                with CortexdClient(self.address) as client:
                    try:
                        client.wait_ready(timeout=1.0)
                        return
                    except Exception:
                        pass
            time.sleep(0.05)
        raise AssertionError(f"daemon not ready after {timeout}s:\n{self.log()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(sig)
        return self.process.wait(timeout=timeout)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def client(self, namespace: str | None = None) -> CortexdClient:
        return CortexdClient(self.address, namespace)


@pytest.fixture
def daemon(workdir):
    running = Daemon(workdir).start()
    yield running
    if running.process.poll() is None:
        running.process.send_signal(signal.SIGTERM)
        try:
            running.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            running.process.kill()


def proxy_params(address: str, namespace: str | None = None, *extra: str, cwd: Path | None = None) -> StdioServerParameters:
    """Proxy arguments; auto-start is off unless a test passes --data-dir, so no test touches the user's data."""
    auto_start = () if "--data-dir" in extra else ("--no-auto-start",)
    args = ["-m", "memory_daemon", "proxy", "--daemon", address, *auto_start, *extra]
    if namespace:
        args += ["--namespace", namespace]
    return StdioServerParameters(command=sys.executable, args=args, cwd=str(cwd) if cwd else None,
                                 env=dict(os.environ))


@asynccontextmanager
async def mcp_session(address: str, namespace: str | None = None, *extra: str, cwd: Path | None = None):
    """A real `cortexd proxy` process, driven over MCP stdio by the SDK's client."""
    async with stdio_client(proxy_params(address, namespace, *extra, cwd=cwd)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session
