"""The `[proxy]` table of config.toml: which MCP servers the proxy fronts, checked by hand so start-up needs no pydantic."""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

SEPARATOR = "__"  # github + create_issue -> github__create_issue
DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 60.0  # `npx -y` may download the server on its first start
DEFAULT_LIST_WAIT = 5.0
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_)){0,31}")
PROXY_KEYS = ("upstreams", "upstream_timeout", "connect_timeout", "list_wait_seconds", "tools")
TOOL_PROFILES = ("default", "full")  # cortexd's own tools a proxy lists: the everyday set, or every tool
UPSTREAM_KEYS = ("name", "command", "url", "env", "cwd", "headers", "allow_tools", "deny_tools", "capture", "timeout",
                 "connect_timeout")


@dataclass(frozen=True)
class UpstreamConfig:
    """One upstream MCP server: how to reach it, which of its tools to offer, and whether to observe its calls."""

    name: str
    command: tuple[str, ...] = ()  # stdio: the program and its arguments
    url: str = ""  # streamable HTTP: the endpoint, e.g. http://127.0.0.1:9000/mcp
    env: dict[str, str] = field(default_factory=dict)  # stdio: added to a minimal environment; ${VAR} is expanded
    cwd: str = ""
    headers: dict[str, str] = field(default_factory=dict)  # HTTP: sent with every request; ${VAR} is expanded
    allow_tools: tuple[str, ...] | None = None  # names or globs; None offers every tool
    deny_tools: tuple[str, ...] = ()
    capture: bool = False  # passive capture: each call's redacted arguments and result go to the daemon
    timeout: float = DEFAULT_CALL_TIMEOUT  # seconds per forwarded call
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT  # seconds to start and initialise

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def prefix(self) -> str:
        return self.name + SEPARATOR

    def offers(self, tool: str) -> bool:
        """Allowed by allow_tools (when given) and not denied by deny_tools."""
        allowed = self.allow_tools is None or any(fnmatch.fnmatchcase(tool, p) for p in self.allow_tools)
        return allowed and not any(fnmatch.fnmatchcase(tool, p) for p in self.deny_tools)

    def describe(self) -> str:
        return self.url or " ".join(self.command)


@dataclass(frozen=True)
class ProxySettings:
    upstreams: tuple[UpstreamConfig, ...] = ()
    # The first tools/list waits this long for upstreams that are still starting; later ones never wait.
    list_wait_seconds: float = DEFAULT_LIST_WAIT
    tools: str = "default"


def load_proxy_settings(path: Path) -> ProxySettings:
    """The file's `[proxy]` table; no file or no table means no upstreams. A bad key or value raises ValueError naming it."""
    if not path.is_file():
        return ProxySettings()
    import tomllib

    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"{path}: not valid TOML: {error}") from None
    try:
        return proxy_settings_from(document.get("proxy", {}))
    except ValueError as problem:
        raise ValueError(f"invalid configuration ({path}): {problem}") from None


def proxy_settings_from(table: object) -> ProxySettings:
    if not isinstance(table, dict):
        raise ValueError("proxy: must be a table ([proxy])")
    _no_unknown_keys(table, PROXY_KEYS, "proxy")
    call_timeout = _seconds(table.get("upstream_timeout", DEFAULT_CALL_TIMEOUT), "proxy.upstream_timeout")
    connect_timeout = _seconds(table.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT), "proxy.connect_timeout")
    list_wait = _seconds(table.get("list_wait_seconds", DEFAULT_LIST_WAIT), "proxy.list_wait_seconds", allow_zero=True)
    tools = table.get("tools", "default")
    if tools not in TOOL_PROFILES:
        raise ValueError(f"proxy.tools: {str(tools)[:40]!r} is not one of: {', '.join(TOOL_PROFILES)}")
    entries = table.get("upstreams", [])
    if not isinstance(entries, list):
        raise ValueError("proxy.upstreams: must be an array of tables ([[proxy.upstreams]])")
    upstreams = tuple(_upstream(entry, f"proxy.upstreams[{i}]", call_timeout, connect_timeout)
                      for i, entry in enumerate(entries))
    seen: set[str] = set()
    for i, upstream in enumerate(upstreams):
        if upstream.name in seen:
            raise ValueError(f"proxy.upstreams[{i}].name: {upstream.name!r} is used twice; names must be unique")
        seen.add(upstream.name)
    return ProxySettings(upstreams, list_wait, tools)


def _upstream(entry: object, where: str, call_timeout: float, connect_timeout: float) -> UpstreamConfig:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: must be a table")
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"{where}.name: expected 1-32 letters, digits, '-' or single '_' starting with a letter or "
                         f"digit (its tools become <name>{SEPARATOR}<tool>), got {name!r}")
    where = f"{where} ({name})"
    _no_unknown_keys(entry, UPSTREAM_KEYS, where)
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise ValueError(f"{where}: give exactly one of command (stdio) or url (streamable HTTP)")
    command: tuple[str, ...] = ()
    url = ""
    if has_command:
        command = _strings(entry["command"], f"{where}.command")
        if not command or not command[0]:
            raise ValueError(f"{where}.command: expected the program and its arguments, e.g. [\"npx\", \"-y\", \"...\"]")
    else:
        url = entry["url"]
        if not isinstance(url, str) or not re.match(r"https?://[^/\s]+", url):
            raise ValueError(f"{where}.url: expected an http:// or https:// URL, got {url!r}")
    for key, applies in (("env", has_command), ("cwd", has_command), ("headers", has_url)):
        if key in entry and not applies:
            raise ValueError(f"{where}.{key}: only applies to {'stdio (command)' if key != 'headers' else 'HTTP (url)'} upstreams")
    cwd = entry.get("cwd", "")
    if not isinstance(cwd, str):
        raise ValueError(f"{where}.cwd: expected a string, got {cwd!r}")
    capture = entry.get("capture", False)
    if not isinstance(capture, bool):
        raise ValueError(f"{where}.capture: expected true or false, got {capture!r}")
    allow = entry.get("allow_tools")
    return UpstreamConfig(
        name=name, command=command, url=url,
        env=_string_table(entry.get("env", {}), f"{where}.env"), cwd=cwd,
        headers=_string_table(entry.get("headers", {}), f"{where}.headers"),
        allow_tools=None if allow is None else _strings(allow, f"{where}.allow_tools"),
        deny_tools=_strings(entry.get("deny_tools", []), f"{where}.deny_tools"),
        capture=capture,
        timeout=_seconds(entry.get("timeout", call_timeout), f"{where}.timeout"),
        connect_timeout=_seconds(entry.get("connect_timeout", connect_timeout), f"{where}.connect_timeout"),
    )


def _no_unknown_keys(table: dict, known: tuple[str, ...], where: str) -> None:
    unknown = sorted(set(table) - set(known))
    if unknown:
        raise ValueError(f"{where}.{unknown[0]}: unknown key (known: {', '.join(known)})")


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{where}: expected a list of strings, got {value!r}")
    return tuple(value)


def _string_table(value: object, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{where}: expected a table of strings, e.g. {{ NAME = \"value\" }}")
    return dict(value)


def _seconds(value: object, where: str, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or value < 0 or (value == 0 and not allow_zero) or value > 3600:
        low = "0" if allow_zero else "more than 0"
        raise ValueError(f"{where}: expected seconds, {low} to 3600, got {value!r}")
    return float(value)
