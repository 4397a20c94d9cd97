"""`cortexd hook`: host hooks that save what a prompt asks to remember and add the memory relevant to it, within a deadline."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

# The deadline counts from here: this module is the hook process's first own work after the interpreter starts.
STARTED = time.monotonic()

EVENTS = ("user-prompt", "session-start")
DEBUG_ENV = "CORTEXD_HOOK_DEBUG"
MAX_STDIN_BYTES = 4 * 1024 * 1024
# Longer prompts are pasted logs or files: analysing them costs the daemon far more than the deadline allows,
# and an explicit "remember …" request is short.
MAX_ANALYZED_CHARS = 2000
MAX_TASK_CHARS = 1000  # of the prompt, sent to compile_context as the task
BLOCK_OPEN, BLOCK_CLOSE = "<cortexd-memory>", "</cortexd-memory>"


@dataclass(frozen=True)
class HookEvent:
    """One host event in host-neutral terms: which event, in which session and directory, and what the user wrote."""

    kind: str  # one of EVENTS
    session_id: str
    cwd: str
    prompt: str = ""
    source: str = ""  # session-start: how the session began (Claude Code: startup, resume, clear or compact)


@dataclass(frozen=True)
class HostAdapter:
    """How one host hands an event to a hook command on stdin, and how it takes context back on stdout."""

    parse: Callable[[bytes, str], HookEvent | None]
    render: Callable[[HookEvent, str], str]


CLAUDE_CODE_EVENT_NAMES = {"user-prompt": "UserPromptSubmit", "session-start": "SessionStart"}


def parse_claude_code_event(raw: bytes, expected_kind: str) -> HookEvent | None:
    """A Claude Code hook input (https://code.claude.com/docs/en/hooks); None when it is not JSON or not the expected event."""
    try:
        payload = json.loads(raw)
    except ValueError:  # also UnicodeDecodeError
        return None
    if not isinstance(payload, dict):
        return None
    name = payload.get("hook_event_name")
    if name is not None and name != CLAUDE_CODE_EVENT_NAMES[expected_kind]:
        return None

    def text(key: str) -> str:
        value = payload.get(key)
        return value if isinstance(value, str) else ""

    return HookEvent(expected_kind, text("session_id").strip(), text("cwd"), text("prompt"), text("source"))


def render_claude_code_output(event: HookEvent, block: str) -> str:
    """The JSON form: `additionalContext` enters the conversation more discreetly than plain stdout does."""
    return json.dumps({"hookSpecificOutput": {"hookEventName": CLAUDE_CODE_EVENT_NAMES[event.kind],
                                              "additionalContext": block}})


HOSTS: dict[str, HostAdapter] = {"claude-code": HostAdapter(parse_claude_code_event, render_claude_code_output)}


@dataclass(frozen=True)
class HookSettings:
    """`[hooks]` in config.toml, or CORTEXD_HOOKS_<NAME>. A plain dataclass, not pydantic: a hook is a fresh process
    per prompt, and importing pydantic with the config models takes ≈ 100 ms, a third of the default budget."""

    deadline_ms: int = 300  # everything after the interpreter starts: stdin, imports, and every daemon call
    auto_save_should: bool = False  # also save what the daemon judges should_save without an explicit request
    max_tokens: int = 300  # compile_context budget for the context block

    def __post_init__(self) -> None:
        for name, (low, high) in HOOK_LIMITS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"hooks.{name}: expected an integer from {low} to {high}, got {value!r}")
        if not isinstance(self.auto_save_should, bool):
            raise ValueError(f"hooks.auto_save_should: expected true or false, got {self.auto_save_should!r}")


HOOK_FIELDS = ("deadline_ms", "auto_save_should", "max_tokens")
HOOK_LIMITS = {"deadline_ms": (20, 10_000), "max_tokens": (50, 8000)}


def load_hook_settings(path: Path | None = None, environ: Mapping[str, str] | None = None) -> HookSettings:
    """The file's `[hooks]` table, overridden by CORTEXD_HOOKS_<FIELD> variables; a bad key or value names itself."""
    from memory_daemon.core.config_file import raw_table

    path, values = raw_table("hooks", HOOK_FIELDS, "CORTEXD_HOOKS_", path, environ)
    try:
        unknown = sorted(set(values) - set(HOOK_FIELDS))
        if unknown:
            raise ValueError(f"hooks.{unknown[0]}: unknown key (known: {', '.join(HOOK_FIELDS)})")
        return HookSettings(**{name: _from_text(name, value) for name, value in values.items()})
    except ValueError as problem:
        raise ValueError(f"invalid configuration ({path} / CORTEXD_HOOKS_* variables): {problem}") from None


