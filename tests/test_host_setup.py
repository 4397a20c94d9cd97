"""`cortexd mcp-config`: the printed snippet, merges that keep everything else, backups, idempotence, refusals."""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
from pathlib import Path

import pytest

from memory_daemon.cli import main
from memory_daemon.ops.host_setup import host_config_path
from memory_daemon.ops.installed import cortexd_command


@pytest.fixture
def home(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("CORTEXD_") or name == "XDG_CONFIG_HOME":
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def backups_of(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.bak-*"))


def desktop_config(home: Path) -> Path:
    return home / ".config" / "Claude" / "claude_desktop_config.json"


def test_the_printed_snippet_runs_this_cortexd_and_changes_nothing(home, capsys):
    code, out, err = run(capsys, "mcp-config", "claude-desktop", "--namespace", "personal")
    assert code == 0
    command = cortexd_command()
    assert json.loads(out) == {"mcpServers": {"cortexd": {"command": command[0],
                                                          "args": [*command[1:], "proxy", "--namespace", "personal"]}}}
    assert Path(command[0]).is_absolute() and os.access(command[0], os.X_OK)
    assert str(desktop_config(home)) in err and not desktop_config(home).exists()


def test_the_snippet_carries_the_shells_data_dir(home, capsys, monkeypatch):
    # A host starts the proxy without the shell's environment; the proxy's auto-started daemon must use this store.
    monkeypatch.setenv("CORTEXD_DATA_DIR", str(home / "store"))
    code, out, _ = run(capsys, "mcp-config", "cursor")
    assert json.loads(out)["mcpServers"]["cortexd"]["env"] == {"CORTEXD_DATA_DIR": str(home / "store")}


def test_install_merges_keeping_other_servers_and_keys_with_a_backup(home, capsys):
    config = desktop_config(home)
    config.parent.mkdir(parents=True)
    original = {"globalShortcut": "Ctrl+Space",
                "mcpServers": {"filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}}}
    config.write_text(json.dumps(original, indent=4))
    original_bytes = config.read_bytes()

    code, out, _ = run(capsys, "mcp-config", "claude-desktop", "--install", "--namespace", "personal")
    assert code == 0 and 'added "cortexd" to mcpServers' in out and "restart Claude Desktop" in out
    merged = json.loads(config.read_text())
    assert merged["globalShortcut"] == "Ctrl+Space"
    assert merged["mcpServers"]["filesystem"] == original["mcpServers"]["filesystem"]
    assert merged["mcpServers"]["cortexd"]["args"][-3:] == ["proxy", "--namespace", "personal"]
    [backup] = backups_of(config)
    assert backup.read_bytes() == original_bytes and str(backup) in out

    code, out, _ = run(capsys, "mcp-config", "claude-desktop", "--install", "--namespace", "personal")
    assert code == 0 and out.startswith("already configured")
    assert backups_of(config) == [backup] and json.loads(config.read_text()) == merged


def test_install_creates_a_missing_file_privately(home, capsys):
    code, out, _ = run(capsys, "mcp-config", "cursor", "--install")
    path = home / ".cursor" / "mcp.json"
    assert code == 0 and json.loads(path.read_text())["mcpServers"]["cortexd"]["args"][-1] == "proxy"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and backups_of(path) == []


def test_an_older_cortexd_entry_is_replaced(home, capsys):
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"mcpServers": {"cortexd": {"command": "/old/venv/bin/cortexd", "args": ["proxy"]}}}')
    code, out, _ = run(capsys, "mcp-config", "cursor", "--install")
    assert code == 0 and "replaced" in out and "/old/venv/bin/cortexd" in out
    assert json.loads(path.read_text())["mcpServers"]["cortexd"]["command"] == cortexd_command()[0]
    assert len(backups_of(path)) == 1


@pytest.mark.parametrize("content", ['{"mcpServers": {"other": {}},}', "[1, 2]", '{"mcpServers": ["x"]}'])
def test_a_file_that_cannot_be_merged_is_refused_untouched(home, capsys, content):
    path = home / ".claude.json"
    path.write_text(content)
    code, out, err = run(capsys, "mcp-config", "claude-code", "--install")
    assert code == 2 and str(path) in err and "nothing was changed" in err
    assert path.read_text() == content and backups_of(path) == []


def test_claude_code_uses_its_user_scope_and_accepts_what_claude_mcp_add_wrote(home, capsys):
    path = home / ".claude.json"
    command = cortexd_command()
    # What `claude mcp add --scope user cortexd -- <cortexd> proxy` writes, among Claude Code's own keys.
    path.write_text(json.dumps({"numStartups": 7, "projects": {"/src/app": {"mcpServers": {}}},
                                "mcpServers": {"cortexd": {"type": "stdio", "command": command[0],
                                                           "args": [*command[1:], "proxy"], "env": {}}}}))
    code, out, _ = run(capsys, "mcp-config", "claude-code", "--install")
    assert code == 0 and out.startswith("already configured") and backups_of(path) == []

    path.write_text(json.dumps({"numStartups": 7, "projects": {"/src/app": {}}}))
    code, out, _ = run(capsys, "mcp-config", "claude-code", "--install")
    document = json.loads(path.read_text())
    assert document["numStartups"] == 7 and document["projects"] == {"/src/app": {}}
    assert document["mcpServers"]["cortexd"] == {"type": "stdio", "command": command[0], "args": [*command[1:], "proxy"]}


def test_hooks_are_added_once_and_other_hooks_kept(home, capsys):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    theirs = {"type": "command", "command": "~/bin/log-prompt.sh"}
    lint = {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "ruff check"}]}
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(ls:*)"]},
                                    "hooks": {"UserPromptSubmit": [{"hooks": [theirs]}], "PostToolUse": [lint]}}))

    code, out, _ = run(capsys, "mcp-config", "claude-code", "--install-hooks", "--namespace", "personal")
    assert code == 0 and "added a UserPromptSubmit hook; added a SessionStart hook" in out
    document = json.loads(settings.read_text())
    assert document["permissions"] == {"allow": ["Bash(ls:*)"]} and document["hooks"]["PostToolUse"] == [lint]
    prompt_groups = document["hooks"]["UserPromptSubmit"]
    assert prompt_groups[0] == {"hooks": [theirs]}
    [ours] = prompt_groups[1]["hooks"]
    assert ours["type"] == "command" and ours["timeout"] == 10
    assert shlex.split(ours["command"]) == [*cortexd_command(), "hook", "user-prompt", "--namespace", "personal"]
    [[session_start]] = [group["hooks"] for group in document["hooks"]["SessionStart"]]
    assert shlex.split(session_start["command"])[-4:] == ["hook", "session-start", "--namespace", "personal"]
    assert len(backups_of(settings)) == 1

    code, out, _ = run(capsys, "mcp-config", "claude-code", "--install-hooks", "--namespace", "personal")
    assert code == 0 and "already configured: the cortexd hooks" in out
    assert json.loads(settings.read_text()) == document and len(backups_of(settings)) == 1


