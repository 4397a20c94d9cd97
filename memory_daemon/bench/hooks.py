"""`cortexd bench hooks`: a host hook's wall time (process start to exit, warm daemon) and how much of what is worth
remembering it captures, on the labelled prompts in tests/data/hooks/prompts.jsonl."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from memory_daemon.bench.common import WORST_CASE_NAMESPACE, WorstCaseSaver, table_row
from memory_daemon.ops.installed import cortexd_command
from memory_daemon.client.launcher import temporary_daemon

PROMPTS = Path(__file__).resolve().parents[2] / "tests" / "data" / "hooks" / "prompts.jsonl"
SAVED_MARKERS = ("Saved to long-term memory", "Already in long-term memory")
KINDS = ("explicit", "implicit", "negative")


@dataclass(frozen=True)
class HookRun:
    wall_ms: float
    context: str  # what the host would add to the conversation ('' for nothing)
    problem: str  # the hook's debug line, if any

    @property
    def saved(self) -> bool:
        return any(marker in self.context for marker in SAVED_MARKERS)


def labelled_prompts(path: Path = PROMPTS) -> list[dict]:
    """{"prompt", "kind": explicit | implicit | negative, "should_save"} per line."""
    with open(path, encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def hook_environment(address: str, config: Path) -> dict[str, str]:
    environment = {name: value for name, value in os.environ.items() if not name.startswith("CORTEXD_HOOK")}
    # An installed cortexd runs from compiled bytecode; a dev shell that forbids writing it would time compilation.
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    environment.update(CORTEXD_ADDRESS=address, CORTEXD_CONFIG=str(config), CORTEXD_HOOK_DEBUG="1")
    return environment


def claude_code_event(kind: str, cwd: Path, session_id: str, prompt: str = "") -> dict:
    common = {"session_id": session_id, "transcript_path": "", "cwd": str(cwd), "permission_mode": "default"}
    if kind == "user-prompt":
        return {**common, "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    return {**common, "hook_event_name": "SessionStart", "source": "compact", "model": "claude-sonnet-4-6"}


def run_hook(kind: str, event: dict, environment: dict[str, str]) -> HookRun:
    """One hook process as the host starts it, timed from spawn to exit."""
    started = time.perf_counter()
    done = subprocess.run([*cortexd_command(), "hook", kind], input=json.dumps(event).encode(), capture_output=True,
                          env=environment, timeout=60)
    wall_ms = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise RuntimeError(f"cortexd hook {kind} exited {done.returncode}: {done.stderr.decode(errors='replace')}")
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout.strip() else ""
    return HookRun(wall_ms, context, done.stderr.decode(errors="replace").strip())


def _spawn_ms(command: list[str], environment: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, env=environment, stdin=subprocess.DEVNULL)
    return (time.perf_counter() - started) * 1000


def _cycled(items: list[str], count: int) -> list[str]:
    return [items[i % len(items)] for i in range(count)]


def _project(root: Path, name: str) -> Path:
    """A git checkout: its name becomes the hook's namespace."""
    (root / name / ".git").mkdir(parents=True)
    return root / name


