"""`cortexd eval relations`: the relation model and the dedup decisions it drives, on validation and held-out pairs."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from preprocessing.dedup import DedupAction, DedupCandidate, DeduplicationChecker
from preprocessing.relation_model import RELATIONS

from memory_daemon.core.jsonl import json_objects_in
from memory_daemon.evals.heldout import PAIRS_JUDGED, split_files
from memory_daemon.evals.targets import verdict

REPO = Path(__file__).resolve().parents[2]
VALIDATION = REPO / "models" / "relation" / "data" / "val.jsonl"
UPDATES = ("UPDATE", "PARTIAL_UPDATE")
# Targets of the issue that brought the model, on the independently written held-out set.
TARGETS = {
    "dedup F1": (">=", 0.90),
    "paraphrase recall": (">=", 0.85),
    "dedup false-positive rate": ("<=", 0.05),
    "updates merged as duplicates": ("<=", 0.05),
}


def load_pairs(path: Path) -> list[dict]:
    """Every line of an {existing, new, label} JSONL, the label a relation; anything else is an error naming the
    line."""
    rows = []
    for number, row in json_objects_in(path):
        if {"existing", "new", "label"} - set(row) or row["label"] not in RELATIONS:
            raise ValueError(f"{path}:{number}: needs existing, new and a label in {list(RELATIONS)}")
        rows.append(row)
    return rows


def cosines(encoder, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """Cosine of each pair of texts, one text per call: int8 vectors shift with a batch's padding."""
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    vectors = {t: np.asarray(encoder.encode([t]))[0] for t in texts}
    return [float(vectors[a] @ vectors[b]) for a, b in pairs]


def dedup_view(rows: list[dict], actions: list[DedupAction]) -> dict:
    """What the store would do with each pair: MERGE is right only for DUPLICATE, UPDATE_CANDIDATE for an update."""
    gold = [r["label"] for r in rows]
    merged = [a == DedupAction.MERGE for a in actions]
    duplicates = sum(g == "DUPLICATE" for g in gold)
    true_merges = sum(m and g == "DUPLICATE" for m, g in zip(merged, gold))
    precision = true_merges / sum(merged) if any(merged) else 0.0
    recall = true_merges / duplicates if duplicates else 0.0
    by_category = Counter(), Counter()
    for row, m in zip(rows, merged):
        if row["label"] == "DUPLICATE":
            by_category[0][row.get("category", "")] += m
            by_category[1][row.get("category", "")] += 1
    updates = [a for a, g in zip(actions, gold) if g in UPDATES]
    others = [a for a, g in zip(actions, gold) if g not in ("DUPLICATE", *UPDATES)]
    paraphrases = by_category[1].get("paraphrase", 0)
    return {
        "pairs": len(rows),
        "dedup precision": precision,
        "dedup recall": recall,
        "dedup F1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "paraphrase recall": by_category[0]["paraphrase"] / paraphrases if paraphrases else recall,
        "dedup false-positive rate": (sum(merged) - true_merges) / (len(rows) - duplicates) if len(rows) > duplicates else 0.0,
        "updates merged as duplicates": sum(a == DedupAction.MERGE for a in updates) / len(updates) if updates else 0.0,
        "updates found (UPDATE_CANDIDATE)": sum(a == DedupAction.UPDATE_CANDIDATE for a in updates) / len(updates)
        if updates else 0.0,
        "compatible/unrelated read as an update": sum(a == DedupAction.UPDATE_CANDIDATE for a in others) / len(others)
        if others else 0.0,
        "duplicate recall by category": {c: by_category[0][c] / n for c, n in sorted(by_category[1].items())},
    }


def label_scores(gold: list[str], predicted: list[str]) -> dict:
    """Accuracy, macro-F1 and per-label recall of the model's labels."""
    recall, f1 = {}, []
    for label in RELATIONS:
        hits = sum(g == p == label for g, p in zip(gold, predicted))
        support, said = gold.count(label), predicted.count(label)
        precision, recall[label] = hits / said if said else 0.0, hits / support if support else 0.0
        f1.append(2 * precision * recall[label] / (precision + recall[label]) if precision + recall[label] else 0.0)
    return {"accuracy": sum(g == p for g, p in zip(gold, predicted)) / len(gold) if gold else 0.0,
            "macro-F1": sum(f1) / len(f1), "recall by label": recall}


