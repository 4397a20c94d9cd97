"""JSONL input: one JSON object per line, and an error naming the source and line of one that is not."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path


def json_objects(lines: Iterable[str], source: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line; a line that is not a JSON object is a ValueError naming
    `source` and the line."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{source}:{number}: not valid JSON ({error.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{source}:{number}: needs a JSON object, not {type(row).__name__}")
        yield number, row


def json_objects_in(path: Path) -> Iterator[tuple[int, dict]]:
    """json_objects of a UTF-8 file, named by its path."""
    return json_objects(Path(path).read_text(encoding="utf-8").splitlines(), str(path))
