"""`cortexd eval timelines`: is the current version found first, and kept out of date in no compiled context?"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

from memory_daemon.evals.retrieval import (
    DEFAULT_DATA, SEARCH_LIMIT, UPDATE_CHECK_TIMEOUT_SECONDS, current_at_1, exported_memories, read_jsonl,
    stale_above_current, timeline_records,
)
from memory_daemon.evals.targets import verdict

DEFAULT_SETS = (DEFAULT_DATA / "timelines.jsonl",)
CONTEXT_BUDGET = 350  # tokens for compile_context, with the question as the task
TARGETS = {  # issue 16, on a held-out set
    "current@1": (">=", 0.85),
    "stale_above_current": ("<=", 0.05),
    "control current@1": (">=", 0.80),
    "context: current in": (">=", 0.95),
    "context: superseded in": ("<=", 0.05),
    "context: within budget": (">=", 1.0),
}


# Scenario kinds whose other memories may rightly be retired: a control's neighbours change too, and a reversal's
# first state was replaced before it came back. In every other kind they are still true, whatever the question asks.
NEIGHBOURS_MAY_CHANGE = ("control", "reversal")


# Why a question's answer was not the first hit, one class a miss, first that applies: it was retired at import; it
# was not found; an outdated version of it came first; another memory came first.
MISS_CLASSES = ("missed: answer retired", "missed: answer not found", "missed: outdated memory first",
                "missed: another memory first")


def why_missed(ranked: list[str], current: str, stale: list[str], retired: set[str]) -> str | None:
    """The miss class of a question (MISS_CLASSES), or None when its answer came first."""
    if ranked[:1] == [current]:
        return None
    if current in retired:
        return MISS_CLASSES[0]
    if current not in ranked:
        return MISS_CLASSES[1]
    return MISS_CLASSES[2] if ranked[0] in stale else MISS_CLASSES[3]


def _external_ids(memories) -> dict[str, str]:
    """memory id -> the id it was imported with."""
    return {m.id: m.external_id or m.id for m in memories}


def score_timeline(client, timeline: dict, foreign_question: str = "") -> dict[str, float]:
    """One scenario: its question searched and compiled into a context, scored against `current` and `stale`; and,
    given another scenario's question (about something else), whether its compiled context carries any memory of
    this namespace (an unrelated memory put before the host's prompt). Also what import retired: the stale versions
    linked, the current one retired, and (outside NEIGHBOURS_MAY_CHANGE) any other memory retired, which no question
    asks about and so no ranking measure sees."""
    question, current, stale = timeline["question"], timeline["current"], timeline.get("stale") or []
    hits = client.search_memory(query=question, limit=SEARCH_LIMIT).hits
    ranked = [hit.memory.external_id or hit.memory.id for hit in hits]
    context = client.compile_context(task=question, max_tokens=CONTEXT_BUDGET)
    memories = list(exported_memories(client))
    external = _external_ids(memories)
    retired = {external[m.id] for m in memories if m.superseded_by}
    in_context = {external.get(item.id, item.id) for item in context.items if item.kind == "memory"}
    scores = {"current@1": current_at_1(ranked, current),
              "context: current in": float(current in in_context),
              "context: within budget": float(context.tokens_used <= context.max_tokens),
              "current retired": float(current in retired)}
    missed = why_missed(ranked, current, stale, retired)
    scores.update((name, float(name == missed)) for name in MISS_CLASSES)
    if timeline.get("kind") not in NEIGHBOURS_MAY_CHANGE:
        scores["neighbour retired"] = float(bool(retired - set(stale) - {current}))
    if foreign_question:
        foreign = client.compile_context(task=foreign_question, max_tokens=CONTEXT_BUDGET)
        scores["context: foreign question given a memory"] = float(any(i.kind == "memory" for i in foreign.items))
    if stale:
        scores["stale_above_current"] = stale_above_current(ranked, current, stale)
        scores["stale retired"] = len(retired & set(stale)) / len(stale)
        scores["context: superseded in"] = float(bool(in_context & set(stale)))
        scores["context: superseded without current"] = float(bool(in_context & set(stale)) and current not in in_context)
    return scores


def imported_scenarios(timelines: list[dict], env: dict[str, str] | None = None) -> Iterator[tuple[dict, object]]:
    """Each scenario, in order, with a client of its own namespace of one temporary daemon (`env`: its whole
    environment; None: this process's), after its memories were imported there (in timeline_records' shuffled order)
    and import's update checks finished."""
    from memory_daemon.client.launcher import temporary_daemon

    with temporary_daemon(env=env) as daemon:
        daemon.wait_serving()
        records = timeline_records(timelines)
        for timeline in timelines:
            with daemon.client(timeline["namespace"]) as client:
                reply = client.import_records([r for r in records if r["namespace"] == timeline["namespace"]])
                if reply.errors:
                    raise RuntimeError(f"{timeline['id']}: import failed: {list(reply.errors)[:3]}")
                if client.wait_for_update_checks(UPDATE_CHECK_TIMEOUT_SECONDS):
                    raise RuntimeError(f"{timeline['id']}: update checks unfinished after {UPDATE_CHECK_TIMEOUT_SECONDS} s")
                yield timeline, client


def run_timelines(path: Path) -> dict:
    """Import every scenario of a timeline file into its own namespace of a temporary daemon, then score each."""
    timelines = read_jsonl(path)
    by_kind: dict[str, list[dict[str, float]]] = {}
    started = time.perf_counter()
    for number, (timeline, client) in enumerate(imported_scenarios(timelines)):
        # The foreign question is the one half the file away: another scenario, about something else.
        foreign = timelines[(number + len(timelines) // 2) % len(timelines)] if len(timelines) > 1 else None
        by_kind.setdefault(timeline["kind"], []).append(
            score_timeline(client, timeline, foreign["question"] if foreign else ""))
    rows = sum(by_kind.values(), [])
    return {"path": str(path), "scenarios": len(timelines), "overall": _means(rows),
            "measured": _counts(rows),
            "control": _means(by_kind.get("control", [])),
            "by_kind": {kind: _means(kind_rows) for kind, kind_rows in sorted(by_kind.items())},
            "seconds": round(time.perf_counter() - started, 1)}


def _counts(rows: list[dict[str, float]]) -> dict[str, int]:
    """How many scenarios each measure applies to."""
    return {k: sum(1 for row in rows if k in row) for k in dict.fromkeys(k for row in rows for k in row)}


def _means(rows: list[dict[str, float]]) -> dict[str, float]:
    means = {k: round(sum(r[k] for r in rows if k in r) / n, 4) for k, n in _counts(rows).items()}
    return {**means, "n": len(rows)}


def _meets(name: str, value: float | None) -> str:
    return verdict(TARGETS, name, value)


def print_report(result: dict) -> None:
    overall, control = result["overall"], result["control"]
    print(f"\n## {result['path']}: {result['scenarios']} scenarios ({result['seconds']:.0f} s)\n")
    print("| measure | value | n | target (issue 16, on a held-out set) |\n| --- | ---: | ---: | --- |")
    measured = result["measured"]
    rows = [(name, overall.get(name), measured.get(name, 0)) for name in (
        "current@1", "stale_above_current", "context: current in", "context: superseded in",
        "context: superseded without current", "context: within budget",
        "context: foreign question given a memory", "stale retired", "current retired", "neighbour retired",
        *MISS_CLASSES)]
    rows.insert(2, ("control current@1", control.get("current@1"), control.get("n", 0)))
    for name, value, n in rows:
        shown = "–" if value is None else f"{value:.3f}"
        print(f"| {name} | {shown} | {n} | {_meets(name, value)} |")
    print("\n| kind | n | current@1 | stale above current | context: current in | context: superseded in | "
          "neighbour retired |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind, row in result["by_kind"].items():
        cells = [row.get(k) for k in ("current@1", "stale_above_current", "context: current in", "context: superseded in",
                                      "neighbour retired")]
        print(f"| {kind} | {row['n']} | " + " | ".join("–" if c is None else f"{c:.3f}" for c in cells) + " |")


def evaluate_timelines(paths: list[Path] | None, as_json: bool = False) -> int:
    """Score each timeline file (default: the team's development set); 2 when a file is missing."""
    paths = paths or list(DEFAULT_SETS)
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print(f"cortexd eval timelines: no such file: {', '.join(missing)}")
        return 2
    results = [run_timelines(path) for path in paths]
    if as_json:
        print(json.dumps(results, indent=2))
        return 0
    print("cortexd eval timelines: each scenario imported into its own namespace, then its question searched "
          f"(top {SEARCH_LIMIT}) and compiled (compile_context, {CONTEXT_BUDGET} tokens)")
    for result in results:
        print_report(result)
    return 0
