"""The MCP server of `cortexd proxy`: cortexd's own tools, resources and prompts are forwarded to the daemon, those of
the upstream MCP servers in config.toml to their upstream."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from cortexd.v1 import cortexd_pb2 as pb
from proxy_server.daemon_link import DaemonCallError, DaemonLink
from proxy_server.stdio_guard import NoLines, read_host_messages

if TYPE_CHECKING:  # imported when upstreams are configured: a proxy without them starts without these modules
    from proxy_server.upstream_config import ProxySettings
    from proxy_server.upstreams import Upstream

SERVER_NAME = "cortexd"
INSTRUCTIONS = (
    "cortexd is the user's long-term memory. Save durable preferences, decisions and facts with save_memory; "
    "search before answering questions about earlier conversations. The memory-guidelines prompt explains more."
)
OWN_RESOURCE_SCHEME = "cortex://"


def _protocol_error(error: DaemonCallError) -> MCPError:
    return MCPError(types.INTERNAL_ERROR, str(error), {"retriable": error.retriable})


def tool_error(message: str, retriable: bool) -> types.CallToolResult:
    """The one form in which a failed call reaches the host: a tool result marked as an error, saying what to do."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)],
        structured_content={"error": message, "retriable": retriable},
        is_error=True,
    )


def forwarded_meta(ctx) -> dict | None:
    """The host's _meta for an upstream call, without its progress token (the proxy's session sets its own)."""
    meta = {k: v for k, v in (ctx.meta or {}).items() if k not in ("progress_token", "progressToken")}
    return meta or None


def progress_relay(ctx):
    """When the host asked for progress on a call (a progressToken in its _meta), a callback that passes the
    upstream's progress notifications on to the host under the host's token; None otherwise."""
    meta = ctx.meta or {}
    token = meta.get("progress_token", meta.get("progressToken")) if isinstance(meta, dict) else None
    if token is None:
        return None

    async def relay(progress: float, total: float | None, message: str | None) -> None:
        await ctx.session.send_progress_notification(token, progress, total, message,
                                                     related_request_id=ctx.request_id)

    return relay


def annotations_of(tool: pb.ToolSpec) -> types.ToolAnnotations:
    """The tool's MCP hints, each left out where it equals the spec's default (not read-only, destructive, not
    idempotent), so the catalog a host loads stays small and means the same."""
    return types.ToolAnnotations(read_only_hint=True if tool.read_only else None,
                                 destructive_hint=None if tool.read_only or tool.destructive else False,
                                 idempotent_hint=True if tool.idempotent else None)


DAEMON_WATCH_SECONDS = 2.0  # how often a proxy whose daemon was down checks whether it answers now


