"""Reads relation pair files and scores predictions on them, with the dedup view; numpy only, shared by train/export/evaluate."""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from classification_metrics import classification_metrics, family_bootstrap, reliability
from split_snapshot import snapshot_splits

SPLITS = ("train", "val")
WARM_UP = 10
BATCH = 8  # pairs per classify() call when scoring: the dedup check sends a new text with its top candidates
UPDATES = ("UPDATE", "PARTIAL_UPDATE")


@dataclass(frozen=True)
class PairExample:
    existing: str
    new: str
    label: str
    category: str
    family: str
    source: str


def load_pairs(path: Path, labels: Sequence[str]) -> list[PairExample]:
    """Every line of an {existing, new, label[, category, family, source]} JSONL; an unknown label is an error. A
    pair without a family (a held-out split, each pair written on its own) is its own family, named by its id or line."""
    examples = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        label = str(row["label"]).upper()
        if label not in labels:
            raise ValueError(f"{path}:{number}: unknown label {row['label']!r}")
        examples.append(PairExample(row["existing"], row["new"], label, row.get("category", ""),
                                    row.get("family") or f"pair-{row.get('id', number)}", row.get("source", "")))
    return examples


def split_paths(data_dir: Path) -> dict[str, Path]:
    return {split: Path(data_dir) / f"{split}.jsonl" for split in SPLITS}


def snapshot(data_dir: Path, into: Path, labels: Sequence[str], shown: Path) -> dict:
    """Copy the splits into `into` (models/split_snapshot.py); their provenance."""
    return snapshot_splits(split_paths(data_dir), into, shown, lambda copy: len(load_pairs(copy, labels)))


@dataclass(frozen=True)
class Scored:
    """One model's predictions on a pair file: label, confidence and probabilities per pair, seconds per call."""

    labels: list[str]
    confidences: list[float]
    probabilities: list[dict[str, float]]
    seconds_per_call: list[float]


def score(classify: Callable, examples: Sequence[PairExample], batch: int = BATCH) -> Scored:
    """classify(pairs) -> Relations, called on `batch` pairs at a time in file order, each call timed."""
    pairs = [(e.existing, e.new) for e in examples]
    for start in range(0, min(len(pairs), WARM_UP * batch), batch):
        classify(pairs[start:start + batch])
    labels, confidences, probabilities, seconds = [], [], [], []
    for start in range(0, len(pairs), batch):
        t0 = time.perf_counter()
        relations = classify(pairs[start:start + batch])
        seconds.append(time.perf_counter() - t0)
        for r in relations:
            labels.append(r.label)
            confidences.append(r.confidence)
            probabilities.append(r.probabilities)
    return Scored(labels, confidences, probabilities, seconds)


def dedup_view(gold: Sequence[str], predicted: Sequence[str], categories: Sequence[str]) -> dict:
    """What the store would do with these answers: merge on DUPLICATE, supersede on an update, else keep both.

    updates_as_duplicate is the costly error: the new value would be merged away into the old memory.
    """
    g, p = np.asarray(gold), np.asarray(predicted)
    dup_gold, dup_pred = g == "DUPLICATE", p == "DUPLICATE"
    tp = int((dup_gold & dup_pred).sum())
    precision = tp / int(dup_pred.sum()) if dup_pred.any() else 0.0
    recall = tp / int(dup_gold.sum()) if dup_gold.any() else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    upd_gold = np.isin(g, UPDATES)
    keep_gold = np.isin(g, ("COMPATIBLE", "UNRELATED"))
    by_category: dict[str, list[bool]] = defaultdict(list)
    for gold_label, hit, category in zip(g, dup_pred, categories):
        if gold_label == "DUPLICATE":
            by_category[category or "(none)"].append(bool(hit))
    return {
        "duplicate_precision": round(precision, 6), "duplicate_recall": round(recall, 6),
        "duplicate_f1": round(f1, 6), "duplicates": int(dup_gold.sum()),
        "updates": int(upd_gold.sum()),
        "updates_as_duplicate": round(float((upd_gold & dup_pred).sum() / max(upd_gold.sum(), 1)), 6),
        # UPDATE and PARTIAL_UPDATE both lead to a supersession decision, so either answer counts here.
        "update_recall_either": round(float((upd_gold & np.isin(p, UPDATES)).sum() / max(upd_gold.sum(), 1)), 6),
        "keep_both": int(keep_gold.sum()),
        "keep_both_as_duplicate": round(float((keep_gold & dup_pred).sum() / max(keep_gold.sum(), 1)), 6),
        "keep_both_as_update": round(float((keep_gold & np.isin(p, UPDATES)).sum() / max(keep_gold.sum(), 1)), 6),
        "duplicate_recall_by_category": {c: {"pairs": len(h), "recall": round(sum(h) / len(h), 4)}
                                         for c, h in sorted(by_category.items())},
    }


def summarise(examples: Sequence[PairExample], scored: Scored, labels: Sequence[str], batch: int = BATCH) -> dict:
    """Everything the manifest and the report say about one model on one pair file."""
    gold = [e.label for e in examples]
    correct = [g == p for g, p in zip(gold, scored.labels)]
    ms = np.array(scored.seconds_per_call) * 1000
    by_family: dict[str, list[bool]] = defaultdict(list)
    by_category: dict[str, list[bool]] = defaultdict(list)
    for example, hit in zip(examples, correct):
        by_family[example.family].append(hit)
        by_category[f"{example.label}/{example.category or '(none)'}"].append(hit)
    return {
        **classification_metrics(gold, scored.labels, labels),
        "accuracy_interval": family_bootstrap(correct, [e.family for e in examples]),
        "calibration": reliability(scored.confidences, correct),
        "dedup": dedup_view(gold, scored.labels, [e.category for e in examples]),
        "latency_ms": {"batch": batch, "p50": round(float(np.percentile(ms, 50)), 3),
                       "p95": round(float(np.percentile(ms, 95)), 3), "calls": len(ms)},
        "categories": {c: {"pairs": len(h), "accuracy": round(sum(h) / len(h), 4)}
                       for c, h in sorted(by_category.items())},
        "families": {f: {"pairs": len(h), "accuracy": round(sum(h) / len(h), 4)} for f, h in by_family.items()},
        "errors": [{"existing": e.existing, "new": e.new, "gold": e.label, "predicted": p, "confidence": round(c, 3),
                    "category": e.category, "family": e.family}
                   for e, p, c, hit in zip(examples, scored.labels, scored.confidences, correct) if not hit],
    }
