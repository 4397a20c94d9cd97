"""Connects MCP hosts to cortexd: prints or merges the proxy's entry into a host's config, and Claude Code's hooks."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memory_daemon.client.hooks import CLAUDE_CODE_EVENT_NAMES
from memory_daemon.ops.installed import cortexd_command, current_platform, location_environment, write_atomically

HOSTS = ("claude-desktop", "claude-code", "cursor")
HOST_TITLES = {"claude-desktop": "Claude Desktop", "claude-code": "Claude Code", "cursor": "Cursor"}
SERVER_NAME = "cortexd"
# Claude Code hook events (https://code.claude.com/docs/en/hooks) and the `cortexd hook` event each one runs.
HOOK_EVENTS = {event: verb for verb, event in CLAUDE_CODE_EVENT_NAMES.items()}
# Claude Code's kill timeout in seconds; the hook keeps its own much shorter deadline ([hooks] deadline_ms) and
# this only has to cover the interpreter starting on a busy machine.
HOOK_TIMEOUT_S = 10


class HostConfigError(Exception):
    """A host's config file cannot be merged safely; nothing was changed, and the message says why."""


def host_config_path(host: str, platform: str | None = None, home: Path | None = None) -> Path:
    """Where the host reads its MCP servers from (user scope)."""
    home = home or Path.home()
    platform = platform or current_platform()
    if host == "claude-code":
        return home / ".claude.json"  # user-scope servers: its top-level "mcpServers"
    if host == "cursor":
        return home / ".cursor" / "mcp.json"
    if host == "claude-desktop":
        if platform == "macos":
            return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        if platform == "linux":
            config_home = os.environ.get("XDG_CONFIG_HOME", "").strip()
            return (Path(config_home) if config_home else home / ".config") / "Claude" / "claude_desktop_config.json"
        raise HostConfigError(f"no known Claude Desktop config location on {platform}")
    raise HostConfigError(f"unknown host {host!r}; expected one of {', '.join(HOSTS)}")


def claude_code_settings_path(home: Path | None = None) -> Path:
    return (home or Path.home()) / ".claude" / "settings.json"


@dataclass(frozen=True)
class ServerEntry:
    """How a host starts `cortexd proxy`."""

    command: str
    args: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    # Claude Code's own `claude mcp add` writes the transport; the other hosts take stdio as given.
    declares_transport: bool = False

    def as_json(self) -> dict:
        entry: dict = {"type": "stdio"} if self.declares_transport else {}
        entry.update({"command": self.command, "args": list(self.args)})
        if self.env:
            entry["env"] = dict(self.env)
        return entry

    def matches(self, existing: object) -> bool:
        """The same server, whichever host wrote it (an empty "env" or a "type" of stdio changes nothing)."""
        return (isinstance(existing, dict) and existing.get("command") == self.command
                and list(existing.get("args") or []) == list(self.args)
                and (existing.get("env") or {}) == self.env and existing.get("type", "stdio") == "stdio")


def server_entry(host: str, namespace: str | None = None, environ: Mapping[str, str] | None = None) -> ServerEntry:
    command = cortexd_command()
    args = [*command[1:], "proxy"] + (["--namespace", namespace] if namespace else [])
    # A host starts the proxy without the shell's environment; without these it would auto-start a daemon on
    # another store than the one this shell uses.
    return ServerEntry(command[0], tuple(args), location_environment(environ), declares_transport=host == "claude-code")


def hook_command(event: str, namespace: str | None = None) -> str:
    """The shell command Claude Code runs for a hook event (it runs hooks through a shell, so the words are quoted)."""
    words = [*cortexd_command(), "hook", HOOK_EVENTS[event]] + (["--namespace", namespace] if namespace else [])
    return shlex.join(words)


@dataclass(frozen=True)
class MergeOutcome:
    """What a merge did to one file: what changed (empty when nothing needed to), and where the old file was kept."""

    path: Path
    changes: tuple[str, ...]
    backup: Path | None


def read_json_object(path: Path) -> dict:
    """The file's JSON object; an absent or blank file is an empty one. Anything else that is not an object refuses."""
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise HostConfigError(f"cannot read {path}: {error}; nothing was changed") from None
    if not text.strip():
        return {}
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise HostConfigError(f"{path} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}); "
                              "fix or move it, then run this again; nothing was changed") from None
    if not isinstance(document, dict):
        raise HostConfigError(f"{path} holds a JSON {type(document).__name__}, not an object; nothing was changed")
    return document


def _object_at(document: dict, key: str, path: Path) -> dict:
    value = document.setdefault(key, {})
    if not isinstance(value, dict):
        raise HostConfigError(f'{path}: "{key}" is a {type(value).__name__}, expected an object; nothing was changed')
    return value


