"""The upstream MCP servers behind the proxy: one persistent session each, started in the background, reconnected with
backoff, every call bounded by a timeout, and a failure explained for that upstream alone."""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from contextlib import asynccontextmanager

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from cortexd.v1 import cortexd_pb2 as pb
from proxy_server.upstream_config import SEPARATOR, UpstreamConfig
from proxy_server.wrapped_stream import WrappedReadStream

CONNECTING, CONNECTED, RECONNECTING, FAILED = "connecting", "connected", "reconnecting", "failed"
FAILED_AFTER_ATTEMPTS = 3  # attempts in a row that never connected; retrying goes on at the slowest pace
BACKOFF_FIRST_SECONDS = 0.5
BACKOFF_MAX_SECONDS = 30.0
PING_EVERY_SECONDS = 15.0  # an idle session is pinged, so a dead HTTP server shows in the health before a call fails
PING_TIMEOUT_SECONDS = 10.0
CALL_WAITS_FOR_CONNECT_SECONDS = 5.0  # a call arriving during a respawn waits this long rather than failing at once
CLIENT_INFO = types.Implementation(name="cortexd-proxy", version="1")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class UpstreamCallError(Exception):
    """A forwarded call could not be completed; the message is written for the LLM and the user to act on."""

    def __init__(self, message: str, retriable: bool) -> None:
        super().__init__(message)
        self.retriable = retriable


def backoff_seconds(failures: int) -> float:
    """0.5 s after the first failure, doubling up to 30 s."""
    return min(BACKOFF_MAX_SECONDS, BACKOFF_FIRST_SECONDS * 2 ** max(0, failures - 1))


def expanded(value: str, where: str) -> str:
    """${NAME} replaced by the proxy's environment variable, so secrets can stay out of config.toml."""
    def lookup(match: re.Match) -> str:
        variable = match.group(1)
        if variable not in os.environ:
            raise RuntimeError(f"{where} refers to ${{{variable}}}, which is not set in the proxy's environment")
        return os.environ[variable]

    return _VARIABLE.sub(lookup, value)


def describe_failure(error: BaseException) -> str:
    """One line naming what went wrong, from the first real error inside any exception group."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, MCPError):
        return f"{error.message} (MCP error {error.code})"
    if isinstance(error, FileNotFoundError):
        return f"command not found: {error.filename or error}"
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class EndWatchingStream(WrappedReadStream):
    """The transport's read stream, noting when it ends: that is how a crashed stdio server shows itself at once."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.ended = anyio.Event()

    async def receive(self):
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.ended.set()
            raise

    async def aclose(self) -> None:
        self.ended.set()
        await super().aclose()


