"""The MCP server of `cortexd proxy`: every tools, resources and prompts request is forwarded to the daemon."""

from __future__ import annotations

import json

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from cortexd.v1 import cortexd_pb2 as pb
from proxy_server.daemon_link import DaemonCallError, DaemonLink
from proxy_server.stdio_guard import ParseErrorReplyingStream

SERVER_NAME = "cortexd"
INSTRUCTIONS = (
    "cortexd is the user's long-term memory. Save durable preferences, decisions and facts with save_memory; "
    "search before answering questions about earlier conversations. The memory-guidelines prompt explains more."
)


def _protocol_error(error: DaemonCallError) -> MCPError:
    return MCPError(types.INTERNAL_ERROR, str(error), {"retriable": error.retriable})


def build_server(link: DaemonLink, version: str) -> Server:
    async def forward(method: str, request):
        """A bridge call whose failure becomes an MCP protocol error (tool calls report theirs in-band)."""
        try:
            return await link.bridge_call(method, request)
        except DaemonCallError as error:
            raise _protocol_error(error) from None

    async def list_tools(ctx, params) -> types.ListToolsResult:
        reply = await forward("ListTools", pb.ListToolsRequest())
        return types.ListToolsResult(
            tools=[types.Tool(name=t.name, description=t.description, input_schema=json.loads(t.input_schema_json))
                   for t in reply.tools]
        )

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        request = pb.CallToolRequest(name=params.name, arguments_json=json.dumps(params.arguments or {}))
        try:
            reply = await link.bridge_call("CallTool", request)
        except DaemonCallError as error:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(error))],
                structured_content={"error": str(error), "retriable": error.retriable},
                is_error=True,
            )
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=reply.result_json)],
            structured_content=json.loads(reply.result_json),
        )

    async def list_resources(ctx, params) -> types.ListResourcesResult:
        reply = await forward("ListResources", pb.ListResourcesRequest())
        return types.ListResourcesResult(
            resources=[types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
                       for r in reply.resources]
        )

    async def read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        reply = await forward("ReadResource", pb.ReadResourceRequest(uri=str(params.uri)))
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=reply.uri, mime_type=reply.mime_type, text=reply.text)]
        )

    async def list_prompts(ctx, params) -> types.ListPromptsResult:
        reply = await forward("ListPrompts", pb.ListPromptsRequest())
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=p.name, description=p.description,
                    arguments=[types.PromptArgument(name=a.name, description=a.description, required=a.required)
                               for a in p.arguments],
                )
                for p in reply.prompts
            ]
        )

    async def get_prompt(ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        request = pb.GetPromptRequest(name=params.name, arguments=params.arguments or {})
        reply = await forward("GetPrompt", request)
        return types.GetPromptResult(
            description=reply.description,
            messages=[types.PromptMessage(role=m.role, content=types.TextContent(type="text", text=m.text))
                      for m in reply.messages],
        )

    return Server(
        SERVER_NAME,
        version=version,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


async def run_stdio(link: DaemonLink, version: str) -> None:
    from mcp.server.stdio import stdio_server

    server = build_server(link, version)
    try:
        async with stdio_server() as (read_stream, write_stream):
            guarded = ParseErrorReplyingStream(read_stream, write_stream)
            await server.run(guarded, write_stream, server.create_initialization_options())
    finally:
        await link.close()


async def run_http(link: DaemonLink, version: str, host: str, port: int) -> None:
    import uvicorn  # only the HTTP transport needs it

    server = build_server(link, version)
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    try:
        await uvicorn.Server(config).serve()
    finally:
        await link.close()
