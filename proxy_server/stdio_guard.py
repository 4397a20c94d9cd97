"""Answers unparseable stdin lines with a JSON-RPC error, which the SDK's stdio transport silently drops."""

from __future__ import annotations

import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from proxy_server.wrapped_stream import WrappedReadStream


def _error_for(exc: Exception) -> types.ErrorData:
    if isinstance(exc, ValidationError) and any(e.get("type") == "json_invalid" for e in exc.errors()):
        return types.ErrorData(code=types.PARSE_ERROR, message="Parse error: the line is not valid JSON")
    return types.ErrorData(code=types.INVALID_REQUEST, message=f"Invalid request: not a JSON-RPC 2.0 message ({type(exc).__name__})")


class ParseErrorReplyingStream(WrappedReadStream):
    """Wraps the transport's read stream: malformed lines get an error reply (id null) and are skipped."""

    def __init__(self, inner, write_stream) -> None:
        super().__init__(inner)
        self._write = write_stream

    async def receive(self):
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            reply = types.JSONRPCError(jsonrpc="2.0", id=None, error=_error_for(item))
            await self._write.send(SessionMessage(reply))
