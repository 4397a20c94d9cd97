"""Write the partial-update pairs import links in timeline sets, as pairs for `cortexd eval partial --data`."""

# Usage (runtime venv): .venv/bin/python models/partial/timeline_pairs.py --sets 11-29 [--kinds partial] \
#     --out /tmp/timeline_pairs.jsonl
# then: .venv/bin/cortexd eval partial --data /tmp/timeline_pairs.jsonl
# Each set is imported into a temporary daemon as `cortexd eval timelines` imports it. Wherever import linked a newer
# memory to the one it revises in part (meta "partially_updates") and a question's answer is one of the two, the pair
# is written with that question, labelled NEWER when the answer is the newer memory and OLDER when it is the older.
# The pairs are what this checkout's import links, and the sets are development sets (README, Quality): figures on
# these pairs are development figures.

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))

from memory_daemon.evals.locomo_data import parse_positions  # noqa: E402  ("11-29" or "11,14,20" -> the numbers)
from memory_daemon.evals.retrieval import exported_memories, read_jsonl  # noqa: E402
from memory_daemon.evals.timelines import imported_scenarios  # noqa: E402
from memory_daemon.store.memories import PARTIAL_UPDATE_KEY  # noqa: E402


def linked_pairs(client, timeline: dict, label: str) -> list[dict]:
    """The pairs of the timeline's namespace that import linked as a partial update, for its question."""
    memories = list(exported_memories(client))
    external = {m.id: m.external_id or m.id for m in memories}
    text = {external[m.id]: m.content for m in memories}
    current = timeline["current"]
    pairs = []
    for memory in memories:
        revised = external.get(dict(memory.meta).get(PARTIAL_UPDATE_KEY, ""), "")
        newer = external[memory.id]
        if revised and current in (revised, newer):
            pairs.append({"question": timeline["question"], "older": text[revised], "newer": text[newer],
                          "label": "NEWER" if current == newer else "OLDER", "kind": timeline["kind"],
                          "other": label, "family": timeline["id"]})
    return pairs


def pairs_of_set(path: Path, label: str, kinds: set[str] | None = None) -> list[dict]:
    """The linked pairs of every scenario of the set (of those `kinds`, when given)."""
    timelines = [t for t in read_jsonl(path) if kinds is None or t["kind"] in kinds]
    return [pair for timeline, client in imported_scenarios(timelines) for pair in linked_pairs(client, timeline, label)]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--sets", required=True, help="timeline sets under tests/data/heldout_N/, e.g. 11-29")
    p.add_argument("--kinds", help="only scenarios of these kinds, comma-separated (e.g. partial)")
    p.add_argument("--out", required=True, help="the JSONL file to write")
    args = p.parse_args(argv)
    try:
        numbers = parse_positions(args.sets)
    except ValueError:
        p.error(f"--sets {args.sets!r}: give set numbers like 11-29 or 11,14,20")
    paths = {n: REPO / "tests" / "data" / f"heldout_{n}" / f"timelines_test_{n}.jsonl" for n in numbers}
    missing = [str(path) for path in paths.values() if not path.is_file()]
    if missing:
        p.error(f"no such timeline set: {', '.join(missing)}")
    pairs: list[dict] = []
    for number, path in paths.items():
        pairs += pairs_of_set(path, f"v{number}", set(args.kinds.split(",")) if args.kinds else None)
    Path(args.out).write_text("".join(json.dumps(pair) + "\n" for pair in pairs), encoding="utf-8")
    labels = {label: sum(p["label"] == label for p in pairs) for label in ("NEWER", "OLDER")}
    print(f"{len(pairs)} pairs {labels} -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