def _from_text(name: str, value: object) -> object:
    """Environment values arrive as text; TOML values are already typed."""
    if not isinstance(value, str):
        return value
    text = value.strip().lower()
    if name == "auto_save_should":
        if text in ("1", "true", "yes", "on"):
            return True
        if text in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"hooks.{name}: expected true or false, got {value!r}")
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"hooks.{name}: expected an integer, got {value!r}") from None


def add_hook_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("event", choices=EVENTS, help="user-prompt: save and recall for the prompt; "
                                                      "session-start: the session's working memory and summary")
    parser.add_argument("--host", default="claude-code", choices=sorted(HOSTS), help="whose event format is on stdin")
    parser.add_argument("--daemon", help="daemon address (default: $CORTEXD_ADDRESS or the user socket)")
    parser.add_argument("--namespace", help="namespace (default: the git repository name of the event's cwd, else 'default')")
    parser.add_argument("--token-file", help="bearer token file for TCP (default: $CORTEXD_TOKEN_FILE)")
    parser.add_argument("--text", action="store_true", help="print the context block as plain text, not in the host's format")


def main(argv: list[str]) -> int:
    """`cortexd hook EVENT`, dispatched before the full command line is built. Always exits 0: a hook must never
    break or delay the user's prompt, so a slow, absent or failing daemon, bad input or bad config print nothing."""
    parser = argparse.ArgumentParser(prog="cortexd hook", description="Run a host hook: event JSON on stdin, context on stdout.")
    add_hook_arguments(parser)
    args = parser.parse_args(argv)
    try:
        settings = load_hook_settings()
        deadline = STARTED + settings.deadline_ms / 1000
        host = HOSTS[args.host]
        raw = _read_stdin(deadline)
        event = host.parse(raw, args.event) if raw else None
        if event is None:
            return _debug("no usable event on stdin")
        block = run_event(event, settings, deadline, args.daemon, args.namespace, args.token_file)
        if block:
            sys.stdout.write((block if args.text else host.render(event, block)) + "\n")
            sys.stdout.flush()
    except Exception as error:  # noqa: BLE001 — see the docstring: nothing may escape a hook
        return _debug(f"{type(error).__name__}: {error}")
    return 0


def run_event(event: HookEvent, settings: HookSettings, deadline: float, address: str | None = None,
              namespace: str | None = None, token_file: str | None = None) -> str:
    """The context block for one event ('' when there is nothing to add); never starts a daemon."""
    from cortexd.connect import is_unix_address, read_token, resolve_address, socket_path_of
    from proxy_server.namespace import resolve_namespace

    if not (event.prompt.strip() if event.kind == "user-prompt" else event.session_id):
        return ""
    address = resolve_address(address)
    if is_unix_address(address) and not socket_path_of(address).exists():
        _debug(f"no daemon at {address}")
        return ""  # without paying for the gRPC import
    namespace = resolve_namespace(namespace, Path(event.cwd) if event.cwd else Path.cwd()).name
    with DaemonCalls(address, namespace, read_token(token_file), deadline) as daemon:
        if event.kind == "user-prompt":
            return user_prompt_block(daemon, event, settings)
        return session_start_block(daemon, event)


class DaemonCalls:
    """One channel to the daemon; every call's deadline is what is left of the hook's budget."""

    def __init__(self, address: str, namespace: str, token: str | None, deadline: float) -> None:
        import grpc

        from cortexd.connect import call_metadata, is_unix_address, open_channel, read_tls_ca
        from cortexd.v1 import cortexd_pb2 as pb
        from cortexd.v1 import cortexd_pb2_grpc as pb_grpc

        self.pb = pb
        self.error = grpc.RpcError
        self.deadline = deadline
        self.metadata = call_metadata(namespace, token)
        self._channel = open_channel(address, None if is_unix_address(address) else read_tls_ca())
        self.memory = pb_grpc.MemoryServiceStub(self._channel)
        self.decisions = pb_grpc.DecisionServiceStub(self._channel)

    def remaining(self) -> float:
        return max(0.001, self.deadline - time.monotonic())

    def call(self, method, request):
        return method(request, timeout=self.remaining(), metadata=self.metadata)

    def __enter__(self) -> "DaemonCalls":
        return self

    def __exit__(self, *exc_info) -> None:
        self._channel.close()


