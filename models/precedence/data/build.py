"""Build the precedence model's pairs from timeline files: (question, older memory, newer memory) -> which answers now."""

# Usage (runtime venv): .venv/bin/python models/precedence/data/build.py [--siblings]
# Three sources (DATASET.md). Timelines: every scenario gives, for its current memory and each other memory of it,
# one pair in time order, labelled NEWER when the current memory is the newer of the two and OLDER when it is the
# older; split by set, never by scenario: VAL_SETS are the validation split; EXCLUDED are never read (held-out splits
# nobody has scored, and one whose text was shown once but which was never scored). Hand-written contrast families
# (pairs_handwritten.jsonl; with --siblings also pairs_siblings.jsonl and pairs_siblings_2.jsonl): one older and one
# newer note with questions answered by each; split by family. The relevance model's pairs (models/relevance/data):
# an answer and a look-alike of one question put in a seeded time order, so that a newer memory on the subject that
# does not answer loses; its own train and val splits.

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DATA = REPO / "tests" / "data"
VAL_SETS = ("heldout_24", "heldout_25")
# name -> file: the contrast families of six kinds the shipped model (P2s) was trained with, and the sibling subjects
# only session 41's candidates were (`--siblings`; README, Quality, "Session 41")
HANDWRITTEN = {"handwritten": HERE / "pairs_handwritten.jsonl"}
SIBLINGS = {"siblings": HERE / "pairs_siblings.jsonl", "siblings_2": HERE / "pairs_siblings_2.jsonl"}
HANDWRITTEN_VAL_SHARE = 0.2  # of the hand-written families, by a hash of the family id
RELEVANCE = REPO / "models" / "relevance" / "data"
# The relevance pairs used: answers and look-alikes of the team's questions and of hand-written queries. An older
# value is RELEVANT there but not the answer now, and timeline pairs come from the files above.
RELEVANCE_SOURCES = ("questions", "handwritten")
RELEVANCE_ANSWER_KINDS = ("evidence", "paraphrase", "lexical", "indirect", "task_context")
LOOK_ALIKES_PER_ANSWER = 2
SEED = 40
EXCLUDED = ("heldout_17", "heldout_26", "heldout_27", "heldout_28", "heldout_29")


def timeline_files() -> list[tuple[str, Path]]:
    """(set name, file) of every timeline file but the excluded ones, the team's own first."""
    files = [("team", DATA / "retrieval" / "timelines.jsonl")]
    files += [(path.parent.name, path) for path in sorted(DATA.glob("heldout*/timelines_test*.jsonl"))
              if path.parent.name not in EXCLUDED]
    return files


def pairs_of(set_name: str, scenario: dict) -> list[dict]:
    """The scenario's current memory against each other memory, the two in time order."""
    memories = {m["id"]: m for m in scenario["memories"]}
    current = memories.get(scenario["current"])
    if current is None:
        return []
    stale = set(scenario.get("stale") or [])
    rows = []
    for other in scenario["memories"]:
        if other["id"] == current["id"] or other["text"].strip() == current["text"].strip():
            continue
        older, newer = sorted((other, current), key=lambda m: (m["timestamp"], m["id"]))
        rows.append({"family": f"{set_name}/{scenario['id']}", "kind": scenario.get("kind", ""),
                     "other": "stale" if other["id"] in stale else "neighbour",
                     "question": scenario["question"], "older": older["text"], "newer": newer["text"],
                     "label": "NEWER" if newer is current else "OLDER"})
    return rows


def split_of_family(family: str) -> str:
    digest = int(hashlib.sha256(family.encode("utf-8")).hexdigest()[:8], 16)
    return "val" if digest / 0xFFFFFFFF < HANDWRITTEN_VAL_SHARE else "train"


def handwritten_pairs(name: str, path: Path) -> list[dict]:
    """The hand-written families' questions, each with the family's older and newer note."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            rows.append({"family": f"{name}/{row['family']}", "kind": row["category"], "other": name,
                         "question": row["question"], "older": row["older"], "newer": row["newer"],
                         "label": "NEWER" if row["answer"] == "newer" else "OLDER"})
    return rows


def relevance_pairs(split: str) -> list[dict]:
    """Each answer of a relevance query beside up to LOOK_ALIKES_PER_ANSWER of its look-alikes, in a seeded order."""
    rng = random.Random(f"{SEED}:{split}")
    by_query: dict[tuple[str, str], tuple[list[dict], list[dict]]] = {}
    for line in (RELEVANCE / f"{split}.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line) if line.strip() else None
        if row is None or row.get("source") not in RELEVANCE_SOURCES:
            continue
        answers, look_alikes = by_query.setdefault((row["family"], row["query"]), ([], []))
        if row["label"] == "RELEVANT" and row.get("kind") in RELEVANCE_ANSWER_KINDS:
            answers.append(row)
        elif row["label"] == "OFF_TOPIC":
            look_alikes.append(row)
    rows = []
    for (family, query), (answers, look_alikes) in by_query.items():
        for answer in answers:
            for other in rng.sample(look_alikes, min(LOOK_ALIKES_PER_ANSWER, len(look_alikes))):
                answer_newer = rng.random() < 0.5
                older, newer = (other, answer) if answer_newer else (answer, other)
                rows.append({"family": f"relevance/{family}", "kind": "relevance", "other": f"look-alike {other['kind']}",
                             "question": query, "older": older["memory"], "newer": newer["memory"],
                             "label": "NEWER" if answer_newer else "OLDER"})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--siblings", action="store_true",
                        help="add the sibling-subject families (P5's data; the shipped model was built without them)")
    args = parser.parse_args(argv)
    splits: dict[str, list[dict]] = {"train": [], "val": []}
    sources = []
    for set_name, path in timeline_files():
        split = "val" if set_name in VAL_SETS else "train"
        scenarios = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        for scenario in scenarios:
            splits[split] += pairs_of(set_name, scenario)
        sources.append({"set": set_name, "file": str(path.relative_to(REPO)), "split": split,
                        "scenarios": len(scenarios),
                        "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
    for name, path in (HANDWRITTEN | SIBLINGS if args.siblings else HANDWRITTEN).items():
        rows = handwritten_pairs(name, path)
        for row in rows:
            splits[split_of_family(row["family"])].append(row)
        sources.append({"set": name, "file": str(path.relative_to(REPO)), "split": "by family",
                        "pairs": len(rows), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
    for split in ("train", "val"):
        rows = relevance_pairs(split)
        splits[split] += rows
        path = RELEVANCE / f"{split}.jsonl"
        sources.append({"set": f"relevance {split}", "file": str(path.relative_to(REPO)), "split": split,
                        "pairs": len(rows), "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
    for split, rows in splits.items():
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        (HERE / f"{split}.jsonl").write_text(text, encoding="utf-8")
        labels = {label: sum(r["label"] == label for r in rows) for label in ("NEWER", "OLDER")}
        print(f"{split}: {len(rows)} pairs {labels}")
    (HERE / "sources.json").write_text(json.dumps(sources, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