def test_a_hook_from_an_older_install_is_updated_not_duplicated(home, capsys):
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    stale = {"type": "command", "command": "/old/venv/bin/cortexd hook user-prompt", "timeout": 10}
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"hooks": [stale]}]}}))
    assert run(capsys, "mcp-config", "claude-code", "--install-hooks")[0] == 0
    [group] = json.loads(settings.read_text())["hooks"]["UserPromptSubmit"]
    assert [shlex.split(hook["command"]) for hook in group["hooks"]] == [[*cortexd_command(), "hook", "user-prompt"]]


def test_the_hook_commands_are_ones_cortexd_accepts(home, capsys):
    assert run(capsys, "mcp-config", "claude-code", "--install-hooks", "--namespace", "personal")[0] == 0
    document = json.loads((home / ".claude" / "settings.json").read_text())
    for event in ("UserPromptSubmit", "SessionStart"):
        command = document["hooks"][event][0]["hooks"][0]["command"]
        checked = subprocess.run([*shlex.split(command), "--help"], capture_output=True, text=True, timeout=120)
        assert checked.returncode == 0, checked.stderr


def test_hooks_are_for_claude_code_only(home, capsys):
    code, _, err = run(capsys, "mcp-config", "cursor", "--install-hooks")
    assert code == 2 and "claude-code only" in err
    assert not (home / ".claude").exists()


def test_claude_desktop_config_locations(tmp_path):
    assert host_config_path("claude-desktop", "macos", tmp_path) == (
        tmp_path / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json")
    assert host_config_path("claude-code", "macos", tmp_path) == tmp_path / ".claude.json"
    assert host_config_path("cursor", "linux", tmp_path) == tmp_path / ".cursor" / "mcp.json"
