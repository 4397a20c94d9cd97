"""Entity extraction measured on a labelled JSON-lines set: recall of the gold entities, a precision estimate, and
how often names are invented on messages that name nothing."""

from __future__ import annotations

import json
from pathlib import Path

from preprocessing.entities import VALUE_LABELS, VERSION_TOKEN, EntityExtractor

MAX_EXAMPLES = 30


def is_name_label(label: str) -> bool:
    """Whether an entity of this label names a thing (a person, organisation, place, product, technology, project,
    code identifier or path), as opposed to a value (a date, time, amount, count or percentage).

    The invented rate counts names only. Values are left out because the gold sets annotate dates, times and money
    but never counts or percentages ("40%" in a message with no entities), so a predicted CARDINAL would count the
    annotation policy rather than an error; dates and times are still scored by recall. CODE and PATH count: the
    store keys memories by them and spreading activation links memories through them just as through names.
    """
    return label not in VALUE_LABELS


def _key_matches(predicted: str, gold: str) -> bool:
    """Equal keys, or a predicted versioned product for an unversioned gold one ("python 3.12" finds "python")."""
    if predicted == gold:
        return True
    if predicted.startswith(gold + " "):
        return VERSION_TOKEN.fullmatch(predicted[len(gold) + 1 :]) is not None
    return False


def evaluate_entities(path: Path, extractor: EntityExtractor | None = None) -> dict:
    """Recall of the gold entities in a JSON-lines file, an estimate of precision, and the invented rate.

    Returns {"messages", "gold_entities", "found", "recall", "precision_estimate",
    "by_label": {label: recall}, "misses": [first 30 {"text", "missing"}],
    "nameless_messages", "invented_messages", "invented_rate", "invented_by_label": {label: messages},
    "inventions": [first 30 {"text", "invented"}]}.

    A gold entity counts as found when a predicted key equals its normalised key (or
    contains it, for versioned products); a gold name that is in the gazetteer
    also accepts its technology key whatever its label. Precision is an estimate because it
    counts only predictions whose label the gold file annotates at all (so
    unannotated CARDINALs do not count), and gold sets are never complete.

    The invented rate is the share of nameless messages (no gold entity with a name label, is_name_label) on which
    the extractor returns at least one entity with a name label: "db-stg-2" as PERSON on "db-stg-2 is out of disk".
    """
    extractor = extractor or EntityExtractor.load()
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    analyses = extractor.analyze_batch([row["text"] for row in rows])
    gold_labels = {g["label"] for row in rows for g in row["entities"]}
    totals: dict[str, list[int]] = {}
    found = gold_count = predicted = correct = 0
    nameless = invented = 0
    invented_by_label: dict[str, int] = {}
    misses, inventions = [], []
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
        if missing and len(misses) < MAX_EXAMPLES:
            misses.append({"text": row["text"], "missing": missing})
        if not any(is_name_label(g["label"]) for g in row["entities"]):
            nameless += 1
            names = [e for e in analysis.entities if is_name_label(e.label)]
            invented += bool(names)
            for label in {e.label for e in names}:
                invented_by_label[label] = invented_by_label.get(label, 0) + 1
            if names and len(inventions) < MAX_EXAMPLES:
                inventions.append({"text": row["text"], "invented": [f"{e.text} ({e.label})" for e in names]})
    return {
        "messages": len(rows),
        "gold_entities": gold_count,
        "found": found,
        "recall": found / gold_count if gold_count else 1.0,
        "precision_estimate": correct / predicted if predicted else 1.0,
        "by_label": {label: hit / total for label, (hit, total) in sorted(totals.items())},
        "misses": misses,
        "nameless_messages": nameless,
        "invented_messages": invented,
        "invented_rate": invented / nameless if nameless else 0.0,
        "invented_by_label": dict(sorted(invented_by_label.items())),
        "inventions": inventions,
    }