class ProxyFront:
    """The MCP server of one proxy: cortexd's own catalog, fetched from the daemon, merged with the namespaced tools,
    resources and prompts of the upstream MCP servers in config.toml."""

    def __init__(self, link: DaemonLink, version: str, settings: ProxySettings | None = None,
                 tools: str | None = None) -> None:
        self.link = link
        # Which of cortexd's own tools to list: the flag, else config's [proxy] tools, else the everyday set.
        self.tools_profile = tools or (settings.tools if settings is not None else "default")
        self.upstreams = None
        self.observations = None
        self._list_wait = 0.0
        if settings is not None and settings.upstreams:
            from proxy_server.capture import ObservationSender
            from proxy_server.upstreams import Upstreams

            self.upstreams = Upstreams(settings.upstreams)
            self.upstreams.on_catalog_change(self._announce_catalog_change)
            self.observations = ObservationSender(link)
            self._list_wait = settings.list_wait_seconds
        self._settled = not self.upstreams
        self._daemon_answers: dict[str, object] = {}  # the daemon's last catalog answers, served while it is down
        self._listening_sessions: set = set()  # host sessions that listed tools: they hear about catalog changes
        self._group = None
        self._watching = False  # a task waits for a daemon that was down to announce its tools
        self.server = Server(
            SERVER_NAME, version=version, instructions=INSTRUCTIONS,
            on_list_tools=self.list_tools, on_call_tool=self.call_tool,
            on_list_resources=self.list_resources, on_read_resource=self.read_resource,
            on_list_resource_templates=self.list_resource_templates,
            on_list_prompts=self.list_prompts, on_get_prompt=self.get_prompt,
        )

    def initialization_options(self):
        # Always: the daemon can appear after the host's first listing (and upstreams come and go).
        return self.server.create_initialization_options(NotificationOptions(
            tools_changed=True, resources_changed=True, prompts_changed=True))

    async def serving(self, transport) -> None:
        """Run `transport()` (the host connection) with the upstreams, capture and health reports beside it."""
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                if self.upstreams:
                    from proxy_server.health_report import report_health_forever

                    self.observations.attach(group)
                    self.upstreams.start(group)
                    group.start_soon(report_health_forever, self.link, self.upstreams, self.link.namespace)
                await transport()
                if self.observations:
                    await self.observations.drain()
                group.cancel_scope.cancel()
        finally:
            await self.link.close()

    # -- the daemon's side -------------------------------------------------

    async def _from_daemon(self, method: str, request, session=None):
        """The daemon's answer. A daemon that is down leaves its last answer (or nothing) in its place, so the
        upstreams stay usable, and the proxy watches for it: once it answers, every host that listed hears
        `list_changed` and lists again. A daemon never seen and no upstreams: the failure is the host's to see."""
        try:
            reply = await self.link.bridge_call(method, request)
        except DaemonCallError as error:
            if session is not None:
                self._listening_sessions.add(session)
            watching = self._watch_for_daemon()
            if not self.upstreams and not watching:
                raise _protocol_error(error) from None
            print(f"cortexd proxy: {method}: {error}", file=sys.stderr)
            return self._daemon_answers.get(method)
        self._daemon_answers[method] = reply
        return reply

    def _watch_for_daemon(self) -> bool:
        """Start (once) the wait for a daemon that is down; False when there is no task group to run it in."""
        if self._group is None:
            return False
        if not self._watching:
            self._watching = True
            self._group.start_soon(self._announce_when_daemon_answers)
        return True

    async def _announce_when_daemon_answers(self) -> None:
        try:
            while True:
                await anyio.sleep(DAEMON_WATCH_SECONDS)
                if not await self.link.answers():
                    continue
                try:
                    self._daemon_answers["ListTools"] = await self.link.bridge_call(
                        "ListTools", pb.ListToolsRequest(profile=self.tools_profile))
                except DaemonCallError:
                    continue
                print("cortexd proxy: the daemon answers now; announcing its tools", file=sys.stderr)
                await self._send_list_changed()
                return
        finally:
            self._watching = False

    # -- tools ---------------------------------------------------------------

    async def list_tools(self, ctx, params) -> types.ListToolsResult:
        if self.upstreams:
            self._listening_sessions.add(ctx.session)
            if not self._settled:  # the first listing gives upstreams that are still starting a moment
                await self.upstreams.settle(self._list_wait)
                self._settled = True
        reply = await self._from_daemon("ListTools", pb.ListToolsRequest(profile=self.tools_profile), ctx.session)
        own = [types.Tool(name=t.name, title=t.title or None, description=t.description,
                          input_schema=json.loads(t.input_schema_json),
                          annotations=annotations_of(t))
               for t in (reply.tools if reply else ())]
        return types.ListToolsResult(tools=own + (self.upstreams.tools() if self.upstreams else []))

    async def call_tool(self, ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        routed = self.upstreams.route(params.name) if self.upstreams else None
        if routed is not None:
            return await self._call_upstream(*routed, params.arguments, progress_relay(ctx), forwarded_meta(ctx))
        request = pb.CallToolRequest(name=params.name, arguments_json=json.dumps(params.arguments or {}))
        try:
            reply = await self.link.bridge_call("CallTool", request)
        except DaemonCallError as error:
            return tool_error(str(error), error.retriable)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=reply.result_json)],
            structured_content=json.loads(reply.result_json),
        )

    async def _call_upstream(self, upstream: Upstream, tool: str, arguments: dict | None,
                             on_progress=None, meta: dict | None = None) -> types.CallToolResult:
        from proxy_server.upstreams import UpstreamCallError

        try:
            result = await upstream.call_tool(tool, arguments, on_progress, meta)
        except UpstreamCallError as error:
            return tool_error(str(error), error.retriable)
        if upstream.config.capture:
            self.observations.observe(upstream, tool, arguments, result)
        return result

    def _announce_catalog_change(self) -> None:
        if self._group is not None and self._listening_sessions:
            self._group.start_soon(self._send_list_changed)

    async def _send_list_changed(self) -> None:
        for session in list(self._listening_sessions):
            try:
                await session.send_tool_list_changed()
                await session.send_resource_list_changed()
                await session.send_prompt_list_changed()
            except Exception:  # noqa: BLE001 — that host went away; it will list again when it comes back
                self._listening_sessions.discard(session)

    # -- resources -----------------------------------------------------------

    async def list_resources(self, ctx, params) -> types.ListResourcesResult:
        reply = await self._from_daemon("ListResources", pb.ListResourcesRequest())
        own = [types.Resource(uri=r.uri, name=r.name, description=r.description, mime_type=r.mime_type)
               for r in (reply.resources if reply else ())]
        upstream_resources = self.upstreams.resources({str(r.uri) for r in own}) if self.upstreams else []
        return types.ListResourcesResult(resources=own + upstream_resources)

    async def list_resource_templates(self, ctx, params) -> types.ListResourceTemplatesResult:
        """cortexd has no templates of its own; the upstreams' are merged."""
        return types.ListResourceTemplatesResult(
            resource_templates=self.upstreams.resource_templates() if self.upstreams else [])

    async def read_resource(self, ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        upstream = self.upstreams.resource_owner(uri) if self.upstreams and not uri.startswith(OWN_RESOURCE_SCHEME) \
            else None
        if upstream is not None:
            from proxy_server.upstreams import UpstreamCallError

            try:
                return await upstream.read_resource(uri)
            except UpstreamCallError as error:
                raise MCPError(types.INTERNAL_ERROR, str(error), {"retriable": error.retriable}) from None
        try:
            reply = await self.link.bridge_call("ReadResource", pb.ReadResourceRequest(uri=uri))
        except DaemonCallError as error:
            raise _protocol_error(error) from None
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=reply.uri, mime_type=reply.mime_type, text=reply.text)]
        )

    # -- prompts -------------------------------------------------------------

    async def list_prompts(self, ctx, params) -> types.ListPromptsResult:
        reply = await self._from_daemon("ListPrompts", pb.ListPromptsRequest())
        own = [
            types.Prompt(
                name=p.name, description=p.description,
                arguments=[types.PromptArgument(name=a.name, description=a.description, required=a.required)
                           for a in p.arguments],
            )
            for p in (reply.prompts if reply else ())
        ]
        return types.ListPromptsResult(prompts=own + (self.upstreams.prompts() if self.upstreams else []))

    async def get_prompt(self, ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        routed = self.upstreams.route(params.name) if self.upstreams else None
        if routed is not None:
            from proxy_server.upstreams import UpstreamCallError

            upstream, name = routed
            try:
                return await upstream.get_prompt(name, params.arguments)
            except UpstreamCallError as error:
                raise MCPError(types.INTERNAL_ERROR, str(error), {"retriable": error.retriable}) from None
        request = pb.GetPromptRequest(name=params.name, arguments=params.arguments or {})
        try:
            reply = await self.link.bridge_call("GetPrompt", request)
        except DaemonCallError as error:
            raise _protocol_error(error) from None
        return types.GetPromptResult(
            description=reply.description,
            messages=[types.PromptMessage(role=m.role, content=types.TextContent(type="text", text=m.text))
                      for m in reply.messages],
        )


async def run_stdio(link: DaemonLink, version: str, settings: ProxySettings | None = None,
                    tools: str | None = None) -> None:
    from mcp.server.stdio import stdio_server

    front = ProxyFront(link, version, settings, tools)

    async def transport() -> None:
        # stdout is the SDK's; stdin is read here, as bytes, so a line that is not UTF-8 is refused, not mended.
        async with stdio_server(stdin=NoLines()) as (unused, write_stream):
            await unused.aclose()
            host_lines, messages = anyio.create_memory_object_stream[SessionMessage](0)
            async with anyio.create_task_group() as group:
                group.start_soon(read_host_messages, anyio.wrap_file(sys.stdin.buffer), host_lines, write_stream)
                await front.server.run(messages, write_stream, front.initialization_options())
                group.cancel_scope.cancel()

    await front.serving(transport)


async def run_http(link: DaemonLink, version: str, host: str, port: int,
                   settings: ProxySettings | None = None, tools: str | None = None) -> None:
    import uvicorn  # only the HTTP transport needs it

    front = ProxyFront(link, version, settings, tools)
    app = front.server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    await front.serving(uvicorn.Server(config).serve)