def score(path: Path, judge, rules: DeduplicationChecker, encoder) -> dict:
    """The model's labels (one pair per call, so the figures do not depend on the file's order) and the dedup
    decisions of the relation judge and of the rule fallback on the same pairs."""
    rows = load_pairs(path)
    similarities = cosines(encoder, [(r["existing"], r["new"]) for r in rows])
    labels = [judge.model.classify([(r["existing"], r["new"])])[0].label for r in rows]
    candidates = [DedupCandidate(f"pair-{i}", r["existing"], s) for i, (r, s) in enumerate(zip(rows, similarities))]
    model_actions = [judge.check(r["new"], [c]).action for r, c in zip(rows, candidates)]
    rule_actions = [rules.check(r["new"], [c]).action for r, c in zip(rows, candidates)]
    return {"path": str(path), "pairs": len(rows), "model": label_scores([r["label"] for r in rows], labels),
            "dedup (relation model)": dedup_view(rows, model_actions), "dedup (rules)": dedup_view(rows, rule_actions)}


def _meets(name: str, value: float | None) -> str:
    return verdict(TARGETS, name, value)


def score_sets(named: list[tuple[str, Path]]) -> dict[str, dict]:
    """score() of each named pair file, with the shipped relation model (through the judge's overrules, as the daemon
    reads pairs), the rule fallback and the encoder."""
    from preprocessing.encoder import SentenceEncoder
    from preprocessing.entities import EntityExtractor
    from preprocessing.holders import HolderReader
    from preprocessing.relation_dedup import RelationJudge
    from preprocessing.relation_model import RelationModel

    extractor = EntityExtractor.load()
    holders = HolderReader(extractor.parsed)
    judge = RelationJudge(RelationModel.load(threads=2), names_other_holder=holders.names_other_holder)
    rules, encoder = DeduplicationChecker(), SentenceEncoder.from_registry()
    return {name: score(path, judge, rules, encoder) for name, path in named}


def evaluate_relations(paths: list[Path] | None = None, as_json: bool = False) -> int:
    """Print validation (used for selection) beside the held-out test (written before tuning, scored once)."""
    named = [(p.stem, p) for p in paths] if paths else \
        [("validation", VALIDATION)] + split_files("relation_pairs_test")
    try:
        results = score_sets(named)
    except (OSError, ValueError) as error:  # a missing file, bad JSON or an unknown label: say which
        print(f"cortexd eval relations: {error}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(results, indent=2))
        return 0
    print("cortexd eval relations: the relation model (models/relation) and the dedup decisions it drives\n")
    for name, result in results.items():
        print(f"{name}: {result['path']} ({result['pairs']} pairs)")
    header = " | ".join(f"{name}: model | {name}: rules" for name in results)
    print(f"\n| measure | {header} | target (held-out) |")
    print("| --- |" + " ---: | ---: |" * len(results) + " --- |")
    model_view = next(iter(results.values()))["dedup (relation model)"]
    judged = results.get(PAIRS_JUDGED.name, list(results.values())[-1])["dedup (relation model)"]
    for measure in (m for m in model_view if m not in ("pairs", "duplicate recall by category")):
        cells = " | ".join(f"{r['dedup (relation model)'][measure]:.3f} | {r['dedup (rules)'][measure]:.3f}"
                           for r in results.values())
        print(f"| {measure} | {cells} | {_meets(measure, judged[measure])} |")
    for measure in ("accuracy", "macro-F1"):
        cells = " | ".join(f"{r['model'][measure]:.3f} | –" for r in results.values())
        print(f"| label {measure} | {cells} | |")
    for name, result in results.items():
        by_label = ", ".join(f"{k} {v:.2f}" for k, v in result["model"]["recall by label"].items())
        by_category = ", ".join(f"{k} {v:.2f}" for k, v in
                                result["dedup (relation model)"]["duplicate recall by category"].items())
        print(f"\n{name}: recall by label: {by_label}\n{name}: duplicates merged by category: {by_category}")
    return 0
