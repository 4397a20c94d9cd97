"""Build the precedence model's pairs from timeline files: (question, older memory, newer memory) -> which answers now."""

# Usage (runtime venv): .venv/bin/python models/precedence/data/build.py
# Every timeline scenario gives, for its current memory and each other memory of it, one pair in time order, labelled
# NEWER when the current memory is the newer of the two and OLDER when it is the older. Files are split by set, never
# by scenario: VAL_SETS are the validation split; EXCLUDED are never read (the held-out split nobody has scored, and
# one whose text was shown once but which was never scored).

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
DATA = REPO / "tests" / "data"
VAL_SETS = ("heldout_24", "heldout_25")
EXCLUDED = ("heldout_17", "heldout_26", "heldout_27")


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


def main() -> int:
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
    for split, rows in splits.items():
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        (HERE / f"{split}.jsonl").write_text(text, encoding="utf-8")
        labels = {label: sum(r["label"] == label for r in rows) for label in ("NEWER", "OLDER")}
        print(f"{split}: {len(rows)} pairs {labels}")
    (HERE / "sources.json").write_text(json.dumps(sources, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
