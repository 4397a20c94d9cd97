"""What other programs need to start this installation of cortexd, and the safe way to write their files."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

# The variables that say *where* cortexd keeps and finds things. A service manager or an MCP host starts cortexd
# with its own environment, not the user's shell, so these are carried over explicitly or the started process
# would use another store or socket than the shell's `cortexd` does.
LOCATION_VARIABLES = ("CORTEXD_DATA_DIR", "CORTEXD_CONFIG", "CORTEXD_MODELS_DIR", "CORTEXD_ADDRESS", "CORTEXD_TOKEN_FILE")


def current_platform() -> str:
    """'linux', 'macos', or sys.platform as it is for anything else."""
    if sys.platform.startswith("linux"):
        return "linux"
    return "macos" if sys.platform == "darwin" else sys.platform


def cortexd_command() -> list[str]:
    """The `cortexd` entry point beside this interpreter (same venv, same version), else `python -m memory_daemon`."""
    # Not resolved: a venv's python is a symlink, and following it would leave the venv.
    interpreter = Path(os.path.abspath(sys.executable))
    entry_point = interpreter.parent / "cortexd"
    if entry_point.is_file() and os.access(entry_point, os.X_OK):
        return [str(entry_point)]
    return [str(interpreter), "-m", "memory_daemon"]


def location_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The location variables set (non-empty) in this environment, paths made absolute."""
    environ = os.environ if environ is None else environ
    carried: dict[str, str] = {}
    for name in LOCATION_VARIABLES:
        value = environ.get(name, "").strip()
        if value:
            is_path = name != "CORTEXD_ADDRESS"
            carried[name] = os.path.abspath(os.path.expanduser(value)) if is_path else value
    return carried


def write_atomically(path: Path, text: str, mode: int | None = None) -> None:
    """Replace path's content in one step (a crash leaves the old file or the new one, never half of it)."""
    # Write through a symlink (dotfiles managers link these files) instead of replacing the link with a file.
    path = path.resolve() if path.is_symlink() else path
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
