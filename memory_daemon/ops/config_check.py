"""Validates config.toml as every reader of it would: `serve` refuses to start on a problem, `doctor` reports it."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

# Every table config.toml may hold, and who reads it.
KNOWN_TABLES = {"activation": "the daemon", "retrieval": "the daemon", "store": "the daemon",
                "redaction": "the daemon", "hooks": "the hooks", "proxy": "the proxy"}


def unknown_tables(path: Path) -> list[str]:
    """One line per table the file names that nothing reads ("[retreival]" is probably "[retrieval]")."""
    if not path.is_file():
        return []
    import tomllib

    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        return [f"{path}: not valid TOML: {error}"]
    problems = []
    for table in sorted(set(document) - set(KNOWN_TABLES)):
        close = difflib.get_close_matches(table, KNOWN_TABLES, n=1)
        hint = f"; did you mean [{close[0]}]?" if close else ""
        problems.append(f"{path}: unknown table [{table}] (known: {', '.join(KNOWN_TABLES)}){hint}")
    return problems


def config_problems(path: Path | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """Every problem of config.toml and its CORTEXD_* variables, as serve, the hooks and the proxy would meet it."""
    from memory_daemon.client.hooks import load_hook_settings
    from memory_daemon.core.config import (
        load_activation_settings, load_redaction_settings, load_retrieval_settings, load_store_settings,
    )
    from memory_daemon.core.config_file import config_path
    from proxy_server.upstream_config import load_proxy_settings

    path = path or config_path()
    problems = unknown_tables(path)
    if problems and "not valid TOML" in problems[0]:
        return problems
    for load in (load_activation_settings, load_retrieval_settings, load_store_settings, load_redaction_settings,
                 load_hook_settings):
        try:
            load(path, None if environ is None else dict(environ))
        except ValueError as error:
            problems.append(str(error))
    try:
        load_proxy_settings(path)
    except ValueError as error:
        problems.append(str(error))
    return problems