class Upstream:
    """One upstream MCP server and the one session to it that every call shares."""

    def __init__(self, config: UpstreamConfig, on_change: Callable[[bool], None] = lambda catalog: None) -> None:
        self.config = config
        self.state = CONNECTING
        self.state_since = time.time()
        self.last_error = ""
        self.tools: list[types.Tool] = []  # offered ones, under the upstream's own names; kept while disconnected
        self.resources: list[types.Resource] = []
        self.prompts: list[types.Prompt] = []
        self.templates: list[types.ResourceTemplate] = []
        self.calls = 0
        self.failed_calls = 0
        self.observations_dropped = 0
        self._on_change = on_change
        self._session: ClientSession | None = None
        self._connected = anyio.Event()  # set while a session is up; replaced when it is lost
        self._lost = anyio.Event()  # set by a call that saw the connection close
        self._loss_reason = ""
        self._catalog_stale = anyio.Event()  # the upstream said its tools, resources or prompts changed
        self.first_attempt_done = anyio.Event()

    @property
    def name(self) -> str:
        return self.config.name

    # -- the session's life ------------------------------------------------

    async def run(self) -> None:
        """Connect, serve until the connection is lost, wait, and connect again; forever, until cancelled."""
        failures = 0
        while True:
            connected = False
            try:
                async with self._transport() as (read, write):
                    watched = EndWatchingStream(read)
                    async with ClientSession(watched, write, client_info=CLIENT_INFO,
                                             message_handler=self._on_message) as session:
                        with anyio.fail_after(self.config.connect_timeout):
                            await session.initialize()
                            await self._load_catalog(session)
                        self._session, connected, failures = session, True, 0
                        self._lost, self._loss_reason = anyio.Event(), ""
                        self._set_state(CONNECTED, "")
                        self._connected.set()
                        self.first_attempt_done.set()
                        await self._until_lost(session, watched)
                problem = self._loss_reason or "the connection closed"
            except Exception as error:  # noqa: BLE001 — any failure of one upstream is reported, never propagated
                problem = describe_failure(error)
                if not connected and problem.startswith("TimeoutError"):
                    problem = f"did not start and initialise within {self.config.connect_timeout:g} s"
            finally:
                self._session = None
                if self._connected.is_set():
                    self._connected = anyio.Event()
            failures = 0 if connected else failures + 1
            self._set_state(FAILED if failures >= FAILED_AFTER_ATTEMPTS else RECONNECTING, problem)
            self.first_attempt_done.set()
            await anyio.sleep(backoff_seconds(max(failures, 1)))

    @asynccontextmanager
    async def _transport(self):
        config = self.config
        if config.url:
            from mcp.client.streamable_http import streamable_http_client  # only HTTP upstreams pay for httpx
            from mcp.shared._httpx_utils import create_mcp_http_client

            headers = {key: expanded(value, f"headers.{key}") for key, value in config.headers.items()}
            async with create_mcp_http_client(headers=headers or None) as http:
                async with streamable_http_client(expanded(config.url, "url"), http_client=http) as streams:
                    yield streams
        else:
            parameters = StdioServerParameters(
                command=config.command[0], args=list(config.command[1:]), cwd=config.cwd or None,
                env={key: expanded(value, f"env.{key}") for key, value in config.env.items()} or None,
            )
            async with stdio_client(parameters, errlog=sys.stderr) as streams:
                yield streams

    async def _load_catalog(self, session: ClientSession) -> None:
        capabilities = session.server_capabilities or types.ServerCapabilities()
        tools: list[types.Tool] = []
        resources: list[types.Resource] = []
        prompts: list[types.Prompt] = []
        if capabilities.tools is not None:
            tools = [t for t in await _all_pages(session.list_tools, "tools") if self.config.offers(t.name)]
        templates: list[types.ResourceTemplate] = []
        if capabilities.resources is not None:
            resources = await _all_pages(session.list_resources, "resources")
            templates = await _all_pages(session.list_resource_templates, "resource_templates")
        if capabilities.prompts is not None:
            prompts = await _all_pages(session.list_prompts, "prompts")
        changed = ([t.name for t in tools], [r.uri for r in resources], [p.name for p in prompts],
                   [t.uri_template for t in templates]) != (
            [t.name for t in self.tools], [r.uri for r in self.resources], [p.name for p in self.prompts],
            [t.uri_template for t in self.templates])
        self.tools, self.resources, self.prompts, self.templates = tools, resources, prompts, templates
        if changed:
            self._on_change(True)

    async def _on_message(self, message) -> None:
        # Called from the session's read loop: only note it here; the catalog is re-read beside the loop.
        if isinstance(message, types.ToolListChangedNotification | types.ResourceListChangedNotification
                      | types.PromptListChangedNotification):
            self._catalog_stale.set()

    async def _reload_catalog_when_told(self, session: ClientSession) -> None:
        while True:
            await self._catalog_stale.wait()
            self._catalog_stale = anyio.Event()
            try:
                with anyio.fail_after(self.config.timeout):
                    await self._load_catalog(session)
            except Exception as error:  # noqa: BLE001 — the old catalog stays; the failure shows in the health
                self._set_state(self.state, f"re-reading the catalog failed: {describe_failure(error)}")

    async def _until_lost(self, session: ClientSession, watched: EndWatchingStream) -> None:
        async with anyio.create_task_group() as group:
            async def stop_when(event: anyio.Event, reason: str) -> None:
                await event.wait()
                self._loss_reason = self._loss_reason or reason
                group.cancel_scope.cancel()

            async def ping_until_it_fails() -> None:
                while True:
                    await anyio.sleep(PING_EVERY_SECONDS)
                    try:
                        with anyio.fail_after(PING_TIMEOUT_SECONDS):
                            await session.send_ping()
                    except TimeoutError:
                        reason = f"did not answer a ping within {PING_TIMEOUT_SECONDS:g} s"
                    except MCPError as error:
                        if error.code != types.CONNECTION_CLOSED:
                            continue  # any answer, even "no such method", says the server is alive
                        reason = describe_failure(error)
                    else:
                        continue
                    self._loss_reason = self._loss_reason or reason
                    group.cancel_scope.cancel()
                    return

            description = "the server process exited" if not self.config.url else "the HTTP stream closed"
            group.start_soon(stop_when, watched.ended, description)
            group.start_soon(stop_when, self._lost, "a call found the connection closed")
            group.start_soon(ping_until_it_fails)
            group.start_soon(self._reload_catalog_when_told, session)

    def _set_state(self, state: str, error: str) -> None:
        if error and (error, state) != (self.last_error, self.state):  # one log line per news, not per retry
            print(f"cortexd proxy: upstream {self.name!r} ({self.config.describe()}) {state}: {error}", file=sys.stderr)
        if error:
            self.last_error = error
        if state != self.state:
            self.state, self.state_since = state, time.time()
        self._on_change(False)

    def _call_failed(self) -> None:
        self.failed_calls += 1
        self._on_change(False)

    def _connection_lost(self, reason: str) -> None:
        self._loss_reason = self._loss_reason or reason
        self._lost.set()

    # -- calls -------------------------------------------------------------

    async def _ready_session(self) -> ClientSession:
        if self._session is None and self.state != FAILED:
            with anyio.move_on_after(min(self.config.timeout, CALL_WAITS_FOR_CONNECT_SECONDS)):
                await self._connected.wait()
        if self._session is None:
            after = f" after: {self.last_error}" if self.last_error else ""
            raise UpstreamCallError(
                f"The upstream MCP server '{self.name}' ({self.config.describe()}) is not connected ({self.state}{after}). "
                "The proxy keeps reconnecting by itself; retry this call shortly. Other tools are unaffected.",
                retriable=True)
        return self._session

    async def call_tool(self, tool: str, arguments: dict | None, on_progress=None,
                        meta: dict | None = None) -> types.CallToolResult:
        """The upstream's result as it sent it. A JSON-RPC error from the upstream passes through as MCPError;
        a crash, a hang past the timeout or a garbled answer becomes UpstreamCallError."""
        if not self.config.offers(tool):
            raise UpstreamCallError(f"'{self.name}{SEPARATOR}{tool}' is not offered: the proxy's allow_tools/deny_tools "
                                    f"for upstream '{self.name}' leave it out.", retriable=False)
        session = await self._ready_session()
        self.calls += 1
        try:
            return await session.call_tool(tool, arguments, read_timeout_seconds=self.config.timeout,
                                           progress_callback=on_progress, meta=meta)
        except MCPError as error:
            if error.code == types.CONNECTION_CLOSED:
                self._call_failed()
                self._connection_lost("a call found the connection closed")
                raise UpstreamCallError(
                    f"The upstream MCP server '{self.name}' went away during {tool} ({error.message}). It may or may "
                    "not have completed; the proxy reconnects by itself, so the call is retriable shortly.",
                    retriable=True) from None
            if error.code == types.REQUEST_TIMEOUT:
                self._call_failed()
                raise UpstreamCallError(
                    f"The upstream MCP server '{self.name}' did not answer {tool} within {self.config.timeout:g} s "
                    "(its timeout in config.toml); the call may still complete there. Other tools are unaffected.",
                    retriable=True) from None
            raise  # the upstream's own answer, e.g. unknown tool or invalid arguments: the host sees it as sent
        except (ValidationError, RuntimeError, ValueError) as error:
            self._call_failed()
            raise UpstreamCallError(f"The upstream MCP server '{self.name}' answered {tool} with something that is not "
                                    f"a valid MCP result ({describe_failure(error)}).", retriable=False) from None

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        session = await self._ready_session()
        return await self._bounded(session.read_resource(uri), f"reading {uri}")

    async def get_prompt(self, name: str, arguments: dict[str, str] | None) -> types.GetPromptResult:
        session = await self._ready_session()
        return await self._bounded(session.get_prompt(name, arguments), f"prompt {name}")

    async def _bounded(self, awaitable, what: str):
        try:
            with anyio.fail_after(self.config.timeout):
                return await awaitable
        except TimeoutError:
            raise MCPError(types.INTERNAL_ERROR, f"upstream '{self.name}' did not answer {what} within "
                                                 f"{self.config.timeout:g} s") from None

    # -- health --------------------------------------------------------------

    def health(self) -> pb.UpstreamHealth:
        return pb.UpstreamHealth(
            name=self.name, transport=self.config.transport, state=self.state, last_error=self.last_error,
            tool_count=len(self.tools), state_since=_iso(self.state_since), capture=self.config.capture,
            calls=self.calls, failed_calls=self.failed_calls, observations_dropped=self.observations_dropped,
        )


