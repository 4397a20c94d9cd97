"""Label-agnostic scores for a classifier: confusion matrix, accuracy, macro-F1, calibration, a by-family interval."""

# numpy only; models/intent/scoring.py and models/relation/scoring.py both score with these.

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

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


# Confidence buckets for the reliability table (the daemon acts on an intent at >= 0.7).
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
