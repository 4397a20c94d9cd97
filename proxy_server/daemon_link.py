"""The proxy's gRPC link to the daemon: connects lazily, auto-starts, reconnects, applies deadlines, explains failures."""

from __future__ import annotations

import asyncio
import sys

import grpc

from cortexd.connect import CHANNEL_OPTIONS, call_metadata, is_unix_address, socket_path_of
from cortexd.v1 import cortexd_pb2_grpc as pb_grpc
from proxy_server.autostart import spawn_daemon


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
    ) -> None:
        self.address = address
        self.namespace = namespace
        self._metadata = call_metadata(namespace, token)
        self._auto_start = auto_start and is_unix_address(address)
        self._data_dir = data_dir
        self._call_timeout = call_timeout
        self._connect_timeout = connect_timeout
        self._start_timeout = start_timeout
        self._channel: grpc.aio.Channel | None = None
        self._bridge: pb_grpc.McpBridgeStub | None = None
        self._start_lock = asyncio.Lock()

    async def bridge_call(self, method: str, request):
        """Call McpBridge.<method>; raises DaemonCallError with an actionable message on failure."""
        bridge = await self._ready_bridge()
        try:
            return await getattr(bridge, method)(request, timeout=self._call_timeout, metadata=self._metadata)
        except grpc.aio.AioRpcError as error:
            raise self._explain(error) from None

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()

    async def _ready_bridge(self) -> pb_grpc.McpBridgeStub:
        if self._channel is None:
            self._channel = grpc.aio.insecure_channel(self.address, options=CHANNEL_OPTIONS)
            self._bridge = pb_grpc.McpBridgeStub(self._channel)
        if self._channel.get_state(try_to_connect=True) != grpc.ChannelConnectivity.READY:
            if self._socket_missing() or not await self._wait_ready(self._connect_timeout):
                await self._start_daemon_or_fail()
        return self._bridge

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
            print(f"cortexd proxy: no daemon at {self.address}; starting one", file=sys.stderr)
            spawn_daemon(socket_path_of(self.address), self._data_dir)
            if not await self._wait_ready(self._start_timeout):
                raise DaemonCallError(
                    self._down_message() + f" An automatic start was tried; see {socket_path_of(self.address).with_name('daemon.log')}.",
                    retriable=True,
                )

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
