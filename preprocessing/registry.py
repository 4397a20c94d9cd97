"""Finds model artifacts under models/ and checks each file against its manifest's sha256 before use."""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

MODELS_DIR_ENV = "CORTEXD_MODELS_DIR"


class ModelUnavailable(Exception):
    """An artifact is missing, corrupt or fails to load; the message says which and why."""


def models_dir() -> Path:
    """CORTEXD_MODELS_DIR, else the checkout's models/ beside the code, else the copy a wheel installed."""
    override = os.environ.get(MODELS_DIR_ENV, "").strip()
    if override:
        return Path(override)
    checkout = Path(__file__).resolve().parent.parent / "models"
    if checkout.is_dir():
        return checkout
    import importlib.util

    installed = importlib.util.find_spec("cortexd_models")
    return Path(next(iter(installed.submodule_search_locations))) if installed is not None else checkout


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class ModelStatus:
    """What `cortexd doctor` reports for one model."""

    name: str
    path: str
    ok: bool
    detail: str
    sha256: str = ""
    load_ms: float = 0.0
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class VerifiedModel:
    name: str
    directory: Path
    manifest: dict

    def file(self, filename: str) -> Path:
        return self.directory / filename


def manifest_digest(name: str, filename: str) -> str:
    manifest = json.loads((models_dir() / name / "manifest.json").read_text())
    return manifest["files"][filename]["sha256"]


def verified_model(name: str) -> VerifiedModel:
    """The model directory models/<name>, after every file in its manifest matched its sha256."""
    directory = models_dir() / name
    manifest_path = directory / "manifest.json"
    if not manifest_path.is_file():
        raise ModelUnavailable(f"{name}: no manifest at {manifest_path}")
    manifest = json.loads(manifest_path.read_text())
    for filename, expected in manifest.get("files", {}).items():
        path = directory / filename
        if not path.is_file():
            raise ModelUnavailable(f"{name}: {path} is missing")
        actual = sha256_of(path)
        if actual != expected["sha256"]:
            raise ModelUnavailable(f"{name}: {path} is corrupt (sha256 {actual[:12]}…, manifest says {expected['sha256'][:12]}…)")
    return VerifiedModel(name, directory, manifest)


def timed_load(name: str, path: str, loader):
    """Run loader(); return (result or None, ModelStatus) so a failed model degrades instead of crashing."""
    started = time.perf_counter()
    try:
        result = loader()
    except (ModelUnavailable, OSError, ValueError, RuntimeError, ImportError) as error:
        return None, ModelStatus(name, path, False, str(error), load_ms=round((time.perf_counter() - started) * 1000, 1))
    return result, ModelStatus(name, path, True, "loaded", load_ms=round((time.perf_counter() - started) * 1000, 1))