def merge_server(path: Path, entry: ServerEntry) -> MergeOutcome:
    """Put the cortexd entry under "mcpServers", keeping every other server and key."""
    document = read_json_object(path)
    servers = _object_at(document, "mcpServers", path)
    existing = servers.get(SERVER_NAME)
    if entry.matches(existing):
        return MergeOutcome(path, (), None)
    if existing is None:
        change = f'added "{SERVER_NAME}" to mcpServers'
    else:
        before = existing.get("command") if isinstance(existing, dict) else existing
        change = f'replaced the "{SERVER_NAME}" server (it ran {before})'
    servers[SERVER_NAME] = entry.as_json()
    return MergeOutcome(path, (change,), _save(path, document))


def merge_hooks(path: Path, namespace: str | None = None) -> MergeOutcome:
    """Add the cortexd hook commands to Claude Code's settings, keeping every other hook and key."""
    document = read_json_object(path)
    hooks = _object_at(document, "hooks", path)
    changes: list[str] = []
    for event, verb in HOOK_EVENTS.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise HostConfigError(f'{path}: "hooks.{event}" is a {type(groups).__name__}, expected a list; '
                                  "nothing was changed")
        wanted = {"type": "command", "command": hook_command(event, namespace), "timeout": HOOK_TIMEOUT_S}
        ours = [hook for group in groups if isinstance(group, dict) and isinstance(group.get("hooks"), list)
                for hook in group["hooks"] if isinstance(hook, dict) and _is_cortexd_hook(hook.get("command"), verb)]
        if any(hook.get("command") == wanted["command"] and hook.get("timeout") == HOOK_TIMEOUT_S for hook in ours):
            continue
        if ours:
            # An older install (another venv, another namespace): point it at this one rather than run both.
            ours[0].update(wanted)
            changes.append(f"updated the {event} hook")
        else:
            # No matcher: UserPromptSubmit takes none, and for SessionStart it means every way a session starts.
            groups.append({"hooks": [wanted]})
            changes.append(f"added a {event} hook")
    if not changes:
        return MergeOutcome(path, (), None)
    return MergeOutcome(path, tuple(changes), _save(path, document))


def _is_cortexd_hook(command: object, verb: str) -> bool:
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    runs_cortexd = bool(words) and (Path(words[0]).name == "cortexd" or words[1:3] == ["-m", "memory_daemon"])
    return runs_cortexd and any(words[i:i + 2] == ["hook", verb] for i in range(len(words) - 1))


def _save(path: Path, document: dict) -> Path | None:
    """Keep a timestamped copy of the old file beside it, then write the new one; returns the copy's path."""
    backup = None
    if path.exists():
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = path.with_name(f"{path.name}.bak-{stamp}")
        serial = 1
        while backup.exists():
            backup = path.with_name(f"{path.name}.bak-{stamp}-{serial}")
            serial += 1
        shutil.copy2(path, backup)  # keeps the mode: ~/.claude.json holds credentials and is private
    write_atomically(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n",
                     None if path.exists() else 0o600)
    return backup


def run_mcp_config_verb(args: argparse.Namespace) -> int:
    """`cortexd mcp-config HOST [--install] [--namespace NS] [--install-hooks]`."""
    host = args.host
    try:
        if args.install_hooks and host != "claude-code":
            raise HostConfigError("--install-hooks is for claude-code only (the hooks are Claude Code's)")
        entry = server_entry(host, args.namespace)
        path = host_config_path(host)
        if args.install:
            if _report(merge_server(path, entry), "the cortexd server"):
                print(f"restart {HOST_TITLES[host]} to load it")
        else:
            print(json.dumps({"mcpServers": {SERVER_NAME: entry.as_json()}}, indent=2))
            print(f"(add this to {path}, or run `cortexd mcp-config {host} --install`)", file=sys.stderr)
        if args.install_hooks:
            if _report(merge_hooks(claude_code_settings_path(), args.namespace), "the cortexd hooks"):
                print("new Claude Code sessions run them")
    except (HostConfigError, OSError) as error:
        print(f"cortexd: {error}", file=sys.stderr)
        return 2
    return 0


def _report(outcome: MergeOutcome, unchanged: str) -> bool:
    """Say what the merge did; True when it changed the file."""
    if not outcome.changes:
        print(f"already configured: {unchanged} in {outcome.path}")
        return False
    print(f"{outcome.path}: {'; '.join(outcome.changes)}")
    if outcome.backup:
        print(f"  previous version kept as {outcome.backup}")
    return True
