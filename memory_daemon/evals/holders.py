"""`cortexd eval holders`: the holder model (whose fact a statement states) on validation and the frozen test split."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from preprocessing.holder_model import LABELS

from memory_daemon.core.jsonl import json_objects_in
from memory_daemon.evals.relevance import average_precision

REPO = Path(__file__).resolve().parents[2]
VALIDATION = REPO / "models" / "holder" / "data" / "val.jsonl"
# Written by a helper who saw no code, data or model output, frozen (sha256 in tests/test_heldout_frozen.py) before
# the model was trained, scored once at the end of the round that built it.
TEST = REPO / "tests" / "data" / "holders" / "holders_test.jsonl"


@dataclass(frozen=True)
class Statement:
    text: str
    label: str
    kind: str
    family: str


def load_statements(path: Path) -> list[Statement]:
    """Every line of a {text, label[, kind, family]} JSONL; the label is USER or OTHER. Bad JSON, a missing field or
    another label is an error naming the line."""
    statements = []
    for number, row in json_objects_in(path):
        try:
            text, label = row["text"], str(row["label"]).upper()
        except KeyError as error:
            raise ValueError(f"{path}:{number}: needs text and label; missing {error}") from None
        if label not in LABELS or not isinstance(text, str) or not text.strip():
            raise ValueError(f"{path}:{number}: needs a non-empty text and a label in {list(LABELS)}, not {label!r}")
        statements.append(Statement(text, label, str(row.get("kind", "")), str(row.get("family", f"line-{number}"))))
    return statements


def summarise(statements: Sequence[Statement], scores: Sequence[float], threshold: float) -> dict:
    """Average precision of OTHER, and at `threshold` accuracy, precision, recall and right answers by kind."""
    gold = np.array([s.label == "OTHER" for s in statements])
    said = np.asarray(scores, dtype=float) >= threshold
    tp = int((gold & said).sum())
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for s, verdict in zip(statements, said):
        by_kind[f"{s.label}/{s.kind or '(none)'}"].append(bool(verdict) == (s.label == "OTHER"))
    return {
        "statements": len(statements), "other": int(gold.sum()), "threshold": round(threshold, 4),
        "average_precision": round(average_precision(scores, gold), 4),
        "accuracy": round(float((said == gold).mean()), 4) if len(statements) else 0.0,
        "precision": round(tp / max(int(said.sum()), 1), 4),
        "recall": round(tp / max(int(gold.sum()), 1), 4),
        "right_by_kind": {k: {"statements": len(v), "right": round(sum(v) / len(v), 4)}
                          for k, v in sorted(by_kind.items())},
    }


def model_scores(model, statements: Sequence[Statement], batch: int = 32) -> list[float]:
    scores: list[float] = []
    for start in range(0, len(statements), batch):
        scores += model.other_probabilities([s.text for s in statements[start:start + batch]])
    return scores


def evaluate_holders(paths: list[Path] | None = None, as_json: bool = False) -> int:
    """Print validation (used for selection and the threshold) beside the frozen test (scored once)."""
    from preprocessing.holder_model import HolderModel

    named = [(p.stem, p) for p in paths] if paths else [("validation", VALIDATION), ("test (held-out)", TEST)]
    try:
        model = HolderModel.load(threads=2)
        results = {name: {"path": str(path), **summarise(s := load_statements(path), model_scores(model, s),
                                                          model.threshold)} for name, path in named}
    except (OSError, ValueError) as error:
        print(f"cortexd eval holders: {error}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"cortexd eval holders: the holder model (models/holder), OTHER at p >= {model.threshold}\n")
    print("| set | statements | OTHER | average precision | accuracy | precision | recall |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, r in results.items():
        print(f"| {name} | {r['statements']} | {r['other']} | {r['average_precision']:.3f} | {r['accuracy']:.3f} | "
              f"{r['precision']:.3f} | {r['recall']:.3f} |")
    for name, r in results.items():
        kinds = ", ".join(f"{k} {v['right']:.2f} ({v['statements']})" for k, v in r["right_by_kind"].items())
        print(f"\n{name} ({r['path']}), right by kind: {kinds}")
    return 0
