"""Where config.toml lives, and one of its tables read raw with its CORTEXD_* overrides; no pydantic, so hooks start fast."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

CONFIG_ENV = "CORTEXD_CONFIG"


def config_path() -> Path:
    override = os.environ.get(CONFIG_ENV, "").strip()
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("cortexd")) / "config.toml"


def raw_table(table: str, fields: Iterable[str], prefix: str, path: Path | None = None,
              environ: Mapping[str, str] | None = None) -> tuple[Path, dict[str, object]]:
    """The file's `[table]` values, each overridden by a `<prefix><FIELD>` variable; unvalidated, with the file's path."""
    environ = os.environ if environ is None else environ
    path = path or config_path()
    values: dict[str, object] = {}
    if path.is_file():
        import tomllib  # only when there is a file: a hook without one saves the import

        try:
            section = tomllib.loads(path.read_text(encoding="utf-8")).get(table, {})
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"{path}: not valid TOML: {error}") from None
        if not isinstance(section, dict):
            raise ValueError(f"{path}: [{table}] must be a table")
        values.update(section)
    for name in fields:
        raw = environ.get(f"{prefix}{name.upper()}")
        if raw is not None:
            values[name] = raw
    return path, values
