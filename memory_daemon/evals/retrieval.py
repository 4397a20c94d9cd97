"""`cortexd eval retrieval`: recall@k and MRR per retrieval signal, and stale-vs-current ranking, on tests/data/retrieval."""

from __future__ import annotations

import json
import random
import re
import statistics
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memory_daemon.core.jsonl import json_objects_in
from memory_daemon.evals.targets import verdict

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "retrieval"
KS = (5, 10)
SEARCH_LIMIT = max(KS)
SHUFFLE_SEED = 6
UPDATE_CHECK_TIMEOUT_SECONDS = 900.0  # an eval imports, then waits for the background update checks before asking
QUESTION_TYPES = ("single", "multi_hop", "temporal", "paraphrase", "identifier")
TIMELINE_KINDS = ("update", "correction", "reversal", "chain", "negation", "implicit_subject")
# Retriever rows, in print order: name -> the `signals` sent with SearchMemory (empty: all of them, fused).
SIGNAL_SETS: dict[str, list[str]] = {
    "lexical": ["lexical"],
    "dense": ["dense"],
    "graph": ["graph"],
    "lexical+dense": ["lexical", "dense"],
    "fused": [],
}
SINGLE_SIGNALS = ("lexical", "dense", "graph")
# Extra question row, not part of any target: fused with superseded memories included, which shows what the
# superseding of older turns at import costs questions about the past ("what did we use before X?").
HISTORY_ROWS: dict[str, list[str]] = {"fused+history": []}
TIMELINE_SIGNAL_SETS: dict[str, list[str]] = {"fused": [], "lexical": ["lexical"]}
TARGETS = {
    "fused recall@10 gain over best single signal": (">=", 0.05),
    "current@1": (">=", 0.90),
    "stale-above-current": ("<=", 0.05),
}
_NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


# --- metrics: pure functions of a ranked id list and the labels ----------------------------------------------------

