"""Scores the save/recall request heads on a request split: thresholds, recall, precision, false positives; numpy only."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from request_data import HEADS, RequestExample, is_hard_negative

MAX_VAL_FPR = 0.02  # a head's threshold is the one with the best val recall at a false-positive rate at most this
MAX_VAL_HARD_FPR = 0.03  # ... and at a false-positive rate on its hard negatives at most this (issue 15's two targets)


def binary_metrics(gold: Sequence[bool], predicted: Sequence[bool]) -> dict:
    """Recall, precision, F1 and false-positive rate of one yes/no decision, with the counts behind them."""
    g, p = np.asarray(gold, dtype=bool), np.asarray(predicted, dtype=bool)
    tp, fp, fn = int((g & p).sum()), int((~g & p).sum()), int((g & ~p).sum())
    negatives = int((~g).sum())
    recall = tp / (tp + fn) if tp + fn else 1.0
    precision = tp / (tp + fp) if tp + fp else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"positives": tp + fn, "negatives": negatives, "true_positives": tp, "false_positives": fp,
            "recall": round(recall, 4), "precision": round(precision, 4), "f1": round(f1, 4),
            "false_positive_rate": round(fp / negatives, 4) if negatives else 0.0}


def choose_threshold(gold: Sequence[bool], probs: Sequence[float], max_fpr: float = MAX_VAL_FPR,
                     hard: Sequence[bool] | None = None, max_hard_fpr: float = MAX_VAL_HARD_FPR) -> float:
    """The threshold with the highest recall whose false-positive rate is at most max_fpr and, given `hard` (which
    rows are hard negatives), whose rate on those rows is at most max_hard_fpr; among equal recalls the highest cut
    (fewest false positives), set midway to the next lower val probability so it does not sit on a val score."""
    g, p = np.asarray(gold, dtype=bool), np.asarray(probs, dtype=np.float64)
    h = np.zeros_like(g) if hard is None else np.asarray(hard, dtype=bool)
    candidates = np.unique(p)  # "probability >= cut" for each distinct score, tried from the top down
    best_cut, best_recall = 1.0, -1.0
    for cut in candidates[::-1]:  # both rates only grow as the cut falls, so the first breach ends the search
        m = binary_metrics(g, p >= cut)
        hard_fpr = float((p[h] >= cut).mean()) if h.any() else 0.0
        if m["false_positive_rate"] > max_fpr or hard_fpr > max_hard_fpr:
            break
        if m["recall"] > best_recall:
            best_cut, best_recall = float(cut), m["recall"]
    below = p[p < best_cut]
    return round((best_cut + float(below.max())) / 2, 4) if below.size else round(best_cut, 4)


def head_summary(examples: Sequence[RequestExample], head: str, predicted: Sequence[bool]) -> dict:
    """One head's decisions on a request split: overall, on hard negatives, per family, and the errors."""
    gold = [getattr(e, head) for e in examples]
    hard = [is_hard_negative(e, head) for e in examples]
    hard_fp = sum(p for p, h in zip(predicted, hard) if h)
    families: dict[str, list[bool]] = defaultdict(list)
    for e, g, p in zip(examples, gold, predicted):
        families[e.family].append(g == p)
    return {
        **binary_metrics(gold, predicted),
        "hard_negatives": sum(hard),
        "hard_negative_false_positives": int(hard_fp),
        "hard_negative_false_positive_rate": round(hard_fp / sum(hard), 4) if any(hard) else 0.0,
        "families": {f: {"examples": len(h), "errors": h.count(False)} for f, h in sorted(families.items())},
        "errors": [{"text": e.text, "gold": g, "family": e.family}
                   for e, g, p in zip(examples, gold, predicted) if g != p],
    }


def request_summary(examples: Sequence[RequestExample], decisions: dict[str, Sequence[bool]]) -> dict:
    """head_summary for each head that has decisions."""
    return {head: head_summary(examples, head, decisions[head]) for head in HEADS if head in decisions}
