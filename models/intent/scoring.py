"""Reads the intent dataset splits and scores predictions against them; numpy only, shared by train/export/evaluate."""

from __future__ import annotations

import json
import shutil
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from preprocessing.intent_rules import IntentPrediction

SPLITS = ("train", "val", "test")
WARM_UP = 20
TRUST = 0.7  # the daemon's default intent_confidence: below it an intent is not acted on


@dataclass(frozen=True)
class Example:
    text: str
    label: str
    family: str


def load_split(path: Path, labels: Sequence[str]) -> list[Example]:
    """Every line of a {text, label, family} JSONL split; an unknown label is an error, not a skip."""
    examples = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if row["label"] not in labels:
            raise ValueError(f"{path}:{number}: unknown label {row['label']!r}")
        examples.append(Example(row["text"], row["label"], row.get("family", "")))
    return examples


def split_paths(data_dir: Path) -> dict[str, Path]:
    return {split: Path(data_dir) / f"{split}.jsonl" for split in SPLITS}


def snapshot(data_dir: Path, into: Path, labels: Sequence[str], shown: Path) -> dict:
    """Copy the three splits into `into`, so a dataset rewritten mid-run cannot mix versions; their provenance.

    `shown` is the directory paths are recorded relative to (the repo), so a manifest does not name a machine.
    """
    from preprocessing.registry import sha256_of

    into.mkdir(parents=True, exist_ok=True)
    provenance = {}
    for split, path in split_paths(data_dir).items():
        copy = into / path.name
        shutil.copyfile(path, copy)
        source = path.resolve()
        provenance[split] = {
            "file": str(source.relative_to(shown)) if shown in source.parents else str(source),
            "sha256": sha256_of(copy),
            "examples": len(load_split(copy, labels)),
        }
    return provenance


def confusion(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Rows are gold labels, columns predictions, both in `labels` order."""
    index = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for g, p in zip(gold, predicted, strict=True):
        matrix[index[g], index[p]] += 1
    return matrix


def classification_metrics(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> dict:
    """Accuracy, macro-F1 and per-class precision/recall/F1/support; an empty class scores 0, as in sklearn."""
    matrix = confusion(gold, predicted, labels)
    true_pos = np.diag(matrix).astype(np.float64)
    support = matrix.sum(axis=1)
    predicted_count = matrix.sum(axis=0)
    precision = np.divide(true_pos, predicted_count, out=np.zeros_like(true_pos), where=predicted_count > 0)
    recall = np.divide(true_pos, support, out=np.zeros_like(true_pos), where=support > 0)
    denom = precision + recall
    f1 = np.divide(2 * precision * recall, denom, out=np.zeros_like(true_pos), where=denom > 0)
    total = int(matrix.sum())
    return {
        "examples": total,
        "accuracy": round(float(true_pos.sum() / total), 6) if total else 0.0,
        "macro_f1": round(float(f1.mean()), 6),
        "per_class": {
            label: {"precision": round(float(precision[i]), 6), "recall": round(float(recall[i]), 6),
                    "f1": round(float(f1[i]), 6), "support": int(support[i])}
            for i, label in enumerate(labels)
        },
        "confusion": matrix.tolist(),
    }


# Confidence buckets for the reliability table; the daemon trusts an intent at >= 0.7.
CONFIDENCE_EDGES = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)


def reliability(confidences: Sequence[float], correct: Sequence[bool]) -> dict:
    """Count, mean confidence and accuracy per confidence bucket, plus the expected calibration error."""
    conf = np.asarray(confidences, dtype=np.float64)
    hit = np.asarray(correct, dtype=np.float64)
    buckets = []
    ece = 0.0
    for low, high in zip(CONFIDENCE_EDGES[:-1], CONFIDENCE_EDGES[1:]):
        inside = (conf >= low) & ((conf < high) if high < 1.0 else (conf <= high))
        count = int(inside.sum())
        mean_conf = float(conf[inside].mean()) if count else 0.0
        accuracy = float(hit[inside].mean()) if count else 0.0
        ece += count * abs(mean_conf - accuracy)
        buckets.append({"low": low, "high": high, "count": count, "mean_confidence": round(mean_conf, 4),
                        "accuracy": round(accuracy, 4)})
    return {"buckets": buckets, "ece": round(ece / max(len(conf), 1), 4)}


def family_bootstrap(correct: Sequence[bool], families: Sequence[str], rounds: int = 2000,
                     seed: int = 0) -> dict:
    """95 % interval for accuracy, resampling whole families: errors cluster in a family, so resampling
    single messages would overstate how sure one test split can make us."""
    by_family: dict[str, list[bool]] = {}
    for hit, family in zip(correct, families, strict=True):
        by_family.setdefault(family, []).append(hit)
    hits = np.array([sum(v) for v in by_family.values()], dtype=np.float64)
    sizes = np.array([len(v) for v in by_family.values()], dtype=np.float64)
    picks = np.random.default_rng(seed).integers(0, len(sizes), size=(rounds, len(sizes)))
    accuracy = hits[picks].sum(axis=1) / sizes[picks].sum(axis=1)
    low, high = np.percentile(accuracy, [2.5, 97.5])
    return {"families": len(sizes), "low": round(float(low), 4), "high": round(float(high), 4)}


@dataclass(frozen=True)
class Scored:
    """One classifier's predictions on a split, with the seconds each call took."""

    predictions: list[IntentPrediction]
    seconds: list[float]


def score(classify: Callable[[str], IntentPrediction], examples: Sequence[Example]) -> Scored:
    """Classify each example alone, timing each call (tokenisation, inference, softmax)."""
    for example in examples[:WARM_UP]:
        classify(example.text)
    predictions, seconds = [], []
    for example in examples:
        t0 = time.perf_counter()
        predictions.append(classify(example.text))
        seconds.append(time.perf_counter() - t0)
    return Scored(predictions, seconds)


def summarise(examples: Sequence[Example], scored: Scored, labels: Sequence[str]) -> dict:
    """Everything the manifest and the report say about one classifier on one split."""
    gold = [e.label for e in examples]
    predicted = [p.intent for p in scored.predictions]
    correct = [g == p for g, p in zip(gold, predicted)]
    confidences = [p.confidence for p in scored.predictions]
    trusted = [c >= TRUST for c in confidences]
    ms = np.array(scored.seconds) * 1000
    by_family: dict[str, list[bool]] = defaultdict(list)
    for example, hit in zip(examples, correct):
        by_family[example.family].append(hit)
    return {
        **classification_metrics(gold, predicted, labels),
        "accuracy_interval": family_bootstrap(correct, [e.family for e in examples]),
        "calibration": reliability(confidences, correct),
        "trusted_share": round(float(np.mean(trusted)), 4),
        "trusted_accuracy": round(float(np.mean([c for c, t in zip(correct, trusted) if t])), 4) if any(trusted)
        else 0.0,
        "latency_ms": {"p50": round(float(np.percentile(ms, 50)), 3), "p95": round(float(np.percentile(ms, 95)), 3),
                       "samples": len(ms)},
        "families": {f: {"examples": len(h), "accuracy": round(sum(h) / len(h), 4)} for f, h in by_family.items()},
        "errors": [{"text": e.text, "gold": e.label, "predicted": p.intent, "confidence": round(p.confidence, 3),
                    "family": e.family}
                   for e, p, hit in zip(examples, scored.predictions, correct) if not hit],
    }