def recall_at_k(ranked: Sequence[str], evidence: Iterable[str], k: int) -> float:
    """Share of the evidence ids found in the first k results."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("evidence must not be empty")
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def reciprocal_rank(ranked: Sequence[str], evidence: Iterable[str]) -> float:
    """1 / rank of the first evidence id in the results; 0 when none was retrieved."""
    wanted = set(evidence)
    for rank, item in enumerate(ranked, 1):
        if item in wanted:
            return 1.0 / rank
    return 0.0


def current_at_1(ranked: Sequence[str], current: str) -> float:
    """1.0 when the current memory is ranked first."""
    return 1.0 if ranked and ranked[0] == current else 0.0


def stale_above_current(ranked: Sequence[str], current: str, stale: Iterable[str]) -> float:
    """1.0 when some stale memory ranks above the current one (a missing current ranks below everything retrieved)."""
    position = {item: i for i, item in reversed(list(enumerate(ranked)))}
    current_at = position.get(current, len(ranked))
    return 1.0 if any(position.get(s, len(ranked) + 1) < current_at for s in stale) else 0.0


def question_scores(ranked: Sequence[str], evidence: Sequence[str], ks: Sequence[int] = KS) -> dict[str, float]:
    scores = {f"recall@{k}": recall_at_k(ranked, evidence, k) for k in ks}
    scores["mrr"] = reciprocal_rank(ranked, evidence)
    return scores


def timeline_scores(ranked: Sequence[str], current: str, stale: Sequence[str]) -> dict[str, float]:
    return {"current@1": current_at_1(ranked, current), "stale_above_current": stale_above_current(ranked, current, stale)}


def summarize(scored: Iterable[tuple[str, dict[str, float]]], groups: Sequence[str] = ()) -> dict:
    """Mean of each score overall and per group: {"overall": {...,"n"}, "by_group": {group: {...,"n"}}}."""
    by_group: dict[str, list[dict[str, float]]] = {g: [] for g in groups}
    everything: list[dict[str, float]] = []
    for group, scores in scored:
        by_group.setdefault(group, []).append(scores)
        everything.append(scores)

    def mean(rows: list[dict[str, float]]) -> dict[str, float]:
        if not rows:
            return {"n": 0}
        return {**{name: statistics.fmean(r[name] for r in rows) for name in rows[0]}, "n": len(rows)}

    return {"overall": mean(everything), "by_group": {g: mean(rows) for g, rows in by_group.items()}}


def fused_gain(rows: dict[str, dict], metric: str = "recall@10") -> tuple[str, float] | None:
    """(best single signal, fused minus that signal) on `metric`; None when fused or every single signal is unmeasured."""
    singles = {name: rows[name]["overall"][metric] for name in SINGLE_SIGNALS if "overall" in rows.get(name, {})}
    if "overall" not in rows.get("fused", {}) or not singles:
        return None
    best = max(singles, key=singles.get)
    return best, rows["fused"]["overall"][metric] - singles[best]


# --- data -------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Dataset:
    turns: list[dict]
    questions: list[dict]
    timelines: list[dict]


def read_jsonl(path: Path) -> list[dict]:
    return [row for _number, row in json_objects_in(path)]


def load_dataset(data_dir: Path) -> Dataset:
    return Dataset(read_jsonl(data_dir / "conversations.jsonl"), read_jsonl(data_dir / "questions.jsonl"),
                   read_jsonl(data_dir / "timelines.jsonl"))


def _parses(timestamp: object) -> bool:
    if not isinstance(timestamp, str) or not timestamp.endswith("Z"):
        return False
    try:
        datetime.fromisoformat(timestamp)
        return True
    except ValueError:
        return False


def check_dataset(data: Dataset) -> list[str]:
    """Every problem found: missing fields, duplicate ids, unknown evidence/current/stale ids, bad timestamps."""
    problems: list[str] = []
    ids_by_namespace: dict[str, set[str]] = {}
    seen_turns: set[str] = set()
    for turn in data.turns:
        tid, ns = turn.get("id"), turn.get("namespace", "")
        if not tid or not str(turn.get("text", "")).strip():
            problems.append(f"turn {tid!r}: id and text are required")
        if tid in seen_turns:
            problems.append(f"turn {tid}: duplicate id")
        seen_turns.add(tid)
        if not _NAMESPACE.fullmatch(ns):
            problems.append(f"turn {tid}: bad namespace {ns!r}")
        if not _parses(turn.get("timestamp")):
            problems.append(f"turn {tid}: timestamp {turn.get('timestamp')!r} is not ISO-8601 UTC")
        if not turn.get("session") or not turn.get("speaker"):
            problems.append(f"turn {tid}: session and speaker are required")
        ids_by_namespace.setdefault(ns, set()).add(tid)
    seen_questions: set[str] = set()
    for q in data.questions:
        qid = q.get("id")
        if qid in seen_questions:
            problems.append(f"question {qid}: duplicate id")
        seen_questions.add(qid)
        if q.get("type") not in QUESTION_TYPES:
            problems.append(f"question {qid}: unknown type {q.get('type')!r}")
        if not str(q.get("question", "")).strip() or not q.get("evidence"):
            problems.append(f"question {qid}: question and evidence are required")
        known = ids_by_namespace.get(q.get("namespace"), set())
        for evidence in q.get("evidence", []):
            if evidence not in known:
                problems.append(f"question {qid}: evidence {evidence} is not a turn in namespace {q.get('namespace')!r}")
    seen_timelines: set[str] = set()
    for t in data.timelines:
        tid, ns = t.get("id"), t.get("namespace", "")
        if tid in seen_timelines:
            problems.append(f"timeline {tid}: duplicate id")
        seen_timelines.add(tid)
        if not _NAMESPACE.fullmatch(ns) or ns in ids_by_namespace:
            problems.append(f"timeline {tid}: namespace {ns!r} is invalid or not its own")
        ids_by_namespace.setdefault(ns, set())
        if t.get("kind") not in TIMELINE_KINDS:
            problems.append(f"timeline {tid}: unknown kind {t.get('kind')!r}")
        if not str(t.get("question", "")).strip():
            problems.append(f"timeline {tid}: question is required")
        stamps: dict[str, str] = {}
        for memory in t.get("memories", []):
            mid = memory.get("id")
            if not mid or mid in stamps or mid in ids_by_namespace[ns]:
                problems.append(f"timeline {tid}: memory id {mid!r} missing or duplicate")
            if not _parses(memory.get("timestamp")):
                problems.append(f"timeline {tid}: memory {mid} timestamp {memory.get('timestamp')!r} is not ISO-8601 UTC")
            if not str(memory.get("text", "")).strip():
                problems.append(f"timeline {tid}: memory {mid} has no text")
            stamps[mid] = memory.get("timestamp", "")
        ids_by_namespace[ns].update(stamps)
        current, stale = t.get("current"), t.get("stale") or []
        if current not in stamps:
            problems.append(f"timeline {tid}: current {current!r} is not one of its memories")
        if not stale:
            problems.append(f"timeline {tid}: at least one stale memory is required")
        for s in stale:
            if s not in stamps or s == current:
                problems.append(f"timeline {tid}: stale {s!r} is not one of its other memories")
            elif current in stamps and stamps[s] >= stamps[current]:
                problems.append(f"timeline {tid}: stale {s} is not older than current {current}")
        if t.get("kind") == "chain" and len(stale) < 2:
            problems.append(f"timeline {tid}: a chain needs three or more versions")
    return problems


def conversation_records(turns: Iterable[dict]) -> list[dict]:
    fields = ("id", "text", "timestamp", "speaker", "session", "namespace")
    return [{f: turn[f] for f in fields if turn.get(f)} for turn in turns]


def timeline_records(timelines: Iterable[dict], seed: int = SHUFFLE_SEED) -> list[dict]:
    """Each timeline's memories in a seeded shuffled order that is never oldest-first, so arrival order != time order.

    A memory's session is its own "session" field, or its timeline id plus its UTC date: an implicit-subject
    update on the same day shares a session with the memory it updates."""
    records: list[dict] = []
    for t in timelines:
        memories = list(t["memories"])
        random.Random(f"{seed}:{t['id']}").shuffle(memories)
        if len(memories) > 1 and memories == sorted(memories, key=lambda m: m["timestamp"]):
            memories.reverse()
        for memory in memories:
            records.append({
                "id": memory["id"], "text": memory["text"], "timestamp": memory["timestamp"],
                "session": memory.get("session") or f"{t['id']}-{memory['timestamp'][:10]}", "namespace": t["namespace"],
            })
    return records


# --- running against a daemon ---------------------------------------------------------------------------------------

EXPORT_PAGE = 1000


def exported_memories(client):
    """Every memory of the client's namespace, page by page through ExportMemories."""
    offset = 0
    while True:
        page = client.export_memories(offset=offset, limit=EXPORT_PAGE)
        yield from page.memories
        if not page.next_offset:
            return
        offset = page.next_offset


