"""`cortexd eval relations` runs the real relation model and encoder on a pair file and reports both dedup views."""

from __future__ import annotations

import json
import subprocess

from conftest import CORTEXD

PAIRS = [
    {"existing": "The weekly planning meeting is on Mondays at 10:00.", "new": "weekly planning: mondays, 10 am",
     "label": "DUPLICATE", "category": "paraphrase"},
    {"existing": "The weekly planning meeting is on Mondays at 10:00.",
     "new": "Weekly planning moved to Tuesdays at 10:00.", "label": "UPDATE", "category": "change"},
    {"existing": "My sister lives in Porto.", "new": "The invoice service retries three times.",
     "label": "UNRELATED", "category": "different_topic"},
]


def test_relations_eval_scores_a_pair_file(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PAIRS), encoding="utf-8")
    result = subprocess.run(CORTEXD + ["eval", "relations", "--data", str(path), "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)["pairs"]
    assert report["pairs"] == 3 and set(report["model"]["recall by label"]) >= {"DUPLICATE", "UPDATE"}
    model_view = report["dedup (relation model)"]
    assert model_view["dedup recall"] == 1.0 and model_view["dedup false-positive rate"] == 0.0
    assert model_view["updates merged as duplicates"] == 0.0
    assert "dedup F1" in report["dedup (rules)"]


def test_relations_eval_names_a_bad_file(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"existing": "a", "new": "b", "label": "SAME"}) + "\n", encoding="utf-8")
    result = subprocess.run(CORTEXD + ["eval", "relations", "--data", str(path)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode != 0 and "bad.jsonl:1" in result.stderr and "Traceback" not in result.stderr
