"""Conversation-turn pairs for the relation model: turns of one conversation on one topic, which update nothing."""

# Usage:  .venv/bin/python models/relation/data/conversational.py   (writes pairs_conversational.jsonl)
#
# The hand-written and generated pairs are all statements of memory. A conversation is mostly something else:
# greetings, questions, acknowledgements, and several turns on one topic that are all true at once. Without such
# pairs the model read two turns of a chat as an update (on a conversation we use only as a diagnostic, 187 of 419
# turns were read as a confident update of an earlier one). Labels come from two facts about conversations, not from
# reading each pair:
# - a question, a greeting or an acknowledgement never updates or repeats a memory: COMPATIBLE when the two turns
#   are close (cosine >= TOPIC_COSINE), else UNRELATED;
# - two statements of one conversation that are close and of which the later announces no change (no "now",
#   "moved to", "actually", "no longer"…, preprocessing.dedup.announces_change) are both true: COMPATIBLE.
# Sources: the team's retrieval conversations (tests/data/retrieval/conversations.jsonl; its questions and timelines
# are not used) and the QUESTION / RECALL_INFO messages of the intent data's hand-written file. Deterministic.

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO))

from preprocessing.dedup import announces_change  # noqa: E402
from preprocessing.encoder import SentenceEncoder  # noqa: E402

CONVERSATIONS = REPO / "tests" / "data" / "retrieval" / "conversations.jsonl"
INTENT_MESSAGES = REPO / "models" / "intent" / "data" / "handwritten.jsonl"
OUT = HERE / "pairs_conversational.jsonl"
SEED = 20261201
TOPIC_COSINE = 0.45
PAIRS_PER_TURN = 2
QUESTION_PAIRS = 500
_NOT_A_STATEMENT = re.compile(r"\?\s*$|^(?:hi|hey|hello|morning|thanks|thank you|ok|okay|got it|noted|sure|great|"
                              r"cool|nice|wow|right|yes|yep|no|nope|sounds good)\b", re.I)


def not_a_statement(text: str) -> bool:
    """A question, a greeting or an acknowledgement: it states nothing that could replace a memory."""
    return bool(_NOT_A_STATEMENT.search(text.strip()))


def pair(existing: str, new: str, label: str, category: str, family: str) -> dict:
    return {"existing": existing, "new": new, "label": label, "category": category, "family": family}


def conversation_pairs(encoder, chooser: random.Random) -> list[dict]:
    turns = [json.loads(line) for line in CONVERSATIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    by_conversation: dict[str, list[dict]] = {}
    for turn in turns:
        by_conversation.setdefault(turn["namespace"], []).append(turn)
    rows = []
    for namespace, chat in sorted(by_conversation.items()):
        chat.sort(key=lambda t: t["timestamp"])
        vectors = encoder.encode([t["text"] for t in chat])
        for index in range(1, len(chat)):
            new = chat[index]["text"]
            similar = vectors[:index] @ vectors[index]
            closest = sorted(range(index), key=lambda j: -similar[j])[:PAIRS_PER_TURN]
            for j in closest:
                existing = chat[j]["text"]
                question = not_a_statement(new) or not_a_statement(existing)
                if question:
                    label = "COMPATIBLE" if similar[j] >= TOPIC_COSINE else "UNRELATED"
                    rows.append(pair(existing, new, label, "conversation_question", f"conv-{namespace}"))
                elif similar[j] >= TOPIC_COSINE and not announces_change(new):
                    rows.append(pair(existing, new, "COMPATIBLE", "conversation_same_topic", f"conv-{namespace}"))
    return rows


def question_pairs(encoder, chooser: random.Random) -> list[dict]:
    """A question beside the closest other message of the intent data: it asks, so it neither repeats nor updates."""
    messages = [json.loads(line) for line in INTENT_MESSAGES.read_text(encoding="utf-8").splitlines() if line.strip()]
    questions = [m for m in messages if m["label"] in ("QUESTION", "RECALL_INFO")]
    chooser.shuffle(questions)
    questions = questions[:QUESTION_PAIRS]
    texts = [m["text"] for m in messages]
    vectors = encoder.encode(texts)
    position = {text: i for i, text in enumerate(texts)}
    rows = []
    for question in questions:
        similar = vectors @ vectors[position[question["text"]]]
        similar[position[question["text"]]] = -1.0
        j = int(similar.argmax())
        label = "COMPATIBLE" if similar[j] >= TOPIC_COSINE else "UNRELATED"
        existing, new = (texts[j], question["text"]) if chooser.random() < 0.5 else (question["text"], texts[j])
        rows.append(pair(existing, new, label, "question", f"q-{question.get('group', question['label'].lower())}"))
    return rows


def main() -> None:
    chooser = random.Random(SEED)
    encoder = SentenceEncoder.from_registry()
    rows = conversation_pairs(encoder, chooser) + question_pairs(encoder, chooser)
    seen, unique = set(), []
    for row in rows:
        key = (row["existing"], row["new"])
        if key not in seen:
            seen.add(key)
            unique.append(row)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in unique), encoding="utf-8")
    counts: dict[str, int] = {}
    for row in unique:
        counts[f"{row['label']}/{row['category']}"] = counts.get(f"{row['label']}/{row['category']}", 0) + 1
    print(f"wrote {len(unique)} pairs to {OUT.relative_to(REPO)}: {counts}")


if __name__ == "__main__":
    main()
