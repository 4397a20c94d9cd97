"""ISO-8601 parsing and formatting; the store keeps naive UTC timestamps."""

from __future__ import annotations

from datetime import datetime, timezone

from memory_daemon.core.errors import InvalidArgument


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def parse_iso(value: str, field: str) -> datetime | None:
    """Naive UTC from an ISO-8601 string; an empty string is None, a time without zone is taken as UTC."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        shown = repr(value[:64]) + ("…" if len(value) > 64 else "")
        raise InvalidArgument(f"{field}: {shown} is not an ISO-8601 time (e.g. 2026-03-01T12:00:00Z)") from None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(timezone.utc).replace(tzinfo=None)
    return parsed


def format_iso(value: datetime) -> str:
    return value.replace(tzinfo=timezone.utc).isoformat().replace("+00:00", "Z")
