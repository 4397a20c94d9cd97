"""Build the relevance dataset (train.jsonl, val.jsonl): (query, memory, RELEVANT or OFF_TOPIC) pairs, split by family."""

# Usage:  .venv/bin/python models/relevance/data/build.py
# Deterministic: the same SEED and inputs give byte-identical outputs.
#
# Sources (every one a development set, or written for training):
# - pairs_handwritten.jsonl: written for training by a helper who saw no code, data or model output, from a brief of
#   the kinds (a paraphrase or indirect answer with no word in common, an older value, what a task needs; against
#   the same person's other attribute, the same attribute of another subject, shared words with another meaning).
# - timelines: the team's (tests/data/retrieval/timelines.jsonl) and held-out v1-v6 (scored, development sets since).
#   A scenario's question against its current and superseded memories is RELEVANT (an older value still answers the
#   topic; supersession is decided elsewhere), against the scenario's other memories OFF_TOPIC, and against two
#   memories of other scenarios OFF_TOPIC. v7 and v8 stay out: compile_context is measured on them while developing.
#   v10 is the frozen test of the timelines, never read here.
# - questions: the team's conversation questions (tests/data/retrieval/questions.jsonl) against their evidence turns
#   (RELEVANT) and four other turns of the same conversation (OFF_TOPIC).
# Val: one family in seven, hashed by family id, from every source.

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO))

from preprocessing.relevance_model import LABELS  # noqa: E402

SEED = 20261202
VAL_SHARE = 7  # one family in VAL_SHARE goes to val
HANDWRITTEN = HERE / "pairs_handwritten.jsonl"
DATA = REPO / "tests" / "data"
TIMELINES = (DATA / "retrieval" / "timelines.jsonl", DATA / "heldout" / "timelines_test.jsonl",
             *(DATA / f"heldout_{n}" / f"timelines_test_{n}.jsonl" for n in range(2, 7)))
QUESTIONS = DATA / "retrieval" / "questions.jsonl"
CONVERSATIONS = DATA / "retrieval" / "conversations.jsonl"
RELEVANT, OFF_TOPIC = "RELEVANT", "OFF_TOPIC"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def pair(query: str, memory: str, relevant: bool, kind: str, family: str, source: str) -> dict:
    return {"query": query, "memory": memory, "label": RELEVANT if relevant else OFF_TOPIC, "kind": kind,
            "family": family, "source": source}


def handwritten() -> list[dict]:
    return [pair(r["query"], r["memory"], r["label"] == 1, r["kind"], f"hw-{r['family']}", "handwritten")
            for r in read_jsonl(HANDWRITTEN)]


def timelines(rng: random.Random) -> list[dict]:
    scenarios = [t for path in TIMELINES for t in read_jsonl(path)]
    every = [(t["id"], m["text"]) for t in scenarios for m in t["memories"]]
    rows = []
    for t in scenarios:
        answers = {t["current"], *t.get("stale", [])}
        for m in t["memories"]:
            on = m["id"] in answers
            rows.append(pair(t["question"], m["text"], on, "timeline_answer" if on else "timeline_neighbour",
                             f"tl-{t['id']}", "timelines"))
        foreign = [text for owner, text in every if owner != t["id"]]
        for text in rng.sample(foreign, 2):
            rows.append(pair(t["question"], text, False, "unrelated", f"tl-{t['id']}", "timelines"))
    return rows


def questions(rng: random.Random) -> list[dict]:
    turns: dict[str, list[dict]] = {}
    for turn in read_jsonl(CONVERSATIONS):
        turns.setdefault(turn["namespace"], []).append(turn)
    text_of = {turn["id"]: turn["text"] for those in turns.values() for turn in those}
    rows = []
    for q in read_jsonl(QUESTIONS):
        evidence = [e for e in q.get("evidence", []) if e in text_of]
        for e in evidence:
            rows.append(pair(q["question"], text_of[e], True, "evidence", f"q-{q['namespace']}", "questions"))
        others = [t["text"] for t in turns[q["namespace"]] if t["id"] not in evidence]
        for text in rng.sample(others, min(4, len(others))):
            rows.append(pair(q["question"], text, False, "same_conversation", f"q-{q['namespace']}", "questions"))
    return rows


def in_val(family: str) -> bool:
    return int(hashlib.sha256(family.encode()).hexdigest(), 16) % VAL_SHARE == 0


def main() -> int:
    rng = random.Random(SEED)
    rows = handwritten() + timelines(rng) + questions(rng)
    assert {r["label"] for r in rows} <= set(LABELS)
    seen, unique = set(), []
    for r in rows:
        key = (r["query"].strip().lower(), r["memory"].strip().lower())
        if key not in seen:
            seen.add(key)
            unique.append(r)
    splits = {"train": [r for r in unique if not in_val(r["family"])], "val": [r for r in unique if in_val(r["family"])]}
    random.Random(SEED).shuffle(splits["train"])
    for name, split in splits.items():
        with open(HERE / f"{name}.jsonl", "w", encoding="utf-8") as out:
            for r in split:
                out.write(json.dumps(r, ensure_ascii=False) + "\n")
        counts = Counter((r["source"], r["label"]) for r in split)
        print(f"{name}: {len(split)} pairs, {len({r['family'] for r in split})} families, {dict(sorted(counts.items()))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
