"""Input checks every domain service shares; each rejection names the field and the limit."""

from __future__ import annotations

from memory_daemon.core.errors import InvalidArgument


def checked_text(value: str, field_name: str, limit: int, required: bool = True) -> str:
    """The text stripped; empty (when required) or longer than the limit is an error naming the field."""
    value = value.strip()
    if required and not value:
        raise InvalidArgument(f"{field_name} is empty")
    if len(value) > limit:
        raise InvalidArgument(f"{field_name} is {len(value)} characters; the limit is {limit}")
    return value
