"""`cortexd eval precedence` and `eval partial`: a pair model against "the newer memory answers", on its validation pairs
(at 0.5, and at the `sure` search and compile_context read it at)."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from preprocessing.precedence_model import LABELS, verdict

from memory_daemon.core.jsonl import json_objects_in

REPO = Path(__file__).resolve().parents[2]
# Each pair model's val split (models/<name>/data/DATASET.md): for the precedence model, timeline sets, contrast
# families and relevance look-alikes it never trained on; for the partial-update reader, a fifth of its families.
VALIDATION = REPO / "models" / "precedence" / "data" / "val.jsonl"
PARTIAL_VALIDATION = REPO / "models" / "partial" / "data" / "val.jsonl"
VALIDATION_OF = {"precedence": VALIDATION, "partial": PARTIAL_VALIDATION}
FIELDS = ("question", "older", "newer", "label")


ANSWERS = {"older": "OLDER", "newer": "NEWER"}  # a family file's `answer` (models/partial/data/BRIEF_2.md) as a label


def load_pairs(path: Path) -> list[dict]:
    """Every line of a {question, older, newer, label[, kind, other, family]} JSONL; the label is OLDER or NEWER. A
    line of a family file (`answer` "older" or "newer" instead of a label, as the partial-update reader's families
    and test splits are written) is read as that label. Bad JSON, a missing field or another label is an error naming
    the line."""
    pairs = []
    for number, row in json_objects_in(path):
        if "label" not in row and "answer" in row:
            if row["answer"] not in ANSWERS:
                raise ValueError(f"{path}:{number}: unknown answer {row['answer']!r}; use {list(ANSWERS)}")
            row = {**row, "label": ANSWERS[row["answer"]]}
        missing = [f for f in FIELDS if not isinstance(row.get(f), str)]
        if missing:
            raise ValueError(f"{path}:{number}: needs text fields {', '.join(FIELDS)}; missing {', '.join(missing)}")
        if row["label"] not in LABELS:
            raise ValueError(f"{path}:{number}: unknown label {row['label']!r}; use {list(LABELS)}")
        pairs.append(row)
    return pairs


def summarise(pairs: Sequence[dict], newer: Sequence[float]) -> dict:
    """Accuracy at 0.5, overall, per label, per scenario kind and per kind of other memory (stale or neighbour),
    beside the baseline that always picks the newer memory."""
    right = [(p >= 0.5) == (pair["label"] == "NEWER") for pair, p in zip(pairs, newer, strict=True)]
    groups: dict[str, list[bool]] = defaultdict(list)
    for pair, ok in zip(pairs, right, strict=True):
        groups[f"label {pair['label']}"].append(ok)
        groups[f"other {pair.get('other', '?')}"].append(ok)
        groups[f"kind {pair.get('kind', '?')}"].append(ok)
    return {"pairs": len(pairs), "accuracy": round(sum(right) / len(right), 4) if right else None,
            "always_newer_accuracy": round(sum(p["label"] == "NEWER" for p in pairs) / len(pairs), 4)
            if pairs else None,
            "by_group": {name: {"pairs": len(oks), "accuracy": round(sum(oks) / len(oks), 4)}
                         for name, oks in sorted(groups.items())}}


def at_sure(pairs: Sequence[dict], newer: Sequence[float], sure: float) -> dict[str, int]:
    """What search and compile_context would do with these pairs at `sure`: verdicts right, wrong, and not made."""
    counts = {"right": 0, "wrong": 0, "not_sure": 0}
    for pair, p in zip(pairs, newer, strict=True):
        said = verdict(p, sure)
        counts["not_sure" if said is None else "right" if said == (pair["label"] == "NEWER") else "wrong"] += 1
    return counts


def model_scores(model, pairs: Sequence[dict], batch: int = 32) -> list[float]:
    """The model's probability of NEWER for each pair, `batch` pairs a call (each with its own question)."""
    out: list[float] = []
    for start in range(0, len(pairs), batch):
        out += model.newer_probabilities([(p["question"], p["older"], p["newer"]) for p in pairs[start:start + batch]])
    return out


def evaluate_precedence(paths: list[Path] | None, as_json: bool = False, model_name: str = "precedence") -> int:
    """Score the shipped model (`model_name`: precedence or partial) on each file (default: its validation pairs); 2
    when a file or the model is missing."""
    from preprocessing.precedence_model import PrecedenceModel
    from preprocessing.registry import ModelUnavailable

    suite = f"cortexd eval {model_name}"
    paths = paths or [VALIDATION_OF[model_name]]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        print(f"{suite}: no such file: {', '.join(missing)}")
        return 2
    try:
        model = PrecedenceModel.load(threads=2, name=model_name)
    except ModelUnavailable as error:
        print(f"{suite}: {error}")
        return 2
    results = []
    for path in paths:
        try:
            pairs = load_pairs(path)
        except (OSError, ValueError) as error:
            print(f"{suite}: {error}", file=sys.stderr)
            return 2
        if not pairs:
            print(f"{suite}: {path} holds no pairs", file=sys.stderr)
            return 2
        scores = model_scores(model, pairs)
        results.append({"path": str(path), **summarise(pairs, scores), "sure": model.sure,
                        "at_sure": at_sure(pairs, scores, model.sure)})
    if as_json:
        print(json.dumps(results, indent=2))
        return 0
    for result in results:
        print(f"\n## {result['path']}: {result['pairs']} pairs\n")
        print(f"accuracy {result['accuracy']:.3f} (always the newer memory: {result['always_newer_accuracy']:.3f})")
        decided = result["at_sure"]
        print(f"at sure {result['sure']}: {decided['right']} right, {decided['wrong']} wrong, "
              f"{decided['not_sure']} not sure\n")
        print("| group | pairs | accuracy |\n| --- | ---: | ---: |")
        for name, row in result["by_group"].items():
            print(f"| {name} | {row['pairs']} | {row['accuracy']:.3f} |")
    return 0