def template_matches(uri_template: str, uri: str) -> bool:
    """Whether the URI is an expansion of the RFC 6570 template: `{name}` stands for one path segment, `{+name}`
    and `{#name}` for anything; other operators are treated like `{name}`."""
    pattern, position = "", 0
    for match in _TEMPLATE_EXPRESSION.finditer(uri_template):
        pattern += re.escape(uri_template[position:match.start()])
        pattern += ".*" if match.group(1) in ("+", "#") else "[^/?#]*"
        position = match.end()
    pattern += re.escape(uri_template[position:])
    return re.fullmatch(pattern, uri) is not None


_TEMPLATE_EXPRESSION = re.compile(r"\{([+#./;?&]?)[^}]*\}")


async def _all_pages(list_page, attribute: str) -> list:
    items: list = []
    cursor = None
    for _ in range(100):  # a server that pages forever is cut off
        result = await list_page(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        items += getattr(result, attribute)
        cursor = result.next_cursor
        if not cursor:
            break
    return items


def _iso(epoch_seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_seconds))


class Upstreams:
    """Every configured upstream: their merged, namespaced catalog and the routing of a call to its upstream."""

    def __init__(self, configs: tuple[UpstreamConfig, ...]) -> None:
        self.changed = anyio.Event()  # set when any catalog or state changes; replaced by whoever consumes it
        self._catalog_listeners: list[Callable[[], None]] = []
        self.by_name = {c.name: Upstream(c, self._note_change) for c in configs}

    def __bool__(self) -> bool:
        return bool(self.by_name)

    def start(self, group) -> None:
        for upstream in self.by_name.values():
            group.start_soon(upstream.run)

    def on_catalog_change(self, listener: Callable[[], None]) -> None:
        self._catalog_listeners.append(listener)

    def _note_change(self, catalog: bool) -> None:
        self.changed.set()
        if catalog:
            for listener in self._catalog_listeners:
                listener()

    async def settle(self, seconds: float) -> None:
        """Wait up to `seconds` for every upstream's first connection attempt to end (either way)."""
        with anyio.move_on_after(seconds):
            for upstream in self.by_name.values():
                await upstream.first_attempt_done.wait()

    def route(self, name: str) -> tuple[Upstream, str] | None:
        """The upstream and its own tool (or prompt) name for a namespaced name; None for cortexd's own names."""
        prefix, separator, rest = name.partition(SEPARATOR)
        upstream = self.by_name.get(prefix) if separator else None
        return (upstream, rest) if upstream is not None and rest else None

    def tools(self) -> list[types.Tool]:
        return [t.model_copy(update={"name": u.config.prefix + t.name}) for u in self.by_name.values() for t in u.tools]

    def prompts(self) -> list[types.Prompt]:
        return [p.model_copy(update={"name": u.config.prefix + p.name}) for u in self.by_name.values() for p in u.prompts]

    def resources(self, taken: set[str]) -> list[types.Resource]:
        """Upstream resources keep their URIs (they are addresses) and get namespaced names; a URI already taken
        (by cortexd or an earlier upstream) is left out."""
        offered = []
        for upstream in self.by_name.values():
            for resource in upstream.resources:
                if str(resource.uri) not in taken:
                    taken.add(str(resource.uri))
                    offered.append(resource.model_copy(update={"name": upstream.config.prefix + resource.name}))
        return offered

    def resource_templates(self) -> list[types.ResourceTemplate]:
        """Upstream resource templates, with namespaced names; their URI templates are kept (they are addresses)."""
        return [t.model_copy(update={"name": u.config.prefix + t.name}) for u in self.by_name.values() for t in u.templates]

    def resource_owner(self, uri: str) -> Upstream | None:
        """The upstream that lists this URI, or else the first whose resource template matches it."""
        for upstream in self.by_name.values():
            if any(str(r.uri) == uri for r in upstream.resources):
                return upstream
        for upstream in self.by_name.values():
            if any(template_matches(t.uri_template, uri) for t in upstream.templates):
                return upstream
        return None

    def health(self) -> list[pb.UpstreamHealth]:
        return [u.health() for u in self.by_name.values()]

    def total_calls(self) -> int:
        return sum(u.calls for u in self.by_name.values())
