"""`cortexd config show|path`: the configuration the daemon would run with, each value with where it came from."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

DEFAULT = "default"


@dataclass(frozen=True)
class EffectiveSetting:
    key: str
    value: object
    source: str  # DEFAULT, the config file's path, or the name of the environment variable that set it


@dataclass(frozen=True)
class ConfigTable:
    """A `[table]` of config.toml: its fields, the prefix of their environment overrides, and its validating loader."""

    name: str
    env_prefix: str
    fields: tuple[str, ...]
    load: Callable[[Path | None, Mapping[str, str] | None], object]


@dataclass(frozen=True)
class EffectiveConfig:
    config_file: Path
    config_file_exists: bool
    settings: tuple[EffectiveSetting, ...]
    ignored: tuple[str, ...]  # top-level keys of the file that no table reads


def config_tables() -> tuple[ConfigTable, ...]:
    from memory_daemon.core.config import (
        ActivationSettings, RedactionSettings, RetrievalSettings, StoreSettings, load_activation_settings,
        load_redaction_settings, load_retrieval_settings, load_store_settings,
    )
    from memory_daemon.client.hooks import HOOK_FIELDS, load_hook_settings

    return (
        ConfigTable("activation", "CORTEXD_", tuple(ActivationSettings.model_fields), load_activation_settings),
        ConfigTable("retrieval", "CORTEXD_RETRIEVAL_", tuple(RetrievalSettings.model_fields), load_retrieval_settings),
        ConfigTable("store", "CORTEXD_STORE_", tuple(StoreSettings.model_fields), load_store_settings),
        ConfigTable("redaction", "CORTEXD_REDACTION_", tuple(RedactionSettings.model_fields), load_redaction_settings),
        ConfigTable("hooks", "CORTEXD_HOOKS_", HOOK_FIELDS, load_hook_settings),
        ConfigTable("proxy", "CORTEXD_PROXY_", ("upstreams", "list_wait_seconds"), _proxy_summary),
    )


def _proxy_summary(path: Path | None, environ: Mapping[str, str] | None) -> object:
    """The upstreams `cortexd proxy` would front, one line each (the table has no environment overrides)."""
    from types import SimpleNamespace

    from memory_daemon.core.config_file import config_path
    from proxy_server.upstream_config import load_proxy_settings

    settings = load_proxy_settings(path or config_path())
    return SimpleNamespace(list_wait_seconds=settings.list_wait_seconds, upstreams=[
        f"{u.name}: {u.transport} {u.describe()}" + (" (capture)" if u.capture else "") for u in settings.upstreams])


def effective_config() -> EffectiveConfig:
    """Every setting as the daemon (and the hooks) would load it now; a bad key or value raises ValueError naming it."""
    import tomllib

    from cortexd.connect import ADDRESS_ENV, TOKEN_FILE_ENV, resolve_address
    from memory_daemon.core.config import DATA_DIR_ENV, default_data_dir
    from memory_daemon.core.config_file import CONFIG_ENV, config_path, raw_table
    from preprocessing.registry import MODELS_DIR_ENV, models_dir

    environ = os.environ
    path = config_path()

    def chosen_by(variable: str) -> str:
        return variable if environ.get(variable, "").strip() else DEFAULT

    settings = [
        EffectiveSetting("config_file", str(path), chosen_by(CONFIG_ENV)),
        EffectiveSetting("data_dir", str(default_data_dir()), chosen_by(DATA_DIR_ENV)),
        EffectiveSetting("address", resolve_address(), chosen_by(ADDRESS_ENV)),
        EffectiveSetting("token_file", environ.get(TOKEN_FILE_ENV, "").strip() or None, chosen_by(TOKEN_FILE_ENV)),
        EffectiveSetting("models_dir", str(models_dir()), chosen_by(MODELS_DIR_ENV)),
    ]
    tables = config_tables()
    for table in tables:
        loaded = table.load(path, environ)  # validates: the values shown are the ones the daemon would accept
        _, from_file = raw_table(table.name, table.fields, table.env_prefix, path, environ={})
        for name in table.fields:
            variable = f"{table.env_prefix}{name.upper()}"
            # The loaders' precedence: environment over file over default.
            source = variable if variable in environ else str(path) if name in from_file else DEFAULT
            settings.append(EffectiveSetting(f"{table.name}.{name}", getattr(loaded, name), source))
    ignored: tuple[str, ...] = ()
    if path.is_file():
        known = {table.name for table in tables}
        document = tomllib.loads(path.read_text(encoding="utf-8"))  # valid: the loaders above parsed it
        ignored = tuple(f"[{key}]" if isinstance(value, dict) else key
                        for key, value in document.items() if key not in known)
    return EffectiveConfig(path, path.is_file(), tuple(settings), ignored)


def _as_toml(value: object) -> str:
    if value is None:
        return "(not set)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value) if isinstance(value, str) else str(value)


def run_config_verb(args: argparse.Namespace) -> int:
    """`cortexd config show [--json]` and `cortexd config path`."""
    if args.config_verb == "path":
        from memory_daemon.core.config_file import config_path

        print(config_path())
        return 0
    try:
        config = effective_config()
    except ValueError as error:
        print(f"cortexd: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps({
            "config_file": str(config.config_file),
            "config_file_exists": config.config_file_exists,
            "settings": {s.key: {"value": s.value, "source": s.source} for s in config.settings},
            "ignored": list(config.ignored),
        }, indent=2, default=str))
        return 0
    presence = "" if config.config_file_exists else " (not present: every table has its defaults)"
    print(f"# config file: {config.config_file}{presence}")
    width = max(len(f"{s.key} = {_as_toml(s.value)}") for s in config.settings)
    for setting in config.settings:
        print(f"{f'{setting.key} = {_as_toml(setting.value)}':<{width}}  # {setting.source}")
    for key in config.ignored:
        print(f"# ignored: {key} in {config.config_file} is not a cortexd table (known: "
              f"{', '.join(t.name for t in config_tables())})")
    return 0
