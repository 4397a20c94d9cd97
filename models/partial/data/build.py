"""Build the partial-update reader's pairs: (question, older note, newer note that changed one of its details) -> which answers."""

# Usage (runtime venv): .venv/bin/python models/partial/data/build.py [--brief-2]
# --brief-2 adds brief 2's families (BRIEF_2.md, session 48), which only session 48's candidates were trained on
# (README, Quality, "Session 48"); without it the files are the shipped reader's.
# Every source is a hand-written file of partial-update families, one older note with several details and one newer
# note changing one of them, each with questions on the changed detail (answer "newer") and on unchanged ones
# ("older"), and, in train only, the precedence model's sibling families (SIBLING_KINDS). Split by a hash of the
# family id, a fifth of the families to val. No timeline set is read: the end-to-end timeline figures stay development
# figures, and the frozen test splits (tests/data/partial/, tests/data/partial_2/) are never read.

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
PRECEDENCE_DATA = REPO / "models" / "precedence" / "data"
VAL_SHARE = 0.2
# name -> (file, the category its partial families carry there). The precedence model's two sets keep its names, so
# that each family falls in the same split as there (the reader is fine-tuned from that model).
OWN_FAMILIES = {f"session43_{letter}": (HERE / f"families_{letter}.jsonl", "partial") for letter in "abcd"}
# Brief 2 (BRIEF_2.md, session 48): six questions a family, three each way, so that no shared word tells the answer.
# Only with --brief-2, after session 43's own families (the order session 48's candidates were built in).
BRIEF_2 = {f"session48_{letter}": (HERE / f"families_{letter}.jsonl", "partial") for letter in "efgh"}
PRECEDENCE_FAMILIES = {
    "handwritten": (PRECEDENCE_DATA / "pairs_handwritten.jsonl", "partial"),
    "siblings": (PRECEDENCE_DATA / "pairs_siblings.jsonl", "partial_update"),
}
SOURCES = OWN_FAMILIES | PRECEDENCE_FAMILIES


def split_of_family(family: str) -> str:
    digest = int(hashlib.sha256(family.encode("utf-8")).hexdigest()[:8], 16)
    return "val" if digest / 0xFFFFFFFF < VAL_SHARE else "train"


def pairs_of(name: str, path: Path, category: str) -> list[dict]:
    """The file's partial families as pairs, each (family, question) once."""
    rows, seen = [], set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        key = (row["family"], row["question"].strip().lower())
        if row["category"] != category or key in seen:
            continue
        seen.add(key)
        rows.append({"family": f"{name}/{row['family']}", "kind": "partial", "other": name,
                     "question": row["question"], "older": row["older"], "newer": row["newer"],
                     "label": "NEWER" if row["answer"] == "newer" else "OLDER"})
    return rows


# The precedence model's sibling families whose newer note changes another detail, activity or holder than the one
# a question asks about, beside questions it does answer: the same skill (does the newer note answer it), in train
# only; those of their families that hash to val are left out, so val stays partial updates alone.
SIBLINGS = {"siblings": PRECEDENCE_DATA / "pairs_siblings.jsonl", "siblings_2": PRECEDENCE_DATA / "pairs_siblings_2.jsonl"}
SIBLING_KINDS = ("sibling_activity", "sibling_service", "other_person", "same_words_other_thing", "separate_sibling",
                 "separate_sibling_changed", "same_holder_other_detail")


def sibling_pairs(name: str, path: Path) -> list[dict]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line) if line.strip() else None
        if row is None or row["category"] not in SIBLING_KINDS:
            continue
        family = f"{name}/{row['family']}"
        if split_of_family(family) == "train":
            rows.append({"family": family, "kind": row["category"], "other": name, "question": row["question"],
                         "older": row["older"], "newer": row["newer"],
                         "label": "NEWER" if row["answer"] == "newer" else "OLDER"})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--brief-2", action="store_true", help="add brief 2's families (session 48's candidates)")
    args = parser.parse_args(argv)
    splits: dict[str, list[dict]] = {"train": [], "val": []}
    sources = []
    for name, (path, category) in (OWN_FAMILIES | BRIEF_2 | PRECEDENCE_FAMILIES if args.brief_2 else SOURCES).items():
        rows = pairs_of(name, path, category)
        for row in rows:
            splits[split_of_family(row["family"])].append(row)
        sources.append({"set": name, "file": str(path.relative_to(REPO)), "category": category, "pairs": len(rows),
                        "families": len({r["family"] for r in rows}),
                        "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
    for name, path in SIBLINGS.items():
        rows = sibling_pairs(name, path)
        splits["train"] += rows
        sources.append({"set": name, "file": str(path.relative_to(REPO)), "category": ", ".join(SIBLING_KINDS),
                        "pairs": len(rows), "families": len({r["family"] for r in rows}),
                        "sha256": hashlib.sha256(path.read_bytes()).hexdigest()})
    for split, rows in splits.items():
        (HERE / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows),
                                             encoding="utf-8")
        labels = {label: sum(r["label"] == label for r in rows) for label in ("NEWER", "OLDER")}
        print(f"{split}: {len(rows)} pairs, {len({r['family'] for r in rows})} families {labels}")
    (HERE / "sources.json").write_text(json.dumps(sources, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
