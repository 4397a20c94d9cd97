"""The proxy's gRPC link to the daemon: connects lazily, auto-starts, reconnects, applies deadlines, explains failures."""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from pathlib import Path

import grpc

from cortexd.connect import IDEMPOTENCY_HEADER, call_metadata, is_unix_address, open_channel, socket_path_of
from cortexd.v1 import cortexd_pb2_grpc as pb_grpc
from proxy_server.autostart import spawn_daemon


LOST_CONNECTION_NOTICE_SECONDS = 1.0
START_POLL_SECONDS = 0.2  # how often an auto-start checks whether the daemon answers, or exited
START_FAILURE_MEMORY_SECONDS = 10.0  # calls this soon after a failed auto-start get its cause at once
LOG_TAIL_LINES = 3


def _log_tail(log_path: Path, offset: int) -> str:
    """The last lines the daemon wrote to its log since `offset`: where it says why it stopped."""
    try:
        with open(log_path, "rb") as log:
            log.seek(offset)
            lines = [line.strip() for line in log.read().decode("utf-8", "replace").splitlines() if line.strip()]
    except OSError:
        return "no log"
    return " | ".join(lines[-LOG_TAIL_LINES:]) or "nothing in its log"


class DaemonCallError(Exception):
    """A forwarded call failed; the message is written for the LLM and the user to act on."""

    def __init__(self, message: str, retriable: bool) -> None:
        super().__init__(message)
        self.retriable = retriable


