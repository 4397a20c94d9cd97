"""models/partial/timeline_pairs.py: the pairs import links as a partial update in a timeline set, each labelled by
which memory answers its scenario's question, imported into a real daemon as `cortexd eval timelines` imports them."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Written for this test (tests/test_partial_reader_e2e.py's pair, which a save links as a partial update).
OLDER = "Quarterly planning day is on 14 March at the Lindqvist Hotel, catering by Maple & Rye, agenda from Sunniva."
NEWER = "Planning day catering got switched to Bramble Kitchen."


def _tool():
    spec = importlib.util.spec_from_file_location("timeline_pairs", REPO / "models" / "partial" / "timeline_pairs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _scenario(name: str, kind: str, question: str, answer: str) -> dict:
    memories = [{"id": f"{name}-old", "text": OLDER, "timestamp": "2026-03-01T09:00:00Z"},
                {"id": f"{name}-new", "text": NEWER, "timestamp": "2026-03-08T09:00:00Z"}]
    current = f"{name}-{answer}"
    return {"id": name, "namespace": f"pairs-{name}", "kind": kind, "memories": memories, "question": question,
            "current": current, "stale": [f"{name}-old"] if answer == "new" else []}


def test_set_numbers_reads_ranges_and_lists():
    assert _tool().parse_positions("11-13,20") == [11, 12, 13, 20]


def test_each_linked_pair_is_labelled_by_the_memory_that_answers(tmp_path):
    tool = _tool()
    path = tmp_path / "timelines.jsonl"
    scenarios = [_scenario("food", "partial", "Who is doing the food for the planning day?", "new"),
                 _scenario("place", "partial", "Where is the quarterly planning day being held?", "old"),
                 _scenario("other", "control", "Where is the quarterly planning day being held?", "old")]
    path.write_text("".join(json.dumps(s) + "\n" for s in scenarios))
    pairs = tool.pairs_of_set(path, "fixture", {"partial"})
    assert [(p["family"], p["label"], p["older"], p["newer"]) for p in pairs] == [
        ("food", "NEWER", OLDER, NEWER), ("place", "OLDER", OLDER, NEWER)], pairs
    assert {p["other"] for p in pairs} == {"fixture"} and {p["kind"] for p in pairs} == {"partial"}
