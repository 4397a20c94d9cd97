"""`cortexd eval timelines` on a two-scenario file: a changed value and an unchanged control fact beside it."""

from __future__ import annotations

import json
import subprocess
import sys

from memory_daemon.evals.timelines import MISS_CLASSES, _means, why_missed

SCENARIOS = [
    {"id": "t-1", "namespace": "t-1-deploys", "kind": "change", "question": "Which day do we deploy on?",
     "memories": [
         {"id": "t-1-m1", "text": "Deploys are on Tuesdays.", "timestamp": "2025-01-06T09:00:00Z"},
         {"id": "t-1-m2", "text": "We moved deploys to Thursdays because of the release freeze.",
          "timestamp": "2025-02-03T10:30:00Z"},
         {"id": "t-1-m3", "text": "Our CI runners use Ubuntu 22.04 images.", "timestamp": "2025-02-10T09:00:00Z"}],
     "current": "t-1-m2", "stale": ["t-1-m1"]},
    {"id": "t-2", "namespace": "t-2-dentist", "kind": "control", "question": "Who is my dentist?",
     "memories": [
         {"id": "t-2-m1", "text": "My dentist is Dr. Okafor on Elm Street.", "timestamp": "2025-01-06T09:00:00Z"},
         {"id": "t-2-m2", "text": "My gym membership renews in March.", "timestamp": "2025-02-01T09:00:00Z"},
         {"id": "t-2-m3", "text": "The gym membership now renews in April.", "timestamp": "2025-03-01T09:00:00Z"}],
     "current": "t-2-m1", "stale": []},
]


def test_means_count_only_the_scenarios_a_score_applies_to():
    rows = [{"current@1": 1.0, "stale_above_current": 0.0}, {"current@1": 0.0}]
    assert _means(rows) == {"current@1": 0.5, "stale_above_current": 0.0, "n": 2}


def test_a_miss_is_put_in_the_first_class_that_applies():
    retired_answer, lost, outdated, another = MISS_CLASSES
    assert why_missed(["c", "s"], "c", ["s"], set()) is None
    assert why_missed(["x", "c"], "c", ["s"], {"c"}) == retired_answer  # retired, though still found
    assert why_missed(["x"], "c", ["s"], set()) == lost and why_missed([], "c", [], set()) == lost
    assert why_missed(["s", "c"], "c", ["s"], {"s"}) == outdated
    assert why_missed(["x", "c"], "c", ["s"], set()) == another


def test_eval_timelines_scores_a_file_and_reports_every_measure(tmp_path):
    path = tmp_path / "timelines.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in SCENARIOS), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "memory_daemon.cli", "eval", "timelines", str(path), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    [result] = json.loads(done.stdout)
    assert result["scenarios"] == 2 and set(result["by_kind"]) == {"change", "control"}
    change, control = result["by_kind"]["change"], result["by_kind"]["control"]
    assert change["current@1"] == 1.0 and change["stale_above_current"] == 0.0
    assert change["context: superseded in"] == 0.0 and change["context: current in"] == 1.0
    assert control["current@1"] == 1.0 and "stale_above_current" not in control
    # What import retired: the Tuesday memory, and neither the current one nor the CI neighbour; a control
    # scenario's neighbours change too, so only its current memory is checked.
    assert change["stale retired"] == 1.0 and change["current retired"] == 0.0 and change["neighbour retired"] == 0.0
    assert control["current retired"] == 0.0 and "neighbour retired" not in control
    assert result["measured"]["neighbour retired"] == 1 and result["measured"]["current retired"] == 2
    assert result["overall"]["context: within budget"] == 1.0
    assert all(result["overall"][name] == 0.0 for name in MISS_CLASSES)  # both answers came first
    # Each namespace also compiles the other scenario's question: the dentist is not about deploys, and back.
    assert result["overall"]["context: foreign question given a memory"] == 0.0


def test_eval_timelines_names_a_missing_file(tmp_path):
    done = subprocess.run([sys.executable, "-m", "memory_daemon.cli", "eval", "timelines", str(tmp_path / "none.jsonl")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "no such file" in done.stdout
