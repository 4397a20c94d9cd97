"""The LoCoMo evaluation: session times, evidence repair, both file layouts, the baselines, and one run on a real daemon."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

from conftest import CORTEXD
from memory_daemon.evals.baseline_retrievers import BM25, reciprocal_rank_fusion, words
from memory_daemon.evals.locomo import question_scores
from memory_daemon.evals.locomo_data import (
    LabelReport,
    load_conversations,
    normalise_evidence,
    parse_positions,
    parse_session_time,
    split_evidence_ids,
    turn_text,
)

FIXTURE = Path(__file__).parent / "data" / "locomo" / "fixture.json"


# --- reading the data ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("1:56 pm on 8 May, 2023", "2023-05-08T13:56:00Z"),
    ("12:48 am on 1 February, 2023", "2023-02-01T00:48:00Z"),
    ("12:05 pm on 3 Jan, 2024", "2024-01-03T12:05:00Z"),
    ("11:01 AM on 17 December, 2022", "2022-12-17T11:01:00Z"),
    ("8 May 2023", "2023-05-08T00:00:00Z"),
])
def test_session_times_become_iso_utc(text, expected):
    assert parse_session_time(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "13:00 pm on 1 May, 2023", "1:00 pm on 1 Maybe, 2023", "1:00 pm on 31 June, 2023"])
def test_unreadable_session_times_are_refused(text):
    with pytest.raises(ValueError):
        parse_session_time(text)


@pytest.mark.parametrize("raw, expected", [
    ("D8:6", ["D8:6"]),
    ("D8:6; D9:17", ["D8:6", "D9:17"]),
    ("D1:2,D1:3", ["D1:2", "D1:3"]),
    ("D1:2 D1:3", ["D1:2", "D1:3"]),
    ("D:11:26", ["D11:26"]),
    ("d03:04 ", ["D3:4"]),
    ("D", []),
    ("", []),
])
def test_evidence_entries_split_into_canonical_ids(raw, expected):
    assert split_evidence_ids(raw) == expected


def test_evidence_keeps_known_turns_once_and_reports_the_rest():
    report = LabelReport()
    known = {"D1:1", "D1:2", "D2:5"}
    evidence = normalise_evidence(["D1:2; D2:5", "D1:2", "D", "D7:1", "D:1:1"], known, report, "c q1")
    assert evidence == ("D1:2", "D2:5", "D1:1")
    assert report.repaired == ["c q1 'D1:2; D2:5' -> D1:2, D2:5", "c q1 'D:1:1' -> D1:1"]
    assert report.dropped == ["c q1 'D'", "c q1 D7:1 (no such turn)"]


def test_a_turn_is_speaker_text_and_its_image_caption():
    assert turn_text({"speaker": "Ana", "text": "Look!", "blip_caption": "a red kite"}) == "Ana: Look! [image: a red kite]"
    assert turn_text({"speaker": "Ana", "text": " Hi "}) == "Ana: Hi"


def test_the_fixture_loads_with_its_skips_and_repairs():
    conversations, report = load_conversations(FIXTURE)
    assert [c.name for c in conversations] == ["fixture-a", "fixture-b"]
    assert [c.namespace for c in conversations] == ["locomo-fixture-a", "locomo-fixture-b"]
    first = conversations[0]
    assert len(first.turns) == 12 and first.turns[0].timestamp == "2024-03-03T09:15:00Z"
    assert first.turns[-1].session == "session_2" and first.turns[-1].timestamp == "2024-04-21T18:40:00Z"
    assert [len(c.questions) for c in conversations] == [4, 3]
    assert first.questions[1].evidence == ("D1:3", "D2:4")
    assert conversations[1].questions[2].evidence == ("D2:3",)
    assert dict(report.skipped) == {"adversarial (category 5, no answer in the conversation)": 1,
                                    "no evidence id names a turn": 1}
    assert len(report.repaired) == 1 and len(report.dropped) == 2


def test_a_directory_of_conversation_files_reads_like_the_list(tmp_path):
    samples = json.loads(FIXTURE.read_text())
    for name, sample in (("10", samples[1]), ("9", samples[0])):  # natural order: 9 before 10
        (tmp_path / f"{name}.json").write_text(json.dumps({**sample["conversation"], "qa": sample["qa"]}))
    from_list, _ = load_conversations(FIXTURE)
    from_files, _ = load_conversations(tmp_path)
    assert [c.name for c in from_files] == ["9", "10"]
    assert [(c.turns, c.questions) for c in from_files] == [(c.turns, c.questions) for c in from_list]
    second_only, _ = load_conversations(tmp_path, [2])
    assert [c.name for c in second_only] == ["10"]
    with pytest.raises(ValueError):
        load_conversations(tmp_path, [3])


def test_conversation_ranges():
    assert parse_positions("1-7") == [1, 2, 3, 4, 5, 6, 7]
    assert parse_positions("3,1,5-6") == [1, 3, 5, 6]
    with pytest.raises(ValueError):
        parse_positions("0-2")


# --- retrievers and scores ----------------------------------------------------------------------------------------

def test_bm25_follows_the_textbook_formula():
    documents = ["the cat sat", "the dog sat on the mat", "a bird"]
    scores = BM25(documents).scores("cat mat")
    mean_length = 11 / 3
    idf = math.log((3 - 1 + 0.5) / (1 + 0.5) + 1)
    cat = idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 3 / mean_length))
    mat = idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 6 / mean_length))
    assert scores == pytest.approx([cat, mat, 0.0])
    assert BM25(documents).rank("cat mat") == [0, 1]  # a document sharing no word is not retrieved
    assert words("Caroline's LGBTQ-group, 2023!") == ["caroline", "s", "lgbtq", "group", "2023"]


def test_reciprocal_rank_fusion_rewards_agreement():
    assert reciprocal_rank_fusion([[1, 2, 3], [2, 3, 4]]) == [2, 3, 1, 4]


def test_question_scores():
    ranked = [f"D1:{i}" for i in range(1, 11)]
    assert question_scores(ranked, ["D1:2", "D1:8"]) == {"R@5": 0.5, "R@10": 1.0, "hit@10": 1.0}
    assert question_scores(ranked, ["D2:1"]) == {"R@5": 0.0, "R@10": 0.0, "hit@10": 0.0}


# --- the command, end to end --------------------------------------------------------------------------------------

def test_eval_locomo_runs_cortexd_and_the_baselines_on_the_fixture():
    result = subprocess.run(CORTEXD + ["eval", "locomo", str(FIXTURE), "--json"], capture_output=True, text=True,
                            timeout=240)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["questions"] == {"total": 7, "by_category": {"multi-hop": 1, "temporal": 2, "open-domain": 1,
                                                               "single-hop": 3}}
    assert list(report["retrievers"]) == ["cortexd", "BM25", "dense (MiniLM)", "BM25+dense RRF"]
    for row in report["retrievers"].values():
        assert row["overall"]["n"] == 7 and row["search_ms_p50"] >= 0
        assert all(0.0 <= row["overall"][m] <= 1.0 for m in ("R@5", "R@10", "hit@10"))
        assert row["by_category"]["single-hop"]["n"] == 3
    bm25 = report["retrievers"]["BM25"]
    assert bm25["by_category"]["single-hop"]["R@5"] == 1.0  # each names a distinctive word of its evidence turn
    assert bm25["overall"]["hit@10"] == 1.0
    assert [(i["conversation"], i["turns"], i["stored"]) for i in report["imports"]] == [("fixture-a", 12, 12),
                                                                                         ("fixture-b", 12, 12)]
    assert all(0 <= i["superseded"] <= 12 and not i["errors"] for i in report["imports"])
    assert len(report["labels"]["repaired_ids"]) == 1 and len(report["labels"]["dropped_ids"]) == 2


def test_eval_locomo_needs_a_path():
    result = subprocess.run(CORTEXD + ["eval", "locomo"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "locomo10.json" in result.stderr
