"""The gRPC servicers: MemoryService wired from the RPC table, and the MCP bridge; errors map to status and keyed
writes replay their first reply here."""

from __future__ import annotations

import json
import logging
from functools import cache, partial

import grpc
from google.protobuf.message_factory import GetMessageClass

from cortexd.connect import DEFAULT_NAMESPACE, NAMESPACE_HEADER
from cortexd.v1 import cortexd_pb2 as pb
from cortexd.v1 import cortexd_pb2_grpc as pb_grpc
from memory_daemon.api import surface
from memory_daemon.api.catalog import reply_to_json, tool_catalog, tools_in_profile
from memory_daemon.core.errors import InvalidArgument, NotFound, grpc_status_of
from memory_daemon.api.idempotency import IdempotentReplies, idempotency_key_of
from memory_daemon.core.logs import log_event
from memory_daemon.core.validation import loaded_json
from memory_daemon.memory.service import checked_namespace
from memory_daemon.api.caller import Caller
from memory_daemon.api.rpc import RpcTable
from memory_daemon.api.workers import BlockingRunner, Lane, lane_of, write_deadline, writes

IMPORT_CHUNK = 500


def caller_of(context: grpc.aio.ServicerContext) -> Caller:
    metadata = dict(context.invocation_metadata() or ())
    return Caller(namespace=checked_namespace(metadata.get(NAMESPACE_HEADER) or DEFAULT_NAMESPACE))


async def abort_with(context: grpc.aio.ServicerContext, error: Exception) -> None:
    code, message = grpc_status_of(error)
    if code == grpc.StatusCode.INTERNAL:
        log_event("internal_error", logging.ERROR, exc_info=True)
    elif code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        # Expected and the operator's to fix (a full disk): one line with the cause, no traceback.
        log_event("resource_exhausted", logging.WARNING, cause=message)
    await context.abort(code, message)


class _Forwarding:
    """Every unary RPC of the service is forwarded to the handler method of the same name (wired below); a write
    sent with an idempotency key runs once per key (IdempotentReplies)."""

    service_name = ""

    def __init__(self, rpc, runner: BlockingRunner, replies: IdempotentReplies | None = None) -> None:
        self._rpc = rpc
        self._runner = runner
        self._replies = replies

    async def _call(self, rpc_name: str, request, context):
        try:
            caller = caller_of(context)
            method = pb.DESCRIPTOR.services_by_name[self.service_name].methods_by_name[rpc_name]
            run = partial(self._runner.run, getattr(self._rpc, rpc_name), request, caller, lane=lane_of(method),
                          deadline=write_deadline(method, context))
            key = idempotency_key_of(context.invocation_metadata())
            if key is None or self._replies is None or not writes(method):
                return await run()
            return await self._replies.once(caller.namespace, key, f"/{method.containing_service.full_name}/{rpc_name}",
                                            request, GetMessageClass(method.output_type), run)
        except Exception as error:
            await abort_with(context, error)


class MemoryServicer(_Forwarding, pb_grpc.MemoryServiceServicer):
    """MemoryService, forwarded to MemoryRpc; the import and restore streams are gathered here, the export streamed."""

    service_name = "MemoryService"

    async def ImportMemories(self, request_iterator, context):
        try:
            caller = caller_of(context)
            total = pb.ImportReply()

            async def apply(chunk: list[pb.ImportRecord]) -> None:
                # MergeFrom would overwrite the counts with the last chunk's; they are summed instead.
                reply = await self._runner.run(self._rpc.ImportMemories, chunk, caller, lane=Lane.HEAVY)
                total.imported += reply.imported
                total.skipped += reply.skipped
                total.errors.extend(reply.errors)
                total.update_checks_pending = reply.update_checks_pending  # a count now, not a sum

            chunk: list[pb.ImportRecord] = []
            async for record in request_iterator:
                chunk.append(record)
                if len(chunk) >= IMPORT_CHUNK:
                    await apply(chunk)
                    chunk = []
            if chunk:
                await apply(chunk)
            return total
        except Exception as error:
            await abort_with(context, error)

    async def ExportStore(self, request, context):
        try:
            chunks = await self._runner.run(self._rpc.ExportStore, request, caller_of(context), lane=Lane.HEAVY)
            try:
                while (lines := await self._runner.run(next, chunks, None, lane=Lane.HEAVY)) is not None:
                    yield pb.DumpChunk(lines=lines)
            finally:
                # Ends the snapshot, also when the client went away.
                await self._runner.run(chunks.close, lane=Lane.HEAVY)
        except Exception as error:
            await abort_with(context, error)

    async def RestoreStore(self, request_iterator, context):
        try:
            caller = caller_of(context)
            reader = await self._runner.run(self._rpc.dump_reader, lane=Lane.HEAVY)
            async for chunk in request_iterator:
                await self._runner.run(reader.feed, list(chunk.lines), lane=Lane.HEAVY)
            return await self._runner.run(self._rpc.RestoreStore, reader, caller, lane=Lane.HEAVY)
        except Exception as error:
            await abort_with(context, error)


