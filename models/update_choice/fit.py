"""Fit the update choice (a conditional logit over an imported statement's sure updates) and write its artifacts."""

# Usage (the runtime venv: it reads the shipped relation model and encoder, no torch):
#   python models/update_choice/fit.py
# Writes weights.json, manifest.json and REPORT.md here. Fitted on TRAINING_SETS only; the L2 weight is chosen by
# leave-one-set-out over them; DEVELOPMENT_SETS are measured for the report, never fitted or selected on.

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from memory_daemon.evals.update_choice import (  # noqa: E402
    DEVELOPMENT_SETS, ROWS, TRAINING_SETS, choice_events, closest, load_models, tally,
)
from preprocessing.update_choice import FEATURES, WEIGHTS_FILE, UpdateChooser, choice_features  # noqa: E402

L2_WEIGHTS = (0.01, 0.1, 1.0)
NEWTON_STEPS = 50


def groups(events) -> list[tuple[np.ndarray, int]]:
    """(features of each sure update, index of the true predecessor) of the events where it is one of several."""
    out = []
    for event in events:
        ids = [c.memory_id for c in event.sure]
        if len(ids) > 1 and event.truth in ids:
            out.append((np.array([choice_features(event.new_text, c) for c in event.sure]), ids.index(event.truth)))
    return out


def fit(training: list[tuple[np.ndarray, int]], l2: float) -> np.ndarray:
    """Weights maximising the softmax likelihood of each true predecessor among its group, minus l2 * |w|^2 (Newton)."""
    w = np.zeros(len(FEATURES))
    for _ in range(NEWTON_STEPS):
        gradient, hessian = 2 * l2 * w, 2 * l2 * np.eye(len(w))
        for x, truth in training:
            z = x @ w
            p = np.exp(z - z.max())
            p /= p.sum()
            mean = p @ x
            gradient += mean - x[truth]
            hessian += (x * p[:, None]).T @ x - np.outer(mean, mean)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-9:
            break
    return w


def chooser(w: np.ndarray) -> UpdateChooser:
    return UpdateChooser(dict(zip(FEATURES, map(float, w), strict=True)))


def table(title: str, results: dict[str, dict]) -> list[str]:
    lines = [f"### {title}", "", "| | " + " | ".join(results) + " |", "| --- |" + " ---: |" * len(results)]
    lines += [f"| {row} | " + " | ".join(str(r.get(row, 0)) for r in results.values()) + " |" for row in ROWS]
    return lines + [""]


def main() -> int:
    argparse.ArgumentParser(description=__doc__).parse_args()
    judge, encoder = load_models()
    training = {path: choice_events(path, judge, encoder) for path in TRAINING_SETS}
    development = [e for path in DEVELOPMENT_SETS for e in choice_events(path, judge, encoder)]
    loso = {}
    for l2 in L2_WEIGHTS:
        held_out = []
        for path in TRAINING_SETS:
            rest = [g for other, events in training.items() if other != path for g in groups(events)]
            held_out += [(e, chooser(fit(rest, l2))) for e in training[path]]
        loso[l2] = sum(c.choose(e.new_text, e.sure).memory_id == e.truth for e, c in held_out)
        print(f"[fit] l2 {l2}: leave-one-set-out replaces the predecessor in {loso[l2]} events", file=sys.stderr)
    l2 = max(L2_WEIGHTS, key=lambda value: (loso[value], value))  # a tie goes to the stronger prior
    all_training = [e for events in training.values() for e in events]
    weights = fit(groups(all_training), l2)
    learned = chooser(weights)
    (HERE / WEIGHTS_FILE).write_text(json.dumps({
        "features": list(FEATURES), "weights": dict(zip(FEATURES, map(lambda v: round(float(v), 6), weights), strict=True)),
        "l2": l2}, indent=2) + "\n")
    data = {str(p.relative_to(HERE.parent.parent)): hashlib.sha256(p.read_bytes()).hexdigest() for p in TRAINING_SETS}
    (HERE / "manifest.json").write_text(json.dumps({
        "name": "cortexd-update-choice",
        "task": "which of the memories an imported statement is surely read as wholly updating it replaces",
        "source": {"training_timelines_sha256": data, "relation_model": "models/relation (as shipped when fitted)",
                   "encoder": "models/encoder"},
        "licence": "Apache-2.0",
        "files": {WEIGHTS_FILE: {"sha256": hashlib.sha256((HERE / WEIGHTS_FILE).read_bytes()).hexdigest(),
                                 "bytes": (HERE / WEIGHTS_FILE).stat().st_size}},
        "build": {"command": "python models/update_choice/fit.py", "model": "conditional logit, Newton's method",
                  "l2": l2, "features": list(FEATURES)},
    }, indent=2) + "\n")
    lines = ["# Update choice: report", "",
             "Written by `python models/update_choice/fit.py`. An event is one timeline statement, read in time order "
             "against the earlier memories of its timeline as import reads them (the nearest four by cosine, from "
             "0.15), that the relation model is sure it wholly updates (`sure_updates`). The choice picks the one it "
             "replaces; the rule it replaces picks the closest in meaning.", "",
             f"Weights (L2 {l2}, chosen by leave-one-set-out over the training sets: "
             + ", ".join(f"{k} -> {v} right" for k, v in loso.items()) + "):", "",
             "| feature | weight |", "| --- | ---: |"]
    lines += [f"| {name} | {value:.3f} |" for name, value in zip(FEATURES, weights, strict=True)] + [""]
    lines += table("Training sets (v1-v8, v10, v17): in-sample", {
        "learned (in-sample)": tally(all_training, learned.choose), "closest in meaning": tally(all_training, closest)})
    lines += table("Development sets (v11-v16, v18-v20): not fitted on, looked at before (development, not held-out)", {
        "learned": tally(development, learned.choose), "closest in meaning": tally(development, closest)})
    (HERE / "REPORT.md").write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
