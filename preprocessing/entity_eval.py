"""Entity extraction measured on a labelled JSON-lines set: recall of the gold entities and a precision estimate."""

from __future__ import annotations

import json
from pathlib import Path

from preprocessing.entities import VERSION_TOKEN, EntityExtractor


def _key_matches(predicted: str, gold: str) -> bool:
    """Equal keys, or a predicted versioned product for an unversioned gold one ("python 3.12" finds "python")."""
    if predicted == gold:
        return True
    if predicted.startswith(gold + " "):
        return VERSION_TOKEN.fullmatch(predicted[len(gold) + 1 :]) is not None
    return False


def evaluate_entities(path: Path, extractor: EntityExtractor | None = None) -> dict:
    """Recall of the gold entities in a JSON-lines file, and an estimate of precision.

    Returns {"messages", "gold_entities", "found", "recall", "precision_estimate",
    "by_label": {label: recall}, "misses": [first 30 {"text", "missing"}]}. A gold
    entity counts as found when a predicted key equals its normalised key (or
    contains it, for versioned products); a gold name that is in the gazetteer
    also accepts its technology key whatever its label. Precision is an estimate because it
    counts only predictions whose label the gold file annotates at all (so
    unannotated CARDINALs do not count), and gold sets are never complete.
    """
    extractor = extractor or EntityExtractor.load()
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    analyses = extractor.analyze_batch([row["text"] for row in rows])
    gold_labels = {g["label"] for row in rows for g in row["entities"]}
    totals: dict[str, list[int]] = {}
    found = gold_count = predicted = correct = 0
    misses = []
    for row, analysis in zip(rows, analyses):
        keys = [e.key for e in analysis.entities]
        gold_keys = [extractor.gold_keys(g["text"], g["label"]) for g in row["entities"]]
        missing = []
        for gold, accepted in zip(row["entities"], gold_keys):
            hit = any(_key_matches(key, g) for key in keys for g in accepted)
            stats = totals.setdefault(gold["label"], [0, 0])
            stats[0] += hit
            stats[1] += 1
            found += hit
            gold_count += 1
            if not hit:
                missing.append(gold["text"])
        for entity in analysis.entities:
            if entity.label in gold_labels:
                predicted += 1
                correct += any(_key_matches(entity.key, g) for accepted in gold_keys for g in accepted)
        if missing and len(misses) < 30:
            misses.append({"text": row["text"], "missing": missing})
    return {
        "messages": len(rows),
        "gold_entities": gold_count,
        "found": found,
        "recall": found / gold_count if gold_count else 1.0,
        "precision_estimate": correct / predicted if predicted else 1.0,
        "by_label": {label: hit / total for label, (hit, total) in sorted(totals.items())},
        "misses": misses,
    }