def should_auto_save(analysis, settings: HookSettings) -> bool:
    """An explicit request to remember always; the daemon's should_save verdict only when the config opts in."""
    return analysis.action_recommendation == "MUST_SAVE" or (settings.auto_save_should and analysis.should_save)


def user_prompt_block(daemon: DaemonCalls, event: HookEvent, settings: HookSettings) -> str:
    """Analyse the prompt in its session (so later replies read in context), save it if it asks to be remembered,
    then compile the context for it. That context leaves out the session's working memory: the host's conversation
    already holds this session's turns, and SessionStart brings them back after a compaction."""
    prompt = event.prompt.strip()
    pb = daemon.pb
    lines = []
    saved_id = ""
    if len(prompt) <= MAX_ANALYZED_CHARS:
        try:
            analysis = daemon.call(daemon.memory.AnalyzeMessage,
                                   pb.AnalyzeMessageRequest(message=prompt, session_id=event.session_id))
            if should_auto_save(analysis, settings):
                # The earlier turn a message leans on goes in `context`, not glued to the content: "remember that X"
                # reads as leaning on whatever was said before, and the content should stay the user's words.
                saved = daemon.call(daemon.memory.SaveMemory, pb.SaveMemoryRequest(
                    content=prompt, context="\n".join(analysis.context_used), session_id=event.session_id,
                    source="hook"))
                saved_id = saved.memory.id
                verdict = "Already in long-term memory (reinforced)" if saved.merged else "Saved to long-term memory"
                lines.append(f"{verdict}: {saved.memory.content} [MEM:{saved_id}]")
        except daemon.error as error:
            _debug(f"analyze/save: {error.code().name}")
    try:
        context = daemon.call(daemon.memory.CompileContext,
                              pb.CompileContextRequest(task=prompt[:MAX_TASK_CHARS], max_tokens=settings.max_tokens))
    except daemon.error as error:
        _debug(f"compile_context: {error.code().name}")
        return memory_block(lines)
    relevant = [item.text for item in context.items if item.id != saved_id]
    if relevant:
        lines.append("Relevant long-term memory:")
        lines += relevant
    return memory_block(lines)


def session_start_block(daemon: DaemonCalls, event: HookEvent) -> str:
    """The session's working memory and summary: empty for a new session, back after a resume or a compaction."""
    try:
        session = daemon.call(daemon.decisions.GetSession, daemon.pb.GetSessionRequest(session_id=event.session_id))
    except daemon.error as error:
        _debug(f"get_session: {error.code().name}")
        return ""
    lines = []
    if session.working_memory:
        lines.append("Working memory of this session, newest first:")
        lines += [f"- {item.text} [{'DEC' if item.kind == 'decision' else 'MEM'}:{item.id}]"
                  for item in session.working_memory]
    if session.summary.text:
        lines += ["Session summary:", session.summary.text]
    return memory_block(lines)


def memory_block(lines: list[str]) -> str:
    return "\n".join((BLOCK_OPEN, *lines, BLOCK_CLOSE)) if lines else ""


def _read_stdin(deadline: float) -> bytes | None:
    """The event JSON, or None when stdin is a terminal or the host has not closed it by the deadline."""
    import select

    stream = sys.stdin
    if stream is None or stream.isatty():
        return None
    try:
        descriptor = stream.fileno()
    except (OSError, ValueError):  # not a real file (an embedding host): read it plainly
        return stream.buffer.read(MAX_STDIN_BYTES)
    chunks: list[bytes] = []
    size = 0
    while size < MAX_STDIN_BYTES:
        ready, _, _ = select.select([descriptor], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return None
        chunk = os.read(descriptor, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _debug(message: str) -> int:
    """One short stderr line when CORTEXD_HOOK_DEBUG is set; silence otherwise. Returns the hook's exit status, 0."""
    if os.environ.get(DEBUG_ENV, "").strip() not in ("", "0"):
        print(f"cortexd hook: {message}", file=sys.stderr)
    return 0
