"""Input checks every domain service shares; each rejection names the field and the limit."""

from __future__ import annotations

import json

from memory_daemon.core.errors import InvalidArgument

# Any JSON text the daemon reads (tool arguments, observed calls): deeper than this is refused before it is used,
# well below the depth at which Python's parser gives up with a RecursionError.
MAX_JSON_DEPTH = 64


def checked_text(value: str, field_name: str, limit: int, required: bool = True) -> str:
    """The text stripped; empty (when required) or longer than the limit is an error naming the field."""
    value = value.strip()
    if required and not value:
        raise InvalidArgument(f"{field_name} is empty")
    if len(value) > limit:
        raise InvalidArgument(f"{field_name} is {len(value)} characters; the limit is {limit}")
    return value


def json_depth(value: object) -> int:
    """How deeply objects and arrays nest in a JSON value: a scalar is 0, {} and [] are 1. No recursion, so a
    value nested a million deep is measured, not a crash."""
    deepest = 0
    pending = [(value, 1)] if isinstance(value, (dict, list)) else []
    while pending:
        item, level = pending.pop()
        deepest = max(deepest, level)
        children = item.values() if isinstance(item, dict) else item
        pending.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest


def checked_json(value: object, field_name: str, max_depth: int, max_bytes: int) -> str:
    """The value as compact JSON; nested deeper than max_depth, longer than max_bytes, or holding a number JSON
    cannot carry (NaN, infinity) is an error naming the field."""
    depth = json_depth(value)
    if depth > max_depth:
        raise InvalidArgument(f"{field_name} is nested {depth} levels deep; the limit is {max_depth}")
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        raise InvalidArgument(f"{field_name} holds NaN or an infinity, which JSON cannot carry") from None
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > max_bytes:
        raise InvalidArgument(f"{field_name} is {size} bytes of JSON; the limit is {max_bytes} bytes")
    return text


def loaded_json(text: str, field_name: str, max_depth: int = MAX_JSON_DEPTH) -> object:
    """JSON text parsed; invalid JSON, nesting deeper than max_depth, or an unpaired surrogate escape ("\\ud800",
    which is no text) is an error naming the field."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise InvalidArgument(f"{field_name} is nested too deeply to read; the limit is {max_depth} levels") from None
    except ValueError as error:
        raise InvalidArgument(f"{field_name} is not valid JSON: {error}") from None
    depth = json_depth(value)
    if depth > max_depth:
        raise InvalidArgument(f"{field_name} is nested {depth} levels deep; the limit is {max_depth}")
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidArgument(f"{field_name} holds an unpaired surrogate escape (\\ud800-\\udfff), which is not "
                              "text") from None
    return value
