"""Fit compile_context's gate (preprocessing/context_gate.py) on the hits its cosine rule turns away in timeline sets,
estimate it set by set, and write it into the relevance model's manifest."""

# Usage (runtime venv, no torch):  .venv/bin/python models/relevance/fit_gate.py [--sets N,N,...] [--write]
# Each set's scenarios are imported into a temporary daemon as `cortexd eval timelines` imports them; each question,
# and another scenario's question (a foreign one: no memory of the namespace answers it), is searched as
# compile_context searches (search_memory with the reranker and the thin search off: compile_context's search has
# neither), and preflight's own rule picks the hits the gate reads again. Labels: a question's current memory 1, any
# hit of a foreign question 0; a question's other memories are left out (about its subject, not its answer). The
# threshold is the lowest at which the gate admits no more foreign hits than the gate it replaces (the manifest's) does
# on the same hits (`--foreign-like model`: than the model's own threshold does).
# Leave-one-set-out: each set scored by a gate fitted on the others, in a replica of compile_context's choice of
# memories (kept hits, then the share of the best hit's score), beside the model's threshold and the replaced gate in
# the same replica.

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from memory_daemon.context.preflight import (  # noqa: E402
    MIN_RELEVANCE, SEARCH_DEPTH, hits_to_read_again, shares_of_best,
)
from memory_daemon.core.config import load_retrieval_settings  # noqa: E402
from memory_daemon.evals.retrieval import read_jsonl  # noqa: E402
from memory_daemon.evals.timelines import imported_scenarios  # noqa: E402
from preprocessing.context_gate import FEATURES, ContextGate, features  # noqa: E402
from preprocessing.registry import sha256_of  # noqa: E402
from preprocessing.relevance_model import RelevanceModel  # noqa: E402

# compile_context's search reads neither the reranker nor the thin search (SearchQuery.rerank is False there)
AS_COMPILE_CONTEXT_SEARCHES = {"CORTEXD_RETRIEVAL_RERANK_DEPTH": "0", "CORTEXD_RETRIEVAL_THIN_SEARCH_DEPTH": "0",
                               "CORTEXD_RETRIEVAL_PRECEDENCE_DEPTH": "0"}

DEVELOPMENT_SETS = (11, 12, 13, 14, 15, 16, 18, 19, 20)  # README, Quality: the nine development timeline sets
L2 = 1.0
NEWTON_STEPS = 50
COMMAND = ".venv/bin/python models/relevance/fit_gate.py --sets {sets} --write"


def timeline_file(number: int) -> Path:
    return REPO / "tests" / "data" / f"heldout_{number}" / f"timelines_test_{number}.jsonl"


