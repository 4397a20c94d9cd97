"""The proxy's default namespace: the name of the git repository it was started in, else `default`."""

from __future__ import annotations

import re
from pathlib import Path

from cortexd.connect import DEFAULT_NAMESPACE


def namespace_for(directory: Path) -> str:
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            name = re.sub(r"[^A-Za-z0-9._-]+", "-", candidate.name).strip("-._")[:64]
            return name or DEFAULT_NAMESPACE
    return DEFAULT_NAMESPACE
