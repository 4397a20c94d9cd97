"""Synchronous Python client for scripts: one snake_case method per MemoryService and GraphService RPC, derived from the proto."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Iterator
from typing import Any

import grpc
from google.protobuf import json_format
from google.protobuf.message_factory import GetMessageClass

from cortexd.connect import IDEMPOTENCY_HEADER, call_metadata, is_unix_address, open_channel, read_tls_ca, resolve_address
from cortexd.v1 import cortexd_pb2 as pb
from cortexd.v1 import cortexd_pb2_grpc as pb_grpc

SCRIPTED_SERVICES = ("MemoryService", "GraphService", "DecisionService")


def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


_UNARY_RPCS = {
    snake_case(m.name): m
    for service in SCRIPTED_SERVICES
    for m in pb.DESCRIPTOR.services_by_name[service].methods
    if not m.client_streaming and not m.server_streaming
}
RESTORE_CHUNK_BYTES = 1 << 20  # dump lines per streamed message, well under the 8 MiB gRPC limit


class CortexdClient:
    """`client.save_memory(content=..., tags=[...])` calls SaveMemory and returns its reply message.

    Every method also takes `idempotency_key="..."`: a write retried with the same key is applied once and
    answered with its first reply (see the proto's header comment)."""

    def __init__(self, address: str | None = None, namespace: str | None = None, token: str | None = None,
                 timeout: float = 30.0, tls_ca: bytes | None = None) -> None:
        """tls_ca: PEM of the CA that signs a TCP daemon's certificate (default: the file named by $CORTEXD_TLS_CA)."""
        self.address = resolve_address(address)
        if tls_ca is None and not is_unix_address(self.address):
            tls_ca = read_tls_ca()
        self._channel = open_channel(self.address, tls_ca)
        self._memory = pb_grpc.MemoryServiceStub(self._channel)
        self._stubs = {service: getattr(pb_grpc, f"{service}Stub")(self._channel) for service in SCRIPTED_SERVICES}
        self._bridge = pb_grpc.McpBridgeStub(self._channel)
        self._metadata = call_metadata(namespace, token)
        self._timeout = timeout

    def __getattr__(self, name: str):
        method = _UNARY_RPCS.get(name)
        if method is None:
            raise AttributeError(f"CortexdClient has no RPC {name!r}; available: {', '.join(_UNARY_RPCS)}")
        request_class = GetMessageClass(method.input_type)
        stub_call = getattr(self._stubs[method.containing_service.name], method.name)

        def call(idempotency_key: str | None = None, **fields: Any):
            return stub_call(request_class(**fields), timeout=self._timeout, metadata=self._keyed(idempotency_key))

        call.__name__ = name
        return call

    def import_records(self, records: Iterable[dict]) -> pb.ImportReply:
        """Stream `{"id","text","namespace"?,"timestamp"?}` records to ImportMemories."""
        messages = (json_format.ParseDict(r, pb.ImportRecord(), ignore_unknown_fields=True) for r in records)
        return self._memory.ImportMemories(messages, metadata=self._metadata)

    def wait_for_update_checks(self, timeout: float, poll_seconds: float = 0.1) -> int:
        """Poll GetStatus until no imported statement waits for its update check, or `timeout` seconds pass; returns
        how many still wait (0: done)."""
        deadline = time.monotonic() + timeout
        while True:
            pending = sum(n.pending for n in self._memory.GetStatus(
                pb.GetStatusRequest(), timeout=self._timeout, metadata=self._metadata).update_checks)
            if not pending or time.monotonic() >= deadline:
                return pending
            time.sleep(poll_seconds)

    def export_store(self, all_namespaces: bool = False, timeout: float | None = None) -> Iterator[str]:
        """The lines of a dump of this client's namespace (or of all), as ExportStore streams them."""
        for chunk in self._memory.ExportStore(pb.ExportStoreRequest(all_namespaces=all_namespaces),
                                              timeout=timeout, metadata=self._metadata):
            yield from chunk.lines

    def restore_store(self, lines: Iterable[str], timeout: float | None = None) -> pb.RestoreStoreReply:
        """Stream a dump's lines (line ends optional) to RestoreStore; the daemon checks them all before storing."""
        def chunks() -> Iterator[pb.DumpChunk]:
            chunk: list[str] = []
            size = 0
            for line in lines:
                chunk.append(line.rstrip("\r\n"))
                size += len(line)
                if size >= RESTORE_CHUNK_BYTES:
                    yield pb.DumpChunk(lines=chunk)
                    chunk, size = [], 0
            yield pb.DumpChunk(lines=chunk)

        return self._memory.RestoreStore(chunks(), timeout=timeout, metadata=self._metadata)

    def call_tool(self, name: str, arguments: dict[str, Any], idempotency_key: str | None = None) -> dict[str, Any]:
        """Call an MCP tool through the daemon's bridge, exactly as a proxy would."""
        reply = self._bridge.CallTool(
            pb.CallToolRequest(name=name, arguments_json=json.dumps(arguments)),
            timeout=self._timeout, metadata=self._keyed(idempotency_key),
        )
        return json.loads(reply.result_json)

    def _keyed(self, idempotency_key: str | None) -> tuple[tuple[str, str], ...]:
        return self._metadata + (((IDEMPOTENCY_HEADER, idempotency_key),) if idempotency_key else ())

    def list_tools(self, profile: str = "full") -> list[pb.ToolSpec]:
        """The MCP tools of a profile: "full" (every tool) or "default" (the everyday set a proxy lists)."""
        return list(self._bridge.ListTools(pb.ListToolsRequest(profile=profile), timeout=self._timeout,
                                           metadata=self._metadata).tools)

    def wait_ready(self, timeout: float) -> None:
        grpc.channel_ready_future(self._channel).result(timeout=timeout)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "CortexdClient":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def as_dict(message) -> dict[str, Any]:
    return json_format.MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
