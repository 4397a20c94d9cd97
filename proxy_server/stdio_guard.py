"""Reads the host's stdin as bytes, one JSON-RPC message a line: a line that is not UTF-8, not JSON or not a JSON-RPC
message is answered with a JSON-RPC error that keeps the request's id whenever it can be read."""

from __future__ import annotations

import json
import re

import mcp_types as types
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

_SPACE = re.compile(r"\s*")
_SURROGATE = re.compile("[\ud800-\udfff]")


class NoLines:
    """The stdin handed to the SDK's stdio_server, which would decode it with errors="replace" (invalid UTF-8
    stored as U+FFFD): the proxy reads stdin itself, in read_host_messages."""

    def __aiter__(self):
        return self

    async def __anext__(self):
        raise StopAsyncIteration


async def read_host_messages(lines, messages, replies) -> None:
    """Each line of `lines` (bytes) validated as a JSON-RPC message and sent on `messages`, or answered with an
    error on `replies`; `messages` is closed at the end of input."""
    async with messages:
        async for raw in lines:
            line = raw.strip()
            if not line:
                continue
            try:
                message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except ValidationError as error:
                await replies.send(SessionMessage(rejection(line, error)))
                continue
            await messages.send(SessionMessage(message))


def rejection(line: bytes, error: ValidationError) -> types.JSONRPCError:
    """The error reply to a line that is not a JSON-RPC message."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as bad:
        problem = types.ErrorData(code=types.PARSE_ERROR,
                                  message=f"Parse error: the line is not valid UTF-8 (byte {bad.start})")
    else:
        invalid_json = next((e["msg"] for e in error.errors() if e.get("type") == "json_invalid"), None)
        if invalid_json is not None:
            problem = types.ErrorData(code=types.PARSE_ERROR, message=f"Parse error: the line is not valid JSON "
                                                                      f"({invalid_json})")
        else:
            problem = _invalid_request(line)
    return types.JSONRPCError(jsonrpc="2.0", id=request_id(line), error=problem)


def _invalid_request(line: bytes) -> types.ErrorData:
    document = _document(line)
    if isinstance(document, dict) and isinstance(document.get("method"), str) \
            and not isinstance(document.get("params", {}), (dict, type(None))):
        return types.ErrorData(code=types.INVALID_PARAMS,
                               message=f"Invalid params: {document['method'][:80]}: params must be an object")
    return types.ErrorData(code=types.INVALID_REQUEST, message="Invalid request: not a JSON-RPC 2.0 message")


def request_id(line: bytes) -> str | int | None:
    """The request's id if the line shows one: from the whole line when it parses, else from the members before
    the first one nested too deeply to parse. An id that is itself not valid text is not echoed."""
    document = _document(line)
    if document is None:
        document = _leading_members(line.decode("utf-8", errors="surrogateescape"))
    found = document.get("id") if isinstance(document, dict) else None
    if isinstance(found, bool) or not isinstance(found, (str, int)):
        return None
    return None if isinstance(found, str) and _SURROGATE.search(found) else found


def _document(line: bytes) -> object:
    try:
        return json.loads(line.decode("utf-8", errors="surrogateescape"))
    except (ValueError, RecursionError):
        return None


def _leading_members(text: str) -> dict:
    """The members of a JSON object read one by one, up to the first that does not parse."""
    decoder = json.JSONDecoder()
    members: dict = {}
    position = _SPACE.match(text, 0).end()
    if not text.startswith("{", position):
        return members
    position += 1
    try:
        while True:
            key, position = decoder.raw_decode(text, _SPACE.match(text, position).end())
            position = _SPACE.match(text, position).end()
            if not isinstance(key, str) or not text.startswith(":", position):
                return members
            members[key], position = decoder.raw_decode(text, _SPACE.match(text, position + 1).end())
            position = _SPACE.match(text, position).end()
            if not text.startswith(",", position):
                return members
            position += 1
    except (ValueError, RecursionError):
        return members
