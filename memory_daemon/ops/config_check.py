"""Validates config.toml as every reader of it would: `serve` refuses to start on a problem, `doctor` reports it."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path


def unknown_tables(path: Path) -> list[str]:
    """One line per table the file names that nothing reads ("[retreival]" is probably "[retrieval]")."""
    if not path.is_file():
        return []
    import tomllib

    from memory_daemon.ops.config_report import config_tables

    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        return [f"{path}: not valid TOML: {error}"]
    known = [table.name for table in config_tables()]
    problems = []
    for table in sorted(set(document) - set(known)):
        close = difflib.get_close_matches(table, known, n=1)
        hint = f"; did you mean [{close[0]}]?" if close else ""
        problems.append(f"{path}: unknown table [{table}] (known: {', '.join(known)}){hint}")
    return problems


def config_problems(path: Path | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """Every problem of config.toml and its CORTEXD_* variables, as serve, the hooks and the proxy would meet it:
    each table through the loader `cortexd config show` uses (config_report.config_tables)."""
    from memory_daemon.core.config_file import config_path
    from memory_daemon.ops.config_report import config_tables

    path = path or config_path()
    problems = unknown_tables(path)
    if problems and "not valid TOML" in problems[0]:
        return problems
    for table in config_tables():
        try:
            table.load(path, None if environ is None else dict(environ))
        except ValueError as error:
            problems.append(str(error))
    return problems