def _ranked_ids(client, query: str, signals: list[str], include_history: bool = False) -> list[str]:
    reply = client.search_memory(query=query, limit=SEARCH_LIMIT, signals=signals, include_history=include_history)
    return [hit.memory.external_id or hit.memory.id for hit in reply.hits]


def _run(daemon, items: list[dict], signal_sets: dict[str, list[str]], query_of, score_of, group_of, groups,
         history: Iterable[str] = ()):
    """Per signal set: {"overall", "by_group", "ms_per_query"}, or {"error": message} when the daemon refuses it.

    Sets named in `history` are searched with include_history."""
    import grpc

    results: dict[str, dict] = {}
    by_namespace: dict[str, list[dict]] = {}
    for item in items:
        by_namespace.setdefault(item["namespace"], []).append(item)
    for name, signals in signal_sets.items():
        scored: list[tuple[str, dict[str, float]]] = []
        started = time.perf_counter()
        try:
            for namespace, group in by_namespace.items():
                with daemon.client(namespace) as client:
                    for item in group:
                        ranked = _ranked_ids(client, query_of(item), signals, name in history)
                        scored.append((group_of(item), score_of(ranked, item)))
        except grpc.RpcError as error:
            results[name] = {"error": f"{error.code().name}: {error.details()}"}
            continue
        elapsed = time.perf_counter() - started
        results[name] = {**summarize(scored, groups), "ms_per_query": 1000 * elapsed / max(1, len(scored))}
    return results


