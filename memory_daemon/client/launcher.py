"""Starts and stops a `cortexd serve` child process on a given data dir and socket (demo, bench, tests)."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from memory_daemon.client.python_client import CortexdClient

CORTEXD_COMMAND = [sys.executable, "-m", "memory_daemon"]


@dataclass
class DaemonProcess:
    """A daemon rooted at `root`: data in root/data, socket at root/run/cortexd.sock, log at root/daemon.log."""

    root: Path
    extra_args: list[str] = field(default_factory=list)
    env: dict[str, str] | None = None
    process: subprocess.Popen | None = None
    preexec_fn: Callable[[], None] | None = None  # run in the child before the daemon starts (tests drop privileges)

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

    def start(self, wait: bool = True) -> "DaemonProcess":
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                CORTEXD_COMMAND + ["serve", "--data-dir", str(self.data_dir), "--listen", self.address, *self.extra_args],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=self.env, preexec_fn=self.preexec_fn,
            )
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daemon exited with {self.process.returncode}:\n{self.log()}")
            if self.socket.exists():
                with CortexdClient(self.address) as client:
                    try:
                        client.wait_ready(timeout=1.0)
                        return
                    except Exception:
                        pass
            time.sleep(0.05)
        raise RuntimeError(f"daemon not ready after {timeout}s:\n{self.log()}")

    def wait_serving(self, timeout: float = 60.0) -> None:
        """Until gRPC health reports SERVING: the store is open and the model load has finished."""
        import grpc
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        with grpc.insecure_channel(self.address) as channel:
            updates = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(), timeout=timeout)
            for update in updates:
                if update.status == health_pb2.HealthCheckResponse.SERVING:
                    updates.cancel()
                    return
        raise RuntimeError(f"daemon health never reached SERVING:\n{self.log()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.process is None:
            return 0
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                return self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def client(self, namespace: str | None = None) -> CortexdClient:
        return CortexdClient(self.address, namespace)


@contextmanager
def temporary_daemon(*extra_args: str, env: dict[str, str] | None = None) -> Iterator[DaemonProcess]:
    """A daemon on a fresh temporary data dir, stopped and removed afterwards; `env`: its whole environment (None:
    this process's)."""
    root = Path(tempfile.mkdtemp(prefix="cortexd-"))
    daemon = DaemonProcess(root, list(extra_args), env)
    try:
        yield daemon.start()
    finally:
        daemon.stop()
        shutil.rmtree(root, ignore_errors=True)


def proxy_parameters(address: str, namespace: str | None = None, *extra: str, cwd: Path | None = None):
    """How a host would start `cortexd proxy`; auto-start is off unless --data-dir is passed, so no user data is touched."""
    import os

    from mcp import StdioServerParameters

    auto_start = () if "--data-dir" in extra else ("--no-auto-start",)
    args = ["-m", "memory_daemon", "proxy", "--daemon", address, *auto_start, *extra]
    if namespace:
        args += ["--namespace", namespace]
    return StdioServerParameters(command=sys.executable, args=args, cwd=str(cwd) if cwd else None, env=dict(os.environ))


@asynccontextmanager
async def proxy_session(address: str, namespace: str | None = None, *extra: str, cwd: Path | None = None):
    """A real `cortexd proxy` process, driven over MCP stdio by the SDK's client, initialised."""
    from mcp import ClientSession, stdio_client

    # errlog given at each call: the SDK's default is the sys.stderr of its first import, which a test runner that
    # captures stderr may have closed since.
    async with stdio_client(proxy_parameters(address, namespace, *extra, cwd=cwd), errlog=sys.stderr) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session
