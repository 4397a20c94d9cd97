"""Reads LoCoMo (locomo10.json, or a directory of per-conversation files) into turns and evidence-labelled questions."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ADVERSARIAL = 5
SCORED_CATEGORIES = {number: name for number, name in CATEGORIES.items() if number != ADVERSARIAL}
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_SESSION = re.compile(r"session_(\d+)")
_SESSION_TIME = re.compile(
    r"(?:(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<half>[ap])\.?m\.?\s+on\s+)?"
    r"(?P<day>\d{1,2})\s+(?P<month>[A-Za-z]+)\.?,?\s+(?P<year>\d{4})", re.IGNORECASE)
_DIALOGUE_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.IGNORECASE)
_ID_SEPARATORS = re.compile(r"[;,]|\s+(?=D)")
_NAMESPACE_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Turn:
    dia_id: str
    session: str
    text: str
    timestamp: str
    speaker: str = ""


@dataclass(frozen=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class Conversation:
    name: str
    turns: list[Turn]
    questions: list[Question]

    @property
    def namespace(self) -> str:
        return ("locomo-" + _NAMESPACE_UNSAFE.sub("-", self.name))[:64]


@dataclass
class LabelReport:
    """What reading the labels left out: questions skipped by reason, evidence ids repaired or dropped (examples kept)."""

    skipped: Counter = field(default_factory=Counter)
    repaired: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"skipped": dict(self.skipped), "repaired_ids": self.repaired, "dropped_ids": self.dropped}


def _month_number(name: str) -> int | None:
    """1-12 for a month's name or its abbreviation of three or more letters ("Sep", "Sept", "September")."""
    name = name.lower()
    return next((n for n, month in enumerate(MONTHS, 1) if len(name) >= 3 and month.startswith(name)), None)


def parse_session_time(text: str) -> str:
    """"1:56 pm on 8 May, 2023" -> "2023-05-08T13:56:00Z" (LoCoMo gives no zone; read as UTC; no time: midnight)."""
    match = _SESSION_TIME.search(text.strip())
    month = _month_number(match["month"]) if match else None
    if month is None:
        raise ValueError(f"not a LoCoMo session time: {text!r}")
    hour, minute = int(match["hour"] or 0), int(match["minute"] or 0)
    if match["half"]:
        if not 1 <= hour <= 12:
            raise ValueError(f"not a 12-hour time: {text!r}")
        hour = hour % 12 + (12 if match["half"].lower() == "p" else 0)
    moment = datetime(int(match["year"]), month, int(match["day"]), hour, minute, tzinfo=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def split_evidence_ids(raw: str) -> list[str]:
    """One evidence entry as the canonical ids it holds: "D8:6; D9:17" -> [D8:6, D9:17], "D:11:26" -> [D11:26]."""
    found = []
    for part in _ID_SEPARATORS.split(str(raw)):
        match = _DIALOGUE_ID.fullmatch(part.strip())
        if match:
            found.append(f"D{int(match[1])}:{int(match[2])}")
    return found


def normalise_evidence(raw_ids: list, known: set[str], report: LabelReport, where: str) -> tuple[str, ...]:
    """The known turn ids a question's evidence names, in order, once each; unknown ones go to the report."""
    evidence: list[str] = []
    for raw in raw_ids:
        ids = split_evidence_ids(raw)
        if ids != [raw]:
            (report.repaired if ids else report.dropped).append(f"{where} {raw!r}" + (f" -> {', '.join(ids)}" if ids else ""))
        for dia_id in ids:
            if dia_id not in known:
                report.dropped.append(f"{where} {dia_id} (no such turn)")
            elif dia_id not in evidence:
                evidence.append(dia_id)
    return tuple(evidence)


def turn_text(turn: dict) -> str:
    """What one turn is stored as: "Speaker: text", plus " [image: caption]" when the turn shared a picture."""
    text = f"{turn['speaker']}: {turn.get('text', '').strip()}"
    caption = str(turn.get("blip_caption") or "").strip()
    return f"{text} [image: {caption}]" if caption else text


def read_turns(conversation: dict) -> list[Turn]:
    sessions = sorted((int(m[1]), key) for key in conversation if (m := _SESSION.fullmatch(key)))
    turns = []
    for _, key in sessions:
        timestamp = parse_session_time(conversation[f"{key}_date_time"])
        turns += [Turn(t["dia_id"], key, turn_text(t), timestamp, str(t.get("speaker", ""))) for t in conversation[key]]
    return turns


def read_questions(qa: list[dict], known: set[str], report: LabelReport, where: str) -> list[Question]:
    questions = []
    for number, item in enumerate(qa, 1):
        category = int(item["category"])
        if category not in CATEGORIES:
            report.skipped[f"unknown category {category}"] += 1
            continue
        if category == ADVERSARIAL:
            report.skipped["adversarial (category 5, no answer in the conversation)"] += 1
            continue
        evidence = normalise_evidence(item.get("evidence") or [], known, report, f"{where} q{number}")
        if not evidence:
            reason = "evidence left empty in the data" if not item.get("evidence") else "no evidence id names a turn"
            report.skipped[reason] += 1
            continue
        questions.append(Question(item["question"], category, evidence))
    return questions


def _natural_order(path: Path) -> tuple:
    return (0, int(path.stem), "") if path.stem.isdigit() else (1, 0, path.name)


def raw_conversations(path: Path) -> list[tuple[str, dict, list[dict]]]:
    """(name, conversation, qa) in position order: the list in locomo10.json, or the directory's files sorted by name."""
    if path.is_dir():
        found = []
        for file in sorted(path.glob("*.json"), key=_natural_order):
            sample = json.loads(file.read_text(encoding="utf-8"))
            found.append((file.stem, sample, sample.get("qa", [])))
        return found
    samples = json.loads(path.read_text(encoding="utf-8"))
    return [(str(s.get("sample_id") or i), s["conversation"], s.get("qa", [])) for i, s in enumerate(samples, 1)]


def load_conversations(path: Path, positions: list[int] | None = None) -> tuple[list[Conversation], LabelReport]:
    """The conversations at these 1-based positions (default all), and what reading their labels left out."""
    raw = raw_conversations(Path(path))
    if not raw:
        raise ValueError(f"no LoCoMo conversations in {path}")
    chosen = positions or list(range(1, len(raw) + 1))
    if max(chosen) > len(raw):
        raise ValueError(f"{path} holds {len(raw)} conversations; asked for position {max(chosen)}")
    report = LabelReport()
    conversations = []
    for position in chosen:
        name, conversation, qa = raw[position - 1]
        turns = read_turns(conversation)
        questions = read_questions(qa, {t.dia_id for t in turns}, report, name)
        conversations.append(Conversation(name, turns, questions))
    return conversations, report


def parse_positions(spec: str) -> list[int]:
    """"1-7" or "1,3,5-6" -> sorted 1-based positions."""
    positions: set[int] = set()
    for part in spec.split(","):
        first, _, last = part.strip().partition("-")
        start, end = int(first), int(last or first)
        if start < 1 or end < start:
            raise ValueError(f"bad conversation range {part!r}")
        positions.update(range(start, end + 1))
    return sorted(positions)