def run(quick: bool, beside_worst_case: bool = False) -> int:
    """beside_worst_case: the hooks run while another client saves 64 KiB in a loop in a namespace of its own."""
    runs = 10 if quick else 20
    seed = 200 if quick else 1000
    prompts = labelled_prompts()
    by_kind = {kind: [p["prompt"] for p in prompts if p["kind"] == kind] for kind in KINDS}
    with tempfile.TemporaryDirectory(prefix="cortexd-bench-") as scratch, temporary_daemon() as daemon:
        root = Path(scratch)
        no_config = root / "absent.toml"
        environment = hook_environment(daemon.address, no_config)
        timed = _project(root, "bench-hooks")
        with daemon.client(timed.name) as client:
            client.analyze_message(message="warm-up")  # waits for the models
            client.import_records({"id": f"seed-{i}", "text": f"note {i}: service {i % 50} runs on host-{i % 7} "
                                   f"with python 3.{i % 4 + 10}"} for i in range(seed))
        for prompt in by_kind["negative"][:3]:  # compiles and caches the bytecode, as the first prompts of a day do
            run_hook("user-prompt", claude_code_event("user-prompt", timed, "warm-up", prompt), environment)
        saver = WorstCaseSaver(daemon.address) if beside_worst_case else None
        with saver or nullcontext():
            floor, quiet, saving, starts = [], [], [], []
            negatives, explicit = _cycled(by_kind["negative"], runs), _cycled(by_kind["explicit"], runs)
            for i in range(runs):  # interleaved, so machine noise hits every series alike
                floor.append(_spawn_ms([sys.executable, "-c", "import grpc; from cortexd.v1 import cortexd_pb2_grpc"],
                                       environment))
                quiet.append(run_hook("user-prompt",
                                      claude_code_event("user-prompt", timed, f"quiet-{i}", negatives[i]), environment))
                saving.append(run_hook("user-prompt",
                                       claude_code_event("user-prompt", timed, "saving", explicit[i]), environment))
                starts.append(run_hook("session-start", claude_code_event("session-start", timed, "saving"),
                                       environment))

            captured: dict[str, dict[str, list[HookRun]]] = {}
            opted_in = root / "auto_save_should.toml"
            opted_in.write_text("[hooks]\nauto_save_should = true\n")
            for label, config in (("default", no_config), ("auto_save_should", opted_in)):
                project = _project(root, f"capture-{label.replace('_', '-')}")
                settings = hook_environment(daemon.address, config)
                captured[label] = {
                    kind: [run_hook("user-prompt", claude_code_event("user-prompt", project, uuid.uuid4().hex, prompt),
                                    settings) for prompt in by_kind[kind]]
                    for kind in KINDS}

    timing_runs = quiet + saving + starts
    capture_runs = [r for label in captured.values() for kind in KINDS for r in label[kind]]
    misses = sum("DEADLINE_EXCEEDED" in r.problem for r in timing_runs)
    capture_misses = sum("DEADLINE_EXCEEDED" in r.problem for r in capture_runs)
    print(f"cortexd bench hooks ({'quick' if quick else 'full'}; store seeded with {seed} memories; default "
          f"deadline 300 ms; {' '.join(cortexd_command())})\n")
    if saver is not None:
        print(f"beside a worst-case client saving 64 KiB in a loop in namespace {WORST_CASE_NAMESPACE}: "
              f"{len(saver.latencies_ms)} saves, p50 {statistics.median(saver.latencies_ms or [0]):.0f} ms, "
              f"{len(saver.errors)} errors\n")
    print("| measure | p50 ms | p95 ms | n | note |")
    print("| --- | ---: | ---: | ---: | --- |")
    print(table_row("floor: python + import grpc and the stubs, spawn to exit", floor))
    print(table_row("hook user-prompt, not a request to remember (analyze + compile_context)", [r.wall_ms for r in quiet],
               f"context added {sum(bool(r.context) for r in quiet)} of {len(quiet)}; target p50 <= 150"))
    print(table_row("hook user-prompt, explicit request (analyze + save + compile_context)", [r.wall_ms for r in saving],
               f"saved {sum(r.saved for r in saving)} of {len(saving)}"))
    print(table_row("hook session-start (get_session)", [r.wall_ms for r in starts],
               f"working memory printed {sum(bool(r.context) for r in starts)} of {len(starts)}"))
    print(f"\ndeadline exceeded in {misses} of {len(timing_runs)} timed runs\n")

    print(f"capture on {len(prompts)} labelled prompts ({PROMPTS.relative_to(PROMPTS.parents[3])}), one fresh "
          f"session each; deadline exceeded in {capture_misses} of {len(capture_runs)} runs:\n")
    print("| prompts | n | saved, default config | saved, auto_save_should = true |")
    print("| --- | ---: | ---: | ---: |")

    def share(label: str, kinds: tuple[str, ...]) -> str:
        hits = [r.saved for kind in kinds for r in captured[label][kind]]
        return f"{sum(hits)} ({sum(hits) / len(hits):.0%})"

    rows = (("explicit requests to remember", ("explicit",)), ("statements worth keeping, no request", ("implicit",)),
            ("capture rate: all should-save", ("explicit", "implicit")), ("false-save rate: negatives", ("negative",)))
    for title, kinds in rows:
        count = sum(len(by_kind[k]) for k in kinds)
        print(f"| {title} | {count} | {share('default', kinds)} | {share('auto_save_should', kinds)} |")
    # By design the default config saves explicit requests only.
    for label, expected in (("default", ("explicit",)), ("auto_save_should", ("explicit", "implicit"))):
        missed = [p for kind in expected for p, r in zip(by_kind[kind], captured[label][kind]) if not r.saved]
        false = [p for p, r in zip(by_kind["negative"], captured[label]["negative"]) if r.saved]
        print(f"\n{label}: missed {missed or 'none'}; false saves {false or 'none'}")
    return 0
