"""Split the helpers' statement families into train.jsonl and val.jsonl: whole families, every fifth one to val."""

# Usage: .venv/bin/python models/holder/data/build.py
# Reads families_A.jsonl to families_H.jsonl beside it (DATASET.md says who wrote them and how).
# A family is one scenario's statements; its number decides its split, so no scenario's names or wording reach both.

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCES = tuple(f"families_{round_}.jsonl" for round_ in "ABCDEFGH")  # A-C: round 1; D-F: round 2; G-H: round 3
VAL_EVERY = 5  # families whose number is a multiple of this go to val


def split_of(family: str) -> str:
    return "val" if int(family.rsplit("-", 1)[1]) % VAL_EVERY == 0 else "train"


def main() -> int:
    rows: dict[str, list[dict]] = {"train": [], "val": []}
    for name in SOURCES:
        for number, line in enumerate((HERE / name).read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                row = json.loads(line)
                if row.get("label") not in ("USER", "OTHER") or not str(row.get("text", "")).strip():
                    raise SystemExit(f"{name}:{number}: needs a text and a label USER or OTHER")
                rows[split_of(row["family"])].append(
                    {k: row[k] for k in ("text", "label", "kind", "family")})
    for split, items in rows.items():
        (HERE / f"{split}.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items),
                                             encoding="utf-8")
        print(split, len(items), dict(Counter(r["label"] for r in items)),
              "families", len({r["family"] for r in items}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