class DaemonLink:
    def __init__(
        self,
        address: str,
        namespace: str,
        token: str | None = None,
        auto_start: bool = True,
        data_dir: str | None = None,
        call_timeout: float = 30.0,
        connect_timeout: float = 2.0,
        start_timeout: float = 30.0,
        tls_ca: bytes | None = None,
    ) -> None:
        self.address = address
        self._tls_ca = tls_ca  # PEM CA of a TCP daemon's TLS certificate; None: plaintext
        self.namespace = namespace
        self._metadata = call_metadata(namespace, token)
        self._auto_start = auto_start and is_unix_address(address)
        self._data_dir = data_dir
        self._call_timeout = call_timeout
        self._connect_timeout = connect_timeout
        self._start_timeout = start_timeout
        self._channel: grpc.aio.Channel | None = None
        self._bridge: pb_grpc.McpBridgeStub | None = None
        self._memory: pb_grpc.MemoryServiceStub | None = None
        self._start_lock = asyncio.Lock()
        self._start_failure: tuple[float, str] | None = None  # (until when it is repeated, the message)

    async def bridge_call(self, method: str, request):
        """Call McpBridge.<method>; raises DaemonCallError with an actionable message on failure.

        A call cut off by the daemon going away (UNAVAILABLE) is sent once more after reconnecting (auto-starting
        the daemon if need be). A tool call carries a fresh idempotency key, the same on both tries, so a write the
        daemon applied before it went away is answered from its record instead of being applied twice."""
        metadata = self._metadata + (((IDEMPOTENCY_HEADER, uuid.uuid4().hex),) if method == "CallTool" else ())
        bridge = await self._ready_bridge()
        try:
            return await getattr(bridge, method)(request, timeout=self._call_timeout, metadata=metadata)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise self._explain(error) from None
            cut_off = self._explain(error)
        await self._notice_lost_connection()
        try:
            bridge = await self._ready_bridge()
        except DaemonCallError:
            raise cut_off from None
        try:
            return await getattr(bridge, method)(request, timeout=self._call_timeout, metadata=metadata)
        except grpc.aio.AioRpcError as error:
            raise self._explain(error) from None

    async def memory_call(self, method: str, request, timeout: float):
        """Call MemoryService.<method> for the proxy's own background work (capture, health). It never starts a
        daemon: a host's call does that when it needs one. Raises DaemonCallError."""
        self._open_channel()
        if self._channel.get_state(try_to_connect=True) != grpc.ChannelConnectivity.READY:
            if self._socket_missing() or not await self._wait_ready(min(timeout, self._connect_timeout)):
                raise DaemonCallError(self._down_message(), retriable=True)
        try:
            return await getattr(self._memory, method)(request, timeout=timeout, metadata=self._metadata)
        except grpc.aio.AioRpcError as error:
            raise self._explain(error) from None

    async def _notice_lost_connection(self) -> None:
        """A call fails before the channel notices that its connection is gone: give it a moment to leave READY,
        so that a retry reconnects instead of writing into the dead connection."""
        if self._channel.get_state() == grpc.ChannelConnectivity.READY:
            try:
                await asyncio.wait_for(self._channel.wait_for_state_change(grpc.ChannelConnectivity.READY),
                                       LOST_CONNECTION_NOTICE_SECONDS)
            except asyncio.TimeoutError:
                pass  # still READY: the daemon itself answered UNAVAILABLE, and a retry goes to it as it is

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()

    def _open_channel(self) -> None:
        if self._channel is None:
            self._channel = open_channel(self.address, self._tls_ca, aio=True)
            self._bridge = pb_grpc.McpBridgeStub(self._channel)
            self._memory = pb_grpc.MemoryServiceStub(self._channel)

    async def _ready_bridge(self) -> pb_grpc.McpBridgeStub:
        self._open_channel()
        if self._channel.get_state(try_to_connect=True) != grpc.ChannelConnectivity.READY:
            if self._socket_missing() or not await self._wait_ready(self._connect_timeout):
                await self._start_daemon_or_fail()
        return self._bridge

    async def answers(self) -> bool:
        """Whether a daemon answers now, without starting one."""
        self._open_channel()
        return not self._socket_missing() and await self._wait_ready(self._connect_timeout)

    def _socket_missing(self) -> bool:
        """Nothing can answer on a Unix socket that does not exist, so there is no point waiting."""
        return is_unix_address(self.address) and not socket_path_of(self.address).exists()

    async def _wait_ready(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self._channel.channel_ready(), seconds)
            return True
        except (asyncio.TimeoutError, grpc.aio.UsageError):
            return False

    async def _start_daemon_or_fail(self) -> None:
        if not self._auto_start:
            raise DaemonCallError(self._down_message(), retriable=True)
        async with self._start_lock:
            if self._channel.get_state(try_to_connect=True) == grpc.ChannelConnectivity.READY:
                return
            if self._start_failure is not None and time.monotonic() < self._start_failure[0]:
                raise DaemonCallError(self._start_failure[1], retriable=True)  # tried moments ago: say why again
            print(f"cortexd proxy: no daemon at {self.address}; starting one", file=sys.stderr)
            log_path = socket_path_of(self.address).with_name("daemon.log")
            log_offset = log_path.stat().st_size if log_path.exists() else 0
            process = spawn_daemon(socket_path_of(self.address), self._data_dir)
            cause = await self._wait_started(process, log_path, log_offset)
            if cause is not None:
                message = f"{self._down_message()} An automatic start failed: {cause} (log: {log_path})."
                self._start_failure = (time.monotonic() + START_FAILURE_MEMORY_SECONDS, message)
                print(f"cortexd proxy: {message}", file=sys.stderr)
                raise DaemonCallError(message, retriable=True)
            self._start_failure = None

    async def _wait_started(self, process, log_path: Path, log_offset: int) -> str | None:
        """None once the daemon answers; else why not: its exit status and last log lines the moment it exits (a
        daemon that cannot start exits within a second or two), or the timeout."""
        deadline = time.monotonic() + self._start_timeout
        while time.monotonic() < deadline:
            if await self._wait_ready(START_POLL_SECONDS):
                return None
            status = process.poll() if process is not None else None
            if status is not None:
                tail = _log_tail(log_path, log_offset)
                if f"listening on {self.address})" not in tail:
                    return f"`cortexd serve` exited with status {status}: {tail}"
                process = None  # another proxy's start won the race for this socket: wait for that daemon instead
        return f"the daemon did not answer within {self._start_timeout:g} s"

    def _down_message(self) -> str:
        return (
            f"The cortexd memory daemon is not running at {self.address}. Start it with `cortexd serve` "
            "(or install the service), then retry this call."
        )

    def _explain(self, error: grpc.aio.AioRpcError) -> DaemonCallError:
        code, details = error.code(), error.details() or ""
        if code == grpc.StatusCode.UNAVAILABLE:
            return DaemonCallError(
                f"The cortexd daemon went away during this call ({details}). It may or may not have completed; "
                "the call is retriable once the daemon is back (the proxy reconnects by itself).",
                retriable=True,
            )
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return DaemonCallError(
                f"The cortexd daemon did not answer within {self._call_timeout:g} s; the call is retriable.",
                retriable=True,
            )
        if code == grpc.StatusCode.UNAUTHENTICATED:
            return DaemonCallError(f"{details}. Set CORTEXD_TOKEN_FILE or pass --token-file.", retriable=False)
        label = code.name.lower().replace("_", " ")
        return DaemonCallError(f"{label}: {details}", retriable=False)