class GraphServicer(_Forwarding, pb_grpc.GraphServiceServicer):
    """GraphService, forwarded to GraphRpc."""

    service_name = "GraphService"


class DecisionServicer(_Forwarding, pb_grpc.DecisionServiceServicer):
    """DecisionService, forwarded to DecisionRpc."""

    service_name = "DecisionService"


def _forward(rpc_name: str):
    async def handler(self: _Forwarding, request, context):
        return await self._call(rpc_name, request, context)

    handler.__name__ = rpc_name
    return handler


for _servicer, _service in ((MemoryServicer, "MemoryService"), (GraphServicer, "GraphService"),
                            (DecisionServicer, "DecisionService")):
    for _method in pb.DESCRIPTOR.services_by_name[_service].methods:
        if not _method.client_streaming and not _method.server_streaming:
            setattr(_servicer, _method.name, _forward(_method.name))


@cache
def _tool_list(profile: str) -> pb.ListToolsReply:
    return pb.ListToolsReply(tools=[tool_spec(t, profile) for t in tools_in_profile(profile)])


def tool_spec(tool, profile: str) -> pb.ToolSpec:
    description, schema = tool.listing(profile)
    return pb.ToolSpec(name=tool.name, description=description, input_schema_json=json.dumps(schema),
                       title=tool.title, read_only=tool.read_only, destructive=tool.destructive,
                       idempotent=tool.idempotent, everyday=tool.everyday)


class McpBridgeServicer(pb_grpc.McpBridgeServicer):
    """Tools, resources and prompts for the MCP proxy; tools dispatch to the same RPC handlers."""

    def __init__(self, rpcs: RpcTable, runner: BlockingRunner, replies: IdempotentReplies | None = None) -> None:
        self._rpcs = rpcs
        self._runner = runner
        self._replies = replies

    async def ListTools(self, request, context):
        try:
            return _tool_list(request.profile)
        except Exception as error:
            await abort_with(context, error)

    async def CallTool(self, request, context):
        try:
            binding = tool_catalog().get(request.name)
            if binding is None:
                raise NotFound(f"no tool {request.name!r}; available: {', '.join(tool_catalog())}")
            arguments = loaded_json(request.arguments_json or "{}", f"{request.name}: arguments")
            if not isinstance(arguments, dict):
                raise InvalidArgument(f"{request.name}: arguments must be a JSON object")
            rpc_request = binding.parse_arguments(arguments)
            handler = self._rpcs.handler(binding.method.containing_service.name, binding.rpc_name)
            caller = caller_of(context)

            async def call() -> pb.CallToolReply:
                reply = await self._runner.run(handler, rpc_request, caller, lane=lane_of(binding.method),
                                               deadline=write_deadline(binding.method, context, binding.name))
                return pb.CallToolReply(result_json=reply_to_json(reply))

            key = idempotency_key_of(context.invocation_metadata())
            if key is None or self._replies is None or not writes(binding.method):
                return await call()
            # The digest covers the RPC request the arguments parse to, so the same call keyed again matches.
            return await self._replies.once(caller.namespace, key, f"/cortexd.v1.McpBridge/CallTool/{binding.name}",
                                            rpc_request, pb.CallToolReply, call)
        except Exception as error:
            await abort_with(context, error)

    async def ListResources(self, request, context):
        return surface.list_resources()

    async def ReadResource(self, request, context):
        try:
            return await self._runner.run(surface.read_resource, self._rpcs, caller_of(context), request.uri)
        except Exception as error:
            await abort_with(context, error)

    async def ListPrompts(self, request, context):
        return surface.list_prompts()

    async def GetPrompt(self, request, context):
        try:
            return await self._runner.run(surface.get_prompt, self._rpcs, caller_of(context), request.name,
                                          dict(request.arguments))
        except Exception as error:
            await abort_with(context, error)
