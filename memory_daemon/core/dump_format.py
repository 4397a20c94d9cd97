"""The dump format's name, version and line kinds: what `cortexd import` needs to tell a dump from plain records."""

from __future__ import annotations

import json

DUMP_FORMAT = "cortexd-dump"
FORMAT_VERSION = 1
HEADER_KIND = "header"
END_KIND = "end"
ROW_KINDS = ("memory", "memory_version", "tombstone", "entity", "fact", "episode", "decision", "relation",
             "purge")  # dump order


def is_dump_header(line: str) -> bool:
    """Whether a file's first non-blank line is a dump header (plain import records never carry this kind)."""
    try:
        first = json.loads(line)
    except ValueError:
        return False
    return isinstance(first, dict) and first.get("kind") == HEADER_KIND and first.get("format") == DUMP_FORMAT
