"""Copies a dataset's splits beside a training run, so a dataset rebuilt mid-run cannot mix versions, with provenance."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path


def snapshot_splits(paths: dict[str, Path], into: Path, shown: Path, count: Callable[[Path], int]) -> dict:
    """Copy each split into `into`; per split its file (relative to `shown`, the repo, so a manifest does not name a
    machine), sha256 and example count (`count` reads a copied file with the model's own loader)."""
    from preprocessing.registry import sha256_of

    into.mkdir(parents=True, exist_ok=True)
    provenance = {}
    for split, path in paths.items():
        copy = into / path.name
        shutil.copyfile(path, copy)
        source = path.resolve()
        provenance[split] = {
            "file": str(source.relative_to(shown)) if shown in source.parents else str(source),
            "sha256": sha256_of(copy),
            "examples": count(copy),
        }
    return provenance
