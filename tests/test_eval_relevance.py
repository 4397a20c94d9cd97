"""`cortexd eval relevance` runs the real relevance model and encoder on a pair file, beside the cosine rule."""

from __future__ import annotations

import json
import subprocess

from conftest import CORTEXD

PAIRS = [
    {"query": "Who is my family doctor?", "memory": "my GP is Dr. Anneke Vos at the Lindenplein practice", "label": 1,
     "kind": "paraphrase"},
    {"query": "Who is my family doctor?", "memory": "The invoice service retries three times.", "label": 0,
     "kind": "unrelated"},
    {"query": "What does Mira drink in the morning?", "memory": "Mira can't start her day without a flat white.",
     "label": "RELEVANT", "kind": "indirect"},
    {"query": "What does Mira drink in the morning?", "memory": "My sister lives in Porto.", "label": "OFF_TOPIC",
     "kind": "unrelated"},
]


def test_relevance_eval_scores_a_pair_file(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PAIRS), encoding="utf-8")
    result = subprocess.run(CORTEXD + ["eval", "relevance", "--data", str(path), "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)["pairs"]
    model = report["model"]
    assert model["pairs"] == 4 and model["relevant"] == 2
    assert model["average_precision"] == 1.0 and model["false_positive_rate"] == 0.0
    assert 0 < model["threshold"] < 1
    assert [k for k in report if k.startswith("cosine >= ")]


def test_relevance_eval_names_a_bad_file(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"query": "a", "memory": "b", "label": "MAYBE"}) + "\n", encoding="utf-8")
    result = subprocess.run(CORTEXD + ["eval", "relevance", "--data", str(path)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode != 0 and "bad.jsonl:1" in result.stderr and "Traceback" not in result.stderr
