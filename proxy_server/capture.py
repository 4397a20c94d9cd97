"""Passive capture: after a forwarded upstream call, its redacted arguments and result go to the daemon in the background."""

from __future__ import annotations

import json
import sys

import anyio
import mcp_types as types

from cortexd.v1 import cortexd_pb2 as pb
from proxy_server.daemon_link import DaemonLink
from proxy_server.redaction import redact_text, redact_value
from proxy_server.upstreams import Upstream

MAX_RESULT_CHARS = 2000
MAX_ARGUMENT_STRING_CHARS = 4000
MAX_ARGUMENTS_CHARS = 24 * 1024
MAX_PENDING = 32  # observations in flight; beyond that they are dropped (and counted) rather than queued without end
SEND_TIMEOUT_SECONDS = 30.0  # the daemon analyses the text, which can take a while on a busy machine
DRAIN_SECONDS = 10.0  # at shutdown, observations still being sent get this long to arrive


def _shortened(value: object, limit: int) -> object:
    if isinstance(value, dict):
        return {key: _shortened(item, limit) for key, item in value.items()}
    if isinstance(value, list):
        return [_shortened(item, limit) for item in value]
    if isinstance(value, str) and len(value) > limit:
        return value[:limit] + "…"
    return value


def result_text(result: types.CallToolResult) -> str:
    """What the result says, as text: its text blocks, else its structured content; other blocks by their kind."""
    parts = []
    for block in result.content:
        if isinstance(block, types.TextContent):
            parts.append(block.text)
        else:
            parts.append(f"[{block.type}]")
    if not any(isinstance(b, types.TextContent) for b in result.content) and result.structured_content is not None:
        parts.insert(0, json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)


def observation_request(upstream: str, tool: str, arguments: dict | None,
                        result: types.CallToolResult) -> pb.RecordObservationRequest:
    """The observation as sent: secrets redacted first, then cut to size (cutting first could split a secret in two
    and hide it from the patterns)."""
    redacted = redact_value(arguments or {})
    encoded = json.dumps(_shortened(redacted, MAX_ARGUMENT_STRING_CHARS), ensure_ascii=False)
    if len(encoded) > MAX_ARGUMENTS_CHARS:
        encoded = json.dumps(_shortened(redacted, 200), ensure_ascii=False)[:MAX_ARGUMENTS_CHARS]
        if len(encoded) >= MAX_ARGUMENTS_CHARS:
            encoded = json.dumps({"truncated": encoded[:2000]})
    text = redact_text(result_text(result))
    if len(text) > MAX_RESULT_CHARS:
        text = text[:MAX_RESULT_CHARS] + "…"
    return pb.RecordObservationRequest(upstream=upstream, tool=tool, arguments_json=encoded, result_text=text,
                                       is_error=bool(result.is_error))


class ObservationSender:
    """Fire and forget: observe() only schedules the send, so capture never adds latency to the host's call."""

    def __init__(self, link: DaemonLink) -> None:
        self._link = link
        self._group = None
        self._pending = 0
        self._idle = anyio.Event()
        self._idle.set()
        self._last_problem = ""

    def attach(self, group) -> None:
        self._group = group

    def observe(self, upstream: Upstream, tool: str, arguments: dict | None, result: types.CallToolResult) -> None:
        if self._group is None or self._pending >= MAX_PENDING:
            upstream.observations_dropped += 1
            return
        self._pending += 1
        if self._idle.is_set():
            self._idle = anyio.Event()
        self._group.start_soon(self._send, upstream, tool, arguments, result)

    async def drain(self, seconds: float = DRAIN_SECONDS) -> None:
        """Wait (up to `seconds`) for the observations in flight, so that a host closing the proxy loses none."""
        with anyio.move_on_after(seconds):
            await self._idle.wait()

    async def _send(self, upstream: Upstream, tool: str, arguments: dict | None, result: types.CallToolResult) -> None:
        try:
            request = observation_request(upstream.name, tool, arguments, result)
            await self._link.memory_call("RecordObservation", request, SEND_TIMEOUT_SECONDS)
        except Exception as error:  # noqa: BLE001 — a background send must never take the proxy down
            upstream.observations_dropped += 1
            problem = f"{type(error).__name__}: {error}"
            if problem != self._last_problem:  # one line per kind of trouble, not one per call
                self._last_problem = problem
                print(f"cortexd proxy: an observation of {upstream.name}__{tool} was not recorded: {problem}",
                      file=sys.stderr)
        finally:
            self._pending -= 1
            if self._pending == 0:
                self._idle.set()