def searched(path: Path, model: RelevanceModel) -> list[dict]:
    """Per question (its own and a foreign one): its current hits as compile_context sees them, which of them the
    rule keeps, and the model's reading of those it reads again."""
    timelines = read_jsonl(path)
    questions = []
    environment = {**os.environ, **AS_COMPILE_CONTEXT_SEARCHES}
    load_retrieval_settings(environ=environment)  # a setting the daemon would not know fails here, not in the daemon
    for number, (timeline, client) in enumerate(imported_scenarios(timelines, env=environment)):
        foreign = timelines[(number + len(timelines) // 2) % len(timelines)]
        for own, question in ((True, timeline["question"]), (False, foreign["question"])):
            reply = client.search_memory(query=question, limit=SEARCH_DEPTH, kinds=["memory", "episode", "decision"])
            hits = [h for h in reply.hits if h.kind == "memory" and not h.memory.superseded_by]
            kept, doubtful = hits_to_read_again(question, [(dict(h.signal_scores), h.memory.content) for h in hits])
            readings = model.relevance(question, [hits[i].memory.content for i in doubtful]) if doubtful else []
            questions.append({
                "set": path.name, "own": own, "current": timeline["current"] if own else "",
                "hits": [{"id": h.memory.external_id, "score": h.score, "kept": k,
                          "dense": h.signal_scores.get("dense", 0.0)} for h, k in zip(hits, kept)],
                "read": {str(i): p for i, p in zip(doubtful, readings)}})
    return questions


def read_hits(questions: list[dict]) -> list[tuple[float, float, bool]]:
    """(relevance, cosine, is its own question's current memory) of each labelled hit the gate reads."""
    read = []
    for q in questions:
        for position, probability in q["read"].items():
            hit = q["hits"][int(position)]
            if q["own"] and hit["id"] != q["current"]:
                continue
            read.append((probability, hit["dense"], q["own"]))
    return read


def labelled(questions: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    read = read_hits(questions)
    rows = [features(p, d) for p, d, _ in read]
    labels = [1.0 if own else 0.0 for _, _, own in read]
    return np.asarray(rows, dtype=float).reshape(-1, len(FEATURES)), np.asarray(labels)


def fitted(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Logistic regression by Newton's method, L2 on the weights (not the bias)."""
    design = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(design.shape[1])
    penalty = np.diag([L2] * x.shape[1] + [0.0])
    for _ in range(NEWTON_STEPS):
        p = 1 / (1 + np.exp(-(design @ w)))
        gradient = design.T @ (p - y) + penalty @ w
        hessian = (design * (p * (1 - p))[:, None]).T @ design + penalty
        w -= np.linalg.solve(hessian, gradient)
    return w[:-1], float(w[-1])


def gate_for(questions: list[dict], reference) -> ContextGate:
    """The gate fitted on these questions, at the lowest threshold admitting no more of their foreign hits than
    `reference` (relevance, cosine) -> bool admits."""
    x, y = labelled(questions)
    weights, bias = fitted(x, y)
    scores = 1 / (1 + np.exp(-(x @ weights + bias)))
    allowed = sum(reference(p, d) for p, d, own in read_hits(questions) if not own)
    negatives = np.sort(scores[y == 0])[::-1]
    # Just above the (allowed + 1)-th highest foreign score, to 6 places: at most `allowed` foreign hits pass.
    threshold = math.ceil(negatives[allowed] * 1e6 + 1e-9) / 1e6 if allowed < len(negatives) else 0.5
    return ContextGate(tuple(float(w) for w in weights), bias, min(threshold, 0.999999))


def in_context(question: dict, admits) -> set[str]:
    """The memories a replica of compile_context puts in the context: the kept hits, each at least MIN_RELEVANCE of
    the best one's score."""
    kept = [dict(h) for h in question["hits"]]
    for position, probability in question["read"].items():
        hit = kept[int(position)]
        hit["kept"] = admits(probability, hit["dense"])
    chosen = [h for h in kept if h["kept"]]
    return {h["id"] for h, share in zip(chosen, shares_of_best([h["score"] for h in chosen])) if share >= MIN_RELEVANCE}


def replica(questions: list[dict], admits) -> tuple[float, float]:
    """(current memory in the context, foreign question given a memory), over the questions' scenarios."""
    own = [q for q in questions if q["own"]]
    foreign = [q for q in questions if not q["own"]]
    current_in = sum(q["current"] in in_context(q, admits) for q in own) / max(len(own), 1)
    given = sum(bool(in_context(q, admits)) for q in foreign) / max(len(foreign), 1)
    return current_in, given


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sets", default=",".join(map(str, DEVELOPMENT_SETS)), help="held-out timeline set numbers")
    parser.add_argument("--foreign-like", choices=("gate", "model"), default="gate",
                        help="the threshold admits as many foreign hits as the manifest's gate (or the model's own "
                             "threshold) does")
    parser.add_argument("--write", action="store_true", help="write the gate into models/relevance/manifest.json")
    args = parser.parse_args()
    model = RelevanceModel.load(threads=2)
    manifest_path = HERE / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    replaced = ContextGate.from_manifest(manifest.get("context_gate"))
    threshold_rule = lambda p, d: p >= model.threshold  # noqa: E731
    if args.foreign_like == "gate" and replaced is None:
        parser.error("the manifest holds no gate to match: use --foreign-like model")
    reference = replaced.admits if args.foreign_like == "gate" else threshold_rule
    paths = [timeline_file(int(n)) for n in args.sets.split(",")]
    by_set = {path.name: searched(path, model) for path in paths}
    every = [q for questions in by_set.values() for q in questions]
    rules = {"threshold": threshold_rule, "replaced gate": replaced.admits if replaced else threshold_rule}
    print("| set | hits read (current / foreign) | current in: threshold / replaced gate / gate fitted on the others "
          "| foreign given a memory: threshold / replaced gate / gate |\n| --- | --- | --- | --- |")
    totals = np.zeros(6)
    for name, questions in by_set.items():
        gate = gate_for([q for other, qs in by_set.items() if other != name for q in qs], reference)
        scored = [replica(questions, rule) for rule in (*rules.values(), gate.admits)]
        x, y = labelled(questions)
        totals += [current_in for current_in, _ in scored] + [given for _, given in scored]
        print(f"| {name} | {int(y.sum())} / {int((y == 0).sum())} | "
              f"{' / '.join(f'{c:.3f}' for c, _ in scored)} | {' / '.join(f'{f:.3f}' for _, f in scored)} |")
    means = totals / len(by_set)
    print(f"| mean (leave one set out) | | {' / '.join(f'{m:.3f}' for m in means[:3])} | "
          f"{' / '.join(f'{m:.3f}' for m in means[3:])} |")
    gate = gate_for(every, reference)
    x, y = labelled(every)
    in_sample = replica(every, gate.admits)
    print(f"\nfitted on all: weights {dict(zip(FEATURES, gate.weights))}, bias {gate.bias:.4f}, threshold "
          f"{gate.threshold}; {int(y.sum())} current and {int((y == 0).sum())} foreign hits read; in-sample current in "
          f"{in_sample[0]:.3f}, foreign given a memory {in_sample[1]:.3f}")
    if args.write:
        like = "the gate it replaced" if args.foreign_like == "gate" else "the model's own threshold"
        manifest["context_gate"] = {
            "features": list(FEATURES), "weights": [round(w, 6) for w in gate.weights], "bias": round(gate.bias, 6),
            "threshold": gate.threshold, "command": COMMAND.format(sets=args.sets) + (
                " --foreign-like model" if args.foreign_like == "model" else ""), "l2": L2,
            "rule": "logistic regression on the hits compile_context reads again, searched as compile_context searches "
                    "(current memory 1, a foreign question's hit 0); threshold: the lowest admitting no more foreign "
                    f"hits than {like}",
            "hits": {"current": int(y.sum()), "foreign": int((y == 0).sum())},
            "fitted_on": {str(p.relative_to(REPO)): sha256_of(p) for p in paths},
            "leave_one_set_out": {
                "current_in": {"threshold": round(means[0], 4), "replaced_gate": round(means[1], 4),
                               "gate": round(means[2], 4)},
                "foreign_given_a_memory": {"threshold": round(means[3], 4), "replaced_gate": round(means[4], 4),
                                           "gate": round(means[5], 4)}},
        }
        manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")
        print(f"wrote the gate into {manifest_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
