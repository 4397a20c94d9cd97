"""`cortexd hook`: real hook processes fed recorded Claude Code events, against a real daemon (or none)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from conftest import CORTEXD
from memory_daemon.client.hooks import HookSettings, load_hook_settings

EVENTS = Path(__file__).parent / "data" / "hooks"


def recorded_event(name: str, **changes) -> dict:
    event = json.loads((EVENTS / name).read_text())
    event.update(changes)
    return event


def run_hook(kind: str, stdin: bytes | str | dict, address: str, *extra: str, **environment: str) -> subprocess.CompletedProcess:
    """One hook process, as Claude Code starts it: the event on stdin, stdout and stderr captured."""
    data = json.dumps(stdin) if isinstance(stdin, dict) else stdin
    inherited = {name: value for name, value in os.environ.items() if not name.startswith("CORTEXD_HOOK")}
    env = {**inherited, "CORTEXD_ADDRESS": address, "CORTEXD_CONFIG": os.devnull,
           # A generous deadline: these tests check behaviour, not speed, on a machine shared with other work.
           "CORTEXD_HOOKS_DEADLINE_MS": "10000", **environment}
    return subprocess.run([*CORTEXD, "hook", kind, *extra], input=data.encode() if isinstance(data, str) else data,
                          capture_output=True, env=env, timeout=60)


def added_context(result: subprocess.CompletedProcess) -> str:
    """What Claude Code adds to the conversation: hookSpecificOutput.additionalContext ('' for no output)."""
    assert result.returncode == 0, result.stderr
    if not result.stdout.strip():
        return ""
    output = json.loads(result.stdout)["hookSpecificOutput"]
    return output["additionalContext"]


@pytest.fixture
def project(workdir) -> Path:
    """A git checkout named `acme`: the hook's namespace comes from it, as the proxy's does."""
    checkout = workdir / "acme"
    (checkout / ".git").mkdir(parents=True)
    (checkout / "src").mkdir()
    return checkout


def warmed(daemon):
    with daemon.client("acme") as client:
        client.analyze_message(message="warm-up")  # waits for the models, which load in the background
    return daemon


@pytest.fixture
def warm_daemon(daemon):
    return warmed(daemon)


def test_an_explicit_request_is_saved_and_recalled_in_a_later_prompt(warm_daemon, project):
    event = recorded_event("claude_code_user_prompt_submit.json", cwd=str(project / "src"), session_id="session-1")
    saved = run_hook("user-prompt", event, warm_daemon.address)
    context = added_context(saved)
    assert context.startswith("<cortexd-memory>") and context.endswith("</cortexd-memory>")
    assert "Saved to long-term memory: remember that the staging DB is db-stg-2 [MEM:mem_" in context
    assert json.loads(saved.stdout)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"

    with warm_daemon.client("acme") as client:
        hits = client.search_memory(query="staging database").hits
    assert [h.memory.content for h in hits] == ["remember that the staging DB is db-stg-2"]
    assert hits[0].memory.session_id == "session-1" and hits[0].memory.source == "hook"

    later = recorded_event("claude_code_user_prompt_submit.json", cwd=str(project), session_id="session-2",
                           prompt="what's the staging db?")
    context = added_context(run_hook("user-prompt", later, warm_daemon.address))
    assert "Relevant long-term memory:" in context and "db-stg-2" in context and "[MEM:mem_" in context
    assert "Saved" not in context
    with warm_daemon.client("acme") as client:
        assert client.get_status().memory_count == 1  # the question itself was not saved


def test_the_namespace_follows_the_cwd_unless_given(warm_daemon, project, workdir):
    event = recorded_event("claude_code_user_prompt_submit.json", cwd=str(project))
    added_context(run_hook("user-prompt", event, warm_daemon.address, "--namespace", "elsewhere"))
    question = recorded_event("claude_code_user_prompt_submit.json", cwd=str(project), prompt="what's the staging db?")
    assert added_context(run_hook("user-prompt", question, warm_daemon.address)) == ""
    elsewhere = run_hook("user-prompt", question, warm_daemon.address, "--namespace", "elsewhere", "--text")
    assert "db-stg-2" in elsewhere.stdout.decode() and elsewhere.stdout.decode().startswith("<cortexd-memory>")


def test_the_hook_path_imports_nothing_heavy(warm_daemon, project):
    heavy = ("pydantic", "duckdb", "spacy", "onnxruntime", "numpy", "memory_daemon.core.config", "memory_daemon.store",
             "preprocessing")
    code = ("import sys; from memory_daemon.cli import main; main(['hook', 'user-prompt', '--text']); "
            f"print([m for m in {heavy!r} if m in sys.modules], file=sys.stderr)")
    event = recorded_event("claude_code_user_prompt_submit.json", cwd=str(project))
    env = {**os.environ, "CORTEXD_ADDRESS": warm_daemon.address, "CORTEXD_CONFIG": os.devnull,
           "CORTEXD_HOOKS_DEADLINE_MS": "10000"}
    result = subprocess.run([CORTEXD[0], "-c", code], input=json.dumps(event).encode(), capture_output=True, env=env,
                            timeout=60)
    assert b"Saved to long-term memory" in result.stdout  # the whole path ran: analyze, save, compile_context
    assert result.stderr.decode().strip() == "[]"


def test_session_start_brings_back_the_sessions_working_memory(warm_daemon, project):
    prompt = recorded_event("claude_code_user_prompt_submit.json", cwd=str(project), session_id="session-7")
    added_context(run_hook("user-prompt", prompt, warm_daemon.address))

    start = recorded_event("claude_code_session_start.json", cwd=str(project), session_id="session-7")
    result = run_hook("session-start", start, warm_daemon.address)
    context = added_context(result)
    assert json.loads(result.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Working memory of this session" in context
    assert "- remember that the staging DB is db-stg-2 [MEM:mem_" in context

    fresh = recorded_event("claude_code_session_start.json", cwd=str(project), session_id="new", source="startup")
    assert added_context(run_hook("session-start", fresh, warm_daemon.address)) == ""


def test_nothing_is_printed_when_there_is_nothing_relevant(warm_daemon, project):
    event = recorded_event("claude_code_user_prompt_submit.json", cwd=str(project), prompt="fix the typo in README.md")
    result = run_hook("user-prompt", event, warm_daemon.address)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def dead_socket(directory: Path) -> str:
    """A socket file nobody listens on: what a crashed daemon leaves behind."""
    path = directory / "dead.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.close()
    return f"unix:{path}"


@pytest.mark.parametrize("address", ["missing", "dead"])
def test_without_a_daemon_the_hook_exits_0_and_prints_nothing(workdir, project, address):
    address = f"unix:{workdir / 'absent.sock'}" if address == "missing" else dead_socket(workdir)
    for kind, recorded in (("user-prompt", "claude_code_user_prompt_submit.json"),
                           ("session-start", "claude_code_session_start.json")):
        result = run_hook(kind, recorded_event(recorded, cwd=str(project)), address)
        assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert not (workdir / "absent.sock").exists()  # and no daemon was started


@pytest.fixture(scope="module")
def warm_shared_daemon(module_daemon):
    """One warm daemon for cases that each store nothing (a fresh one each cost ≈ 6 s with the models)."""
    return warmed(module_daemon)


@pytest.mark.parametrize("stdin", [b"", b"not json", b"\xff\xfe", b"[1, 2]", b'{"prompt": 42}',
                                   json.dumps({"hook_event_name": "SessionStart", "prompt": "remember that x is y"}).encode()])
def test_bad_stdin_exits_0_silently(warm_shared_daemon, stdin):
    result = run_hook("user-prompt", stdin, warm_shared_daemon.address)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    with warm_shared_daemon.client("default") as client:
        assert client.get_status().memory_count == 0


def test_debug_mode_says_why_in_one_line(workdir):
    result = run_hook("user-prompt", b"not json", f"unix:{workdir / 'absent.sock'}", CORTEXD_HOOK_DEBUG="1")
    assert (result.returncode, result.stdout) == (0, b"")
    assert result.stderr.decode().splitlines() == ["cortexd hook: no usable event on stdin"]


def test_a_bad_config_never_breaks_the_prompt(workdir, project):
    config = workdir / "config.toml"
    config.write_text("[hooks]\nmax_tokens = 'many'\n")
    event = recorded_event("claude_code_user_prompt_submit.json", cwd=str(project))
    result = run_hook("user-prompt", event, f"unix:{workdir / 'absent.sock'}", CORTEXD_CONFIG=str(config),
                      CORTEXD_HOOK_DEBUG="1")
    assert (result.returncode, result.stdout) == (0, b"")
    assert "hooks.max_tokens" in result.stderr.decode()


def test_hook_settings_from_file_and_environment(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[hooks]\ndeadline_ms = 250\nauto_save_should = true\n")
    assert load_hook_settings(tmp_path / "absent.toml", environ={}) == HookSettings(300, False, 300)
    assert load_hook_settings(config, environ={}) == HookSettings(250, True, 300)
    assert load_hook_settings(config, environ={"CORTEXD_HOOKS_MAX_TOKENS": "120",
                                               "CORTEXD_HOOKS_AUTO_SAVE_SHOULD": "false"}) == HookSettings(250, False, 120)


@pytest.mark.parametrize(("text", "environ", "expected"), [
    ("[hooks]\ndeadline_ms = 5\n", {}, "hooks.deadline_ms"),
    ("[hooks]\ncolour = 'red'\n", {}, "hooks.colour"),
    ("", {"CORTEXD_HOOKS_AUTO_SAVE_SHOULD": "maybe"}, "hooks.auto_save_should"),
    ("[hooks\n", {}, "not valid TOML"),
])
def test_bad_hook_settings_name_the_key(tmp_path, text, environ, expected):
    config = tmp_path / "config.toml"
    config.write_text(text)
    with pytest.raises(ValueError, match=expected.replace(".", r"\.")):
        load_hook_settings(config, environ=environ)