def run_questions(daemon, questions: list[dict], signal_sets: dict[str, list[str]] | None = None) -> dict[str, dict]:
    """Every question under each signal set (default: SIGNAL_SETS plus HISTORY_ROWS)."""
    signal_sets = {**SIGNAL_SETS, **HISTORY_ROWS} if signal_sets is None else signal_sets
    return _run(daemon, questions, signal_sets, lambda q: q["question"],
                lambda ranked, q: question_scores(ranked, q["evidence"]), lambda q: q["type"], QUESTION_TYPES,
                history=HISTORY_ROWS)


def run_timelines(daemon, timelines: list[dict], signal_sets: dict[str, list[str]] = TIMELINE_SIGNAL_SETS) -> dict[str, dict]:
    return _run(daemon, timelines, signal_sets, lambda t: t["question"],
                lambda ranked, t: timeline_scores(ranked, t["current"], t["stale"]), lambda t: t["kind"], TIMELINE_KINDS)


def import_dataset(daemon, data: Dataset, seed: int = SHUFFLE_SEED) -> dict:
    """Import all turns and shuffled timeline memories in one ImportMemories stream; counts and throughput."""
    records = conversation_records(data.turns) + timeline_records(data.timelines, seed)
    with daemon.client() as client:
        before = client.get_status().memory_count
        started = time.perf_counter()
        reply = client.import_records(records)
        seconds = time.perf_counter() - started
        if client.wait_for_update_checks(UPDATE_CHECK_TIMEOUT_SECONDS):
            raise RuntimeError(f"the update checks of the import did not finish in {UPDATE_CHECK_TIMEOUT_SECONDS} s")
        checked_seconds = time.perf_counter() - started
        # The stored count, not reply.imported: the daemon answers a long stream chunk by chunk and the merged
        # reply's counters are those of the last chunk only.
        stored = client.get_status().memory_count - before
    if reply.errors or stored != len(records):
        raise RuntimeError(f"import stored {stored} of {len(records)} records: {list(reply.errors)[:5]}")
    return {"items": len(records), "turns": len(data.turns), "timeline_memories": len(records) - len(data.turns),
            "seconds": seconds, "items_per_second": len(records) / seconds if seconds else float("inf"),
            "checked_seconds": checked_seconds}


# --- report -------------------------------------------------------------------------------------------------------

def _meets(name: str, value: float | None) -> str:
    return verdict(TARGETS, name, value)


def _cell(row: dict, metric: str, group: str | None = None) -> str:
    if "error" in row:
        return "n/a"
    values = row["overall"] if group is None else row["by_group"][group]
    return f"{values[metric]:.3f}" if values.get("n") else "-"


