"""The retrieval evaluation: metric functions on known inputs, integrity of the labelled set, and one run on a real daemon."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest

from memory_daemon.evals.retrieval import (
    DEFAULT_DATA,
    HISTORY_ROWS,
    QUESTION_TYPES,
    SIGNAL_SETS,
    TIMELINE_KINDS,
    TIMELINE_SIGNAL_SETS,
    Dataset,
    check_dataset,
    current_at_1,
    evaluate_retrieval,
    fused_gain,
    load_dataset,
    question_scores,
    recall_at_k,
    reciprocal_rank,
    render_markdown,
    stale_above_current,
    summarize,
    timeline_records,
)


# --- metrics ------------------------------------------------------------------------------------------------------

def test_recall_at_k_is_the_share_of_evidence_in_the_top_k():
    ranked = ["a", "b", "c", "d", "e", "f"]
    assert recall_at_k(ranked, ["b"], 5) == 1.0
    assert recall_at_k(ranked, ["b", "x"], 5) == 0.5
    assert recall_at_k(ranked, ["b", "f"], 5) == 0.5
    assert recall_at_k(ranked, ["b", "f"], 10) == 1.0
    assert recall_at_k(ranked, ["a"], 0) == 0.0
    assert recall_at_k([], ["a"], 10) == 0.0
    assert recall_at_k(ranked, ["b", "b"], 5) == 1.0  # a repeated label counts once
    with pytest.raises(ValueError):
        recall_at_k(ranked, [], 5)


def test_reciprocal_rank_uses_the_first_evidence_hit():
    assert reciprocal_rank(["a", "b", "c"], ["a"]) == 1.0
    assert reciprocal_rank(["a", "b", "c"], ["c", "b"]) == 0.5
    assert reciprocal_rank(["a", "b", "c", "d"], ["d"]) == 0.25
    assert reciprocal_rank(["a", "b"], ["z"]) == 0.0
    assert reciprocal_rank([], ["z"]) == 0.0


def test_question_scores_has_recall_at_5_and_10_and_mrr():
    ranked = [f"t{i}" for i in range(10)]
    scores = question_scores(ranked, ["t1", "t7"])
    assert scores == {"recall@5": 0.5, "recall@10": 1.0, "mrr": 0.5}


def test_current_at_1():
    assert current_at_1(["new", "old"], "new") == 1.0
    assert current_at_1(["old", "new"], "new") == 0.0
    assert current_at_1([], "new") == 0.0


@pytest.mark.parametrize("ranked, expected", [
    (["new", "old1", "old2"], 0.0),      # current first
    (["other", "new", "old1"], 0.0),     # a distractor above current is not staleness
    (["old2", "new"], 1.0),              # a stale one above current
    (["other", "old1"], 1.0),            # current missing, a stale one retrieved
    (["other"], 0.0),                    # neither retrieved
    ([], 0.0),
])
def test_stale_above_current(ranked, expected):
    assert stale_above_current(ranked, "new", ["old1", "old2"]) == expected


def test_summarize_means_overall_and_per_group():
    scored = [("single", {"recall@10": 1.0, "mrr": 1.0}),
              ("single", {"recall@10": 0.0, "mrr": 0.0}),
              ("temporal", {"recall@10": 0.5, "mrr": 0.25})]
    summary = summarize(scored, ("single", "temporal", "multi_hop"))
    assert summary["overall"] == {"recall@10": pytest.approx(0.5), "mrr": pytest.approx(1.25 / 3), "n": 3}
    assert summary["by_group"]["single"] == {"recall@10": 0.5, "mrr": 0.5, "n": 2}
    assert summary["by_group"]["temporal"] == {"recall@10": 0.5, "mrr": 0.25, "n": 1}
    assert summary["by_group"]["multi_hop"] == {"n": 0}


def test_fused_gain_compares_with_the_best_single_signal_only():
    def row(value):
        return {"overall": {"recall@10": value}}
    rows = {"lexical": row(0.6), "dense": row(0.7), "graph": row(0.2), "lexical+dense": row(0.9), "fused": row(0.78)}
    best, gain = fused_gain(rows)
    assert best == "dense" and gain == pytest.approx(0.08)
    assert fused_gain({**rows, "dense": {"error": "UNIMPLEMENTED"}}) == ("lexical", pytest.approx(0.18))
    assert fused_gain({"lexical": row(0.5), "fused": {"error": "x"}}) is None


def test_timeline_records_arrive_shuffled_with_day_sessions():
    timelines = [{
        "id": "tl-x", "namespace": "tl-x-ns", "kind": "implicit_subject", "question": "q", "current": "m2", "stale": ["m1"],
        "memories": [
            {"id": "m1", "text": "Deploys are on Tuesdays.", "timestamp": "2024-10-15T11:00:00Z"},
            {"id": "m2", "text": "Moved it to Thursdays.", "timestamp": "2024-10-15T11:04:00Z"},
            {"id": "m3", "text": "Standup is at 9:45.", "timestamp": "2024-10-20T09:00:00Z"},
        ],
    }]
    records = timeline_records(timelines, seed=1)
    assert records == timeline_records(timelines, seed=1)
    assert [r["timestamp"] for r in records] != sorted(r["timestamp"] for r in records)
    session = {r["id"]: r["session"] for r in records}
    assert session["m1"] == session["m2"] != session["m3"]
    assert {r["namespace"] for r in records} == {"tl-x-ns"}


# --- the labelled set ---------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return load_dataset(DEFAULT_DATA)


def test_dataset_is_consistent(dataset):
    assert check_dataset(dataset) == []


def test_dataset_size_and_coverage(dataset):
    conversations = {t["namespace"] for t in dataset.turns}
    sessions = Counter(t["namespace"] for t in {(t["namespace"], t["session"]): t for t in dataset.turns}.values())
    assert 20 <= len(conversations) <= 25
    assert all(3 <= n <= 5 for n in sessions.values()), sessions
    assert 800 <= len(dataset.turns) <= 1200
    assert 150 <= len(dataset.questions) <= 250
    assert set(Counter(q["type"] for q in dataset.questions)) == set(QUESTION_TYPES)
    assert all(len(q["evidence"]) >= 2 for q in dataset.questions if q["type"] == "multi_hop")
    assert 60 <= len(dataset.timelines) <= 100
    assert set(Counter(t["kind"] for t in dataset.timelines)) == set(TIMELINE_KINDS)
    for t in dataset.timelines:
        labelled = {t["current"], *t["stale"]}
        assert any(m["id"] not in labelled for m in t["memories"]), f"{t['id']} has no distractor"
        if t["kind"] == "implicit_subject":
            days = {m["id"]: m["timestamp"][:10] for m in t["memories"]}
            assert any(days[s] == days[t["current"]] for s in t["stale"]), f"{t['id']}: update not in its subject's session"


def test_check_dataset_reports_broken_labels(dataset):
    question = {**dataset.questions[0], "evidence": ["no-such-turn"]}
    turn = {**dataset.turns[0], "timestamp": "last Tuesday"}
    timeline = {**dataset.timelines[0], "stale": [dataset.timelines[0]["current"]]}
    broken = replace(dataset, turns=[turn, *dataset.turns[1:], dataset.turns[1]],
                     questions=[question, *dataset.questions[1:]], timelines=[timeline, *dataset.timelines[1:]])
    problems = "\n".join(check_dataset(broken))
    assert "no-such-turn" in problems
    assert "last Tuesday" in problems
    assert f"turn {dataset.turns[1]['id']}: duplicate id" in problems
    assert f"timeline {timeline['id']}: stale" in problems


# --- end to end ---------------------------------------------------------------------------------------------------

def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


@pytest.fixture
def tiny_data(tmp_path):
    def turn(ns, session, n, speaker, text, timestamp):
        return {"id": f"{ns}-s{session}-t{n}", "text": text, "timestamp": timestamp, "speaker": speaker,
                "session": f"{ns}-s{session}", "namespace": ns}

    turns = [
        turn("tiny-code", 1, 1, "user", "The ledger service stores everything in MySQL 5.7.", "2024-09-02T09:00:00Z"),
        turn("tiny-code", 1, 2, "assistant", "The billing module calls payments-gateway for every refund.", "2024-09-02T09:02:00Z"),
        turn("tiny-code", 2, 1, "user", "We moved the ledger service to Postgres 16.", "2024-10-01T10:00:00Z"),
        turn("tiny-code", 2, 2, "user", "payments-gateway is owned by Priya Raman's team.", "2024-10-01T10:03:00Z"),
        turn("tiny-home", 1, 1, "user", "Our kitchen renovation budget is 28,000 euros.", "2024-08-05T20:00:00Z"),
        turn("tiny-home", 1, 2, "user", "The cat knocked over a plant during the call.", "2024-08-05T20:04:00Z"),
    ]
    questions = [
        {"id": "tq1", "namespace": "tiny-code", "question": "Which database did the ledger service use before Postgres?",
         "evidence": ["tiny-code-s1-t1"], "type": "temporal"},
        {"id": "tq2", "namespace": "tiny-code", "question": "Who owns the service that billing depends on?",
         "evidence": ["tiny-code-s1-t2", "tiny-code-s2-t2"], "type": "multi_hop"},
        {"id": "tq3", "namespace": "tiny-home", "question": "How much money can we spend on the kitchen?",
         "evidence": ["tiny-home-s1-t1"], "type": "paraphrase"},
    ]
    timelines = [
        {"id": "tt1", "namespace": "tiny-tl-deploy", "kind": "implicit_subject", "question": "Which day are deploys on?",
         "current": "tt1-m2", "stale": ["tt1-m1"], "memories": [
             {"id": "tt1-m1", "text": "Deploy day is Tuesday.", "timestamp": "2024-10-15T11:00:00Z"},
             {"id": "tt1-m2", "text": "We just moved it to Thursdays.", "timestamp": "2024-10-15T11:04:00Z"},
             {"id": "tt1-m3", "text": "Code freeze starts on 18 December.", "timestamp": "2024-10-22T09:00:00Z"}]},
        {"id": "tt2", "namespace": "tiny-tl-editor", "kind": "chain", "question": "Which editor do I use?",
         "current": "tt2-m3", "stale": ["tt2-m1", "tt2-m2"], "memories": [
             {"id": "tt2-m1", "text": "I code in Sublime Text.", "timestamp": "2019-05-01T10:00:00Z"},
             {"id": "tt2-m2", "text": "I moved to VS Code as my editor.", "timestamp": "2020-09-01T10:00:00Z"},
             {"id": "tt2-m3", "text": "I'm using Zed as my main editor now.", "timestamp": "2025-01-15T10:00:00Z"},
             {"id": "tt2-m4", "text": "The team shares VS Code settings.", "timestamp": "2025-02-01T10:00:00Z"}]},
    ]
    _write_jsonl(tmp_path / "conversations.jsonl", turns)
    _write_jsonl(tmp_path / "questions.jsonl", questions)
    _write_jsonl(tmp_path / "timelines.jsonl", timelines)
    return tmp_path


def test_harness_runs_end_to_end_on_a_tiny_set(tiny_data, capsys):
    assert evaluate_retrieval(tiny_data, as_json=True) == 0
    report = json.loads(capsys.readouterr().out)

    assert report["import"]["items"] == 6 + 7
    assert report["import"]["turns"] == 6 and report["import"]["items_per_second"] > 0
    questions = report["questions"]
    assert questions["count"] == 3 and questions["conversations"] == 2
    assert list(questions["rows"]) == [*SIGNAL_SETS, *HISTORY_ROWS]
    measured = {name: row for name, row in questions["rows"].items() if "error" not in row}
    assert "fused" in measured and "lexical" in measured
    for row in measured.values():
        assert row["overall"]["n"] == 3
        assert set(row["overall"]) == {"recall@5", "recall@10", "mrr", "n"}
        assert all(0.0 <= row["overall"][m] <= 1.0 for m in ("recall@5", "recall@10", "mrr"))
        assert row["overall"]["recall@5"] <= row["overall"]["recall@10"]
        assert row["by_group"]["temporal"]["n"] == 1 and row["by_group"]["identifier"] == {"n": 0}
    # Hits map back to the imported external ids: the lexically easy question is found by someone.
    assert max(row["overall"]["recall@10"] for row in measured.values()) > 0

    timelines = report["timelines"]
    assert timelines["count"] == 2 and list(timelines["rows"]) == list(TIMELINE_SIGNAL_SETS)
    for row in timelines["rows"].values():
        assert "error" not in row
        assert row["overall"]["n"] == 2
        assert 0.0 <= row["overall"]["current@1"] <= 1.0 and 0.0 <= row["overall"]["stale_above_current"] <= 1.0
        assert row["by_group"]["chain"]["n"] == 1 and row["by_group"]["negation"] == {"n": 0}

    table = render_markdown(report)
    assert "| retriever | signals | recall@5 | recall@10 | MRR | ms/query |" in table
    assert "| fused | all |" in table and "| fused+history | all + superseded |" in table
    assert "### recall@10 by question type" in table and "| temporal (1) |" in table
    assert "| retriever | current@1 | stale-above-current | ms/query |" in table
    assert "items/s" in table
