"""`cortexd eval kinds`: does one search over memories, facts, episodes and decisions put the right item first?"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

from memory_daemon.evals.retrieval import read_jsonl, reciprocal_rank

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "retrieval" / "kinds.jsonl"
SECTIONS = {"memories": "memory", "facts": "fact", "episodes": "episode", "decisions": "decision"}
LIMIT = 10
# Rows, in print order: name -> (kinds, signals). "own kind" searches only the answer's kind: the ceiling that
# mixing every kind into one list is measured against.
ROWS: dict[str, tuple[list[str] | None, list[str]]] = {
    "all kinds, lexical": (["all"], ["lexical"]),
    "all kinds, dense": (["all"], ["dense"]),
    "all kinds, graph": (["all"], ["graph"]),
    "all kinds, lexical+dense": (["all"], ["lexical", "dense"]),
    "all kinds, fused": (["all"], []),
    "own kind only, fused": (None, []),
}


def check_scenarios(scenarios: list[dict]) -> list[str]:
    problems = []
    for s in scenarios:
        local = [item["id"] for section in SECTIONS for item in s.get(section, [])]
        if len(local) != len(set(local)):
            problems.append(f"{s.get('id')}: duplicate item ids")
        for q in s.get("questions", []):
            if q.get("answer") not in local:
                problems.append(f"{s.get('id')}: question {q.get('question', '')[:40]!r} answers unknown {q.get('answer')!r}")
    return problems


def seed(client, scenario: dict) -> dict[str, tuple[str, str]]:
    """Store one scenario's items; local id -> (kind, stored id)."""
    stored: dict[str, tuple[str, str]] = {}
    for m in scenario.get("memories", []):
        stored[m["id"]] = ("memory", client.save_memory(content=m["text"], extract_facts=False).memory.id)
    for f in scenario.get("facts", []):
        fact = client.upsert_fact(subject=f["subject"], predicate=f["predicate"], object=f["object"],
                                  valid_from=f.get("valid_from", ""), create_entities=True).fact
        stored[f["id"]] = ("fact", fact.id)
    for e in scenario.get("episodes", []):
        episode = client.record_episode(kind=e["kind"], title=e["title"], body=e.get("body", ""),
                                        files=e.get("files", [])).episode
        stored[e["id"]] = ("episode", episode.id)
    for d in scenario.get("decisions", []):
        decision = client.log_decision(type=d["type"], question=d["question"], options=d.get("options", []),
                                       chosen=d["chosen"], reasoning=d.get("reasoning", "")).decision
        stored[d["id"]] = ("decision", decision.id)
    return stored


def _hit_id(hit) -> str:
    return getattr(hit, hit.WhichOneof("item")).id


def run(daemon, scenarios: list[dict]) -> dict:
    seeded = {}
    for scenario in scenarios:
        with daemon.client(scenario["namespace"]) as client:
            seeded[scenario["id"]] = seed(client, scenario)
    rows = {}
    for name, (kinds, signals) in ROWS.items():
        scores: list[tuple[str, str, float, float, float]] = []
        started = time.perf_counter()
        for scenario in scenarios:
            stored = seeded[scenario["id"]]
            with daemon.client(scenario["namespace"]) as client:
                for q in scenario["questions"]:
                    kind, wanted = stored[q["answer"]]
                    reply = client.search_memory(query=q["question"], limit=LIMIT, kinds=kinds or [kind], signals=signals)
                    ranked = [_hit_id(h) for h in reply.hits]
                    scores.append((kind, q.get("type", ""), float(ranked[:1] == [wanted]), float(wanted in ranked[:5]),
                                   reciprocal_rank(ranked, [wanted])))
        elapsed = time.perf_counter() - started
        rows[name] = {"overall": _summary(scores), "by_kind": {k: _summary([s for s in scores if s[0] == k])
                                                               for k in SECTIONS.values()},
                      "ms_per_query": 1000 * elapsed / max(1, len(scores))}
    return rows


def _summary(scores) -> dict[str, float]:
    n = len(scores)
    if not n:
        return {"n": 0}
    return {"n": n, "hit@1": sum(s[2] for s in scores) / n, "hit@5": sum(s[3] for s in scores) / n,
            "mrr": sum(s[4] for s in scores) / n}


def render(rows: dict, scenarios: list[dict], data: Path) -> str:
    questions = [q for s in scenarios for q in s["questions"]]
    answer_kinds = Counter(SECTIONS[section] for s in scenarios for q in s["questions"]
                           for section in SECTIONS if any(i["id"] == q["answer"] for i in s.get(section, [])))
    lines = [f"cortexd eval kinds (data: {data})", "",
             f"{len(scenarios)} scenarios, {len(questions)} questions; answers: "
             + ", ".join(f"{k} {answer_kinds[k]}" for k in SECTIONS.values()), "",
             "| search | hit@1 | hit@5 | MRR | ms/query |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, row in rows.items():
        o = row["overall"]
        lines.append(f"| {name} | {o['hit@1']:.3f} | {o['hit@5']:.3f} | {o['mrr']:.3f} | {row['ms_per_query']:.1f} |")
    lines += ["", "### hit@1 by answer kind", "", "| search | " + " | ".join(SECTIONS.values()) + " |",
              "| --- |" + " ---: |" * len(SECTIONS)]
    for name, row in rows.items():
        cells = [f"{row['by_kind'][k]['hit@1']:.3f}" if row["by_kind"][k].get("n") else "-" for k in SECTIONS.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def evaluate_kinds(data: Path | None = None, as_json: bool = False) -> int:
    """Store every scenario in a fresh temporary daemon, ask every question under each row's search, print the table."""
    from memory_daemon.client.launcher import temporary_daemon

    data = Path(data) if data else DEFAULT_DATA
    scenarios = read_jsonl(data)
    problems = check_scenarios(scenarios)
    if problems:
        raise ValueError(f"{len(problems)} problems in {data}: " + "; ".join(problems[:10]))
    with temporary_daemon() as daemon:
        rows = run(daemon, scenarios)
    print(json.dumps({"data": str(data), "rows": rows}, indent=2) if as_json else render(rows, scenarios, data))
    return 0