def render_markdown(report: dict) -> str:
    imp, qs, tls = report["import"], report["questions"], report["timelines"]
    lines = [
        f"cortexd eval retrieval (data: {report['data']})", "",
        f"import: {imp['items']} items ({imp['turns']} conversation turns, {imp['timeline_memories']} timeline memories) "
        f"in {imp['seconds']:.2f} s, {imp['items_per_second']:.0f} items/s; update checks done "
        f"{imp['checked_seconds']:.2f} s after the import began", "",
        f"## Questions: {qs['count']} over {qs['conversations']} conversations, top {SEARCH_LIMIT}", "",
        "| retriever | signals | recall@5 | recall@10 | MRR | ms/query |",
        "| --- | --- | ---: | ---: | ---: | ---: |",
    ]
    for name, row in qs["rows"].items():
        signals = (", ".join(SIGNAL_SETS.get(name, [])) or "all") + (" + superseded" if name in HISTORY_ROWS else "")
        timing = "n/a" if "error" in row else f"{row['ms_per_query']:.1f}"
        lines.append(f"| {name} | {signals} | {_cell(row, 'recall@5')} | {_cell(row, 'recall@10')} | "
                     f"{_cell(row, 'mrr')} | {timing} |")
    for name, row in qs["rows"].items():
        if "error" in row:
            lines.append(f"\n{name}: not measured, the daemon answered {row['error']}")
    gain = qs.get("fused_gain")
    if gain:
        name = "fused recall@10 gain over best single signal"
        lines.append(f"\nfused recall@10 minus best single signal ({gain['best_single']}): {gain['gain']:+.3f} "
                     f"(target {_meets(name, gain['gain'])})")
    for metric, title in (("recall@10", "recall@10"), ("mrr", "MRR")):
        lines += ["", f"### {title} by question type", "",
                  "| type (n) | " + " | ".join(qs["rows"]) + " |", "| --- |" + " ---: |" * len(qs["rows"])]
        for group in QUESTION_TYPES:
            n = qs["types"].get(group, 0)
            lines.append(f"| {group} ({n}) | " + " | ".join(_cell(row, metric, group) for row in qs["rows"].values()) + " |")
    lines += ["", f"## Timelines: {tls['count']}, memories imported in shuffled order, top {SEARCH_LIMIT}", "",
              "| retriever | current@1 | stale-above-current | ms/query |", "| --- | ---: | ---: | ---: |"]
    for name, row in tls["rows"].items():
        timing = "n/a" if "error" in row else f"{row['ms_per_query']:.1f}"
        lines.append(f"| {name} | {_cell(row, 'current@1')} | {_cell(row, 'stale_above_current')} | {timing} |")
    fused = tls["rows"].get("fused", {}).get("overall")
    if fused:
        current, stale = fused["current@1"], fused["stale_above_current"]
        lines.append(f"\nfused current@1 {current:.3f} (target {_meets('current@1', current)}), "
                     f"stale-above-current {stale:.3f} (target {_meets('stale-above-current', stale)})")
    names = list(tls["rows"])
    lines += ["", "### by timeline kind", "",
              "| kind (n) | " + " | ".join(f"current@1 {n} | stale-above {n}" for n in names) + " |",
              "| --- |" + " ---: | ---: |" * len(names)]
    for kind in TIMELINE_KINDS:
        n = tls["kinds"].get(kind, 0)
        cells = [f"{_cell(tls['rows'][name], 'current@1', kind)} | {_cell(tls['rows'][name], 'stale_above_current', kind)}"
                 for name in names]
        lines.append(f"| {kind} ({n}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def evaluate_retrieval(data_dir: Path | None = None, as_json: bool = False) -> int:
    """Import the labelled set into a fresh temporary daemon, run every question and timeline, print the tables."""
    from collections import Counter

    from memory_daemon.client.launcher import temporary_daemon

    data_dir = Path(data_dir) if data_dir else DEFAULT_DATA
    data = load_dataset(data_dir)
    problems = check_dataset(data)
    if problems:
        raise ValueError(f"{len(problems)} problems in {data_dir}: " + "; ".join(problems[:10]))
    with temporary_daemon() as daemon:
        imported = import_dataset(daemon, data)
        question_rows = run_questions(daemon, data.questions)
        timeline_rows = run_timelines(daemon, data.timelines)
    gain = fused_gain(question_rows)
    report = {
        "data": str(data_dir),
        "import": imported,
        "questions": {
            "count": len(data.questions), "conversations": len({t["namespace"] for t in data.turns}),
            "types": dict(Counter(q["type"] for q in data.questions)), "rows": question_rows,
            "fused_gain": {"best_single": gain[0], "gain": gain[1]} if gain else None,
        },
        "timelines": {"count": len(data.timelines), "kinds": dict(Counter(t["kind"] for t in data.timelines)),
                      "rows": timeline_rows},
        "targets": {name: f"{op} {bound:g}" for name, (op, bound) in TARGETS.items()},
    }
    print(json.dumps(report, indent=2) if as_json else render_markdown(report))
    return 0
