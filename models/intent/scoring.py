"""Reads the intent dataset splits and scores predictions against them; numpy only, shared by train/export/evaluate."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from classification_metrics import classification_metrics, family_bootstrap, reliability
from split_snapshot import snapshot_splits

if TYPE_CHECKING:
    from preprocessing.intent_rules import IntentPrediction

SPLITS = ("train", "val", "test")
REQUEST_SPLITS = ("requests_train", "requests_val")
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


def request_paths(data_dir: Path) -> dict[str, Path]:
    """The request heads' splits (request_data.py writes them) beside the intent splits."""
    return {split: Path(data_dir) / f"{split}.jsonl" for split in REQUEST_SPLITS}


def snapshot(data_dir: Path, into: Path, labels: Sequence[str], shown: Path) -> dict:
    """Copy the three splits into `into` (models/split_snapshot.py); their provenance."""
    return snapshot_splits(split_paths(data_dir), into, shown, lambda copy: len(load_split(copy, labels)))


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


def paired_latency(before: Callable[[str], object], after: Callable[[str], object], texts: Sequence[str],
                   rounds: int = 3) -> dict:
    """Milliseconds per message of two classifiers timed on the same texts, alternating which runs first so
    load from other work on the machine falls on both alike; p50/p95 each and the median paired difference."""
    for text in texts[:WARM_UP]:
        before(text)
        after(text)
    times: dict[str, list[float]] = {"before": [], "after": []}
    for round_ in range(rounds):
        for i, text in enumerate(texts):
            order = (("before", before), ("after", after)) if (i + round_) % 2 == 0 else \
                (("after", after), ("before", before))
            for name, classify in order:
                t0 = time.perf_counter()
                classify(text)
                times[name].append((time.perf_counter() - t0) * 1000)
    ms = {k: np.array(v) for k, v in times.items()}
    return {**{k: {"p50": round(float(np.percentile(v, 50)), 3), "p95": round(float(np.percentile(v, 95)), 3)}
               for k, v in ms.items()},
            "median_paired_difference_ms": round(float(np.median(ms["after"] - ms["before"])), 3),
            "samples": len(ms["after"])}
