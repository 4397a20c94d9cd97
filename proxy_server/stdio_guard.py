"""Answers unparseable stdin lines with a JSON-RPC error, which the SDK's stdio transport silently drops."""

from __future__ import annotations

import anyio
import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError


def _error_for(exc: Exception) -> types.ErrorData:
    if isinstance(exc, ValidationError) and any(e.get("type") == "json_invalid" for e in exc.errors()):
        return types.ErrorData(code=types.PARSE_ERROR, message="Parse error: the line is not valid JSON")
    return types.ErrorData(code=types.INVALID_REQUEST, message=f"Invalid request: not a JSON-RPC 2.0 message ({type(exc).__name__})")


class ParseErrorReplyingStream:
    """Wraps the transport's read stream: malformed lines get an error reply (id null) and are skipped."""

    def __init__(self, inner, write_stream) -> None:
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self):
        return getattr(self._inner, "last_context", None)

    async def receive(self):
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            reply = types.JSONRPCError(jsonrpc="2.0", id=None, error=_error_for(item))
            await self._write.send(SessionMessage(reply))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()
