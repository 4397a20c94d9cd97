"""Reading an evaluation's JSONL data: one JSON object per line, and an error naming the line that is not one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path


def json_objects(path: Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of `path`; a line that is not a JSON object is a ValueError
    naming the file and the line."""
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{number}: needs a JSON object, not {type(row).__name__}")
        yield number, row
