"""`cortexd eval relevance`: the relevance model against the dense-cosine rule it backs up, on validation and the frozen test."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from preprocessing.relevance_model import LABELS, MIN_DENSE_ON_TOPIC

from memory_daemon.core.jsonl import json_objects_in
from memory_daemon.evals.relations import cosines

REPO = Path(__file__).resolve().parents[2]
VALIDATION = REPO / "models" / "relevance" / "data" / "val.jsonl"
# Written by a helper who saw no code, data or model output, frozen (sha256 in tests/test_heldout_frozen.py) before
# the model was trained, scored once at the end of the round that built it.
TEST = REPO / "tests" / "data" / "relevance" / "relevance_test.jsonl"


@dataclass(frozen=True)
class RelevancePair:
    query: str
    memory: str
    label: str
    kind: str
    family: str
    source: str


def load_pairs(path: Path) -> list[RelevancePair]:
    """Every line of a {query, memory, label[, kind, family, source]} JSONL; the label is RELEVANT / OFF_TOPIC or 1 / 0.
    Bad JSON, a missing field or another label is an error naming the line."""
    pairs = []
    for number, row in json_objects_in(path):
        try:
            raw = row["label"]
            label = ("RELEVANT" if raw else "OFF_TOPIC") if isinstance(raw, (bool, int)) and raw in (0, 1) \
                else str(raw).upper()
            query, memory = row["query"], row["memory"]
        except KeyError as error:
            raise ValueError(f"{path}:{number}: needs query, memory and label; missing {error}") from None
        if label not in LABELS:
            raise ValueError(f"{path}:{number}: unknown label {raw!r}; use {list(LABELS)} or 1 / 0")
        pairs.append(RelevancePair(query, memory, label, row.get("kind", ""),
                                   row.get("family") or f"pair-{row.get('id', number)}", row.get("source", "")))
    return pairs


def average_precision(scores: Sequence[float], gold: Sequence[bool]) -> float:
    """Area under the precision-recall curve, every pair ranked by its score (ties in file order)."""
    order = np.argsort(-np.asarray(scores, dtype=float), kind="stable")
    hits = np.asarray(gold, dtype=bool)[order]
    if not hits.any():
        return 0.0
    precision = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return float(precision[hits].mean())


def summarise(pairs: Sequence[RelevancePair], scores: Sequence[float], threshold: float) -> dict:
    """Average precision, and at `threshold` accuracy, precision, recall, false-positive rate and right answers by kind."""
    gold = np.array([p.label == "RELEVANT" for p in pairs])
    said = np.asarray(scores, dtype=float) >= threshold
    tp, fp = int((gold & said).sum()), int((~gold & said).sum())
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for p, s in zip(pairs, said):
        by_kind[f"{p.label}/{p.kind or '(none)'}"].append(bool(s) == (p.label == "RELEVANT"))
    return {
        "pairs": len(pairs), "relevant": int(gold.sum()), "threshold": round(threshold, 4),
        "average_precision": round(average_precision(scores, gold), 4),
        "accuracy": round(float((said == gold).mean()), 4) if len(pairs) else 0.0,
        "precision": round(tp / max(int(said.sum()), 1), 4),
        "recall": round(tp / max(int(gold.sum()), 1), 4),
        "false_positive_rate": round(fp / max(int((~gold).sum()), 1), 4),
        "right_by_kind": {k: {"pairs": len(v), "right": round(sum(v) / len(v), 4)} for k, v in sorted(by_kind.items())},
    }


def model_scores(model, pairs: Sequence[RelevancePair], batch: int = 16) -> list[float]:
    scores: list[float] = []
    relevant = LABELS.index("RELEVANT")
    for start in range(0, len(pairs), batch):
        chunk = pairs[start:start + batch]
        scores += model.probabilities([(p.query, p.memory) for p in chunk])[:, relevant].tolist()
    return scores


def score_sets(named: list[tuple[str, Path]]) -> dict[str, dict]:
    """Each pair file scored by the shipped model at its manifest threshold and by compile_context's cosine rule."""
    from preprocessing.encoder import SentenceEncoder
    from preprocessing.registry import verified_model
    from preprocessing.relevance_model import RELEVANCE_MODEL, RelevanceModel

    model, encoder = RelevanceModel.load(threads=2), SentenceEncoder.from_registry()
    threshold = float(verified_model(RELEVANCE_MODEL).manifest["threshold"])
    results = {}
    for name, path in named:
        pairs = load_pairs(path)
        similarities = cosines(encoder, [(p.query, p.memory) for p in pairs])
        results[name] = {"path": str(path),
                         "model": summarise(pairs, model_scores(model, pairs), threshold),
                         f"cosine >= {MIN_DENSE_ON_TOPIC}": summarise(pairs, similarities, MIN_DENSE_ON_TOPIC)}
    return results


def evaluate_relevance(paths: list[Path] | None = None, as_json: bool = False) -> int:
    """Print validation (used for selection and the threshold) beside the frozen test (scored once)."""
    named = [(p.stem, p) for p in paths] if paths else [("validation", VALIDATION), ("test (held-out)", TEST)]
    try:
        results = score_sets(named)
    except (OSError, ValueError) as error:
        print(f"cortexd eval relevance: {error}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(results, indent=2))
        return 0
    print("cortexd eval relevance: the relevance model (models/relevance) beside the dense-cosine rule\n")
    for name, result in results.items():
        print(f"{name}: {result['path']} ({result['model']['pairs']} pairs, {result['model']['relevant']} relevant)")
    scorers = list(next(iter(results.values())).keys())[1:]
    print("\n| measure | " + " | ".join(f"{n}: {s}" for n in results for s in scorers) + " |")
    print("| --- |" + " ---: |" * (len(results) * len(scorers)))
    for measure in ("average_precision", "accuracy", "precision", "recall", "false_positive_rate"):
        print(f"| {measure.replace('_', ' ')} | " + " | ".join(f"{r[s][measure]:.3f}" for r in results.values()
                                                             for s in scorers) + " |")
    for name, result in results.items():
        kinds = ", ".join(f"{k} {v['right']:.2f} ({v['pairs']})" for k, v in result["model"]["right_by_kind"].items())
        print(f"\n{name}, model right by kind: {kinds}")
    return 0
