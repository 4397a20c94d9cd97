"""`cortexd eval precedence` runs the real precedence model on a pair file, beside "the newer memory answers"."""

from __future__ import annotations

import json
import subprocess

from conftest import CORTEXD

# Written for this test: a change the question asks about, and another person's change beside the user's own fact.
PAIRS = [
    {"question": "Which day is the Ostrava warehouse inventory count?", "label": "NEWER", "kind": "change",
     "older": "Inventory count at the Ostrava warehouse is on the last Friday of the quarter.",
     "newer": "Ostrava inventory count is now on the last Thursday of the quarter."},
    {"question": "When do I go swimming?", "label": "OLDER", "kind": "control",
     "older": "I swim at the Aldermoor lido every Tuesday evening.",
     "newer": "My sister Ines switched her swimming to Thursday mornings."},
]


def _evaluated(tmp_path, suite: str, name: str, rows: list[dict], *flags: str) -> subprocess.CompletedProcess:
    """`cortexd eval <suite> --data` run on these rows, written as a JSONL file `name`."""
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return subprocess.run(CORTEXD + ["eval", suite, "--data", str(path), *flags], capture_output=True, text=True,
                          timeout=300)


def test_precedence_eval_scores_a_pair_file(tmp_path):
    result = _evaluated(tmp_path, "precedence", "pairs.jsonl", PAIRS, "--json")
    assert result.returncode == 0, result.stderr
    [report] = json.loads(result.stdout)
    assert report["pairs"] == 2 and report["always_newer_accuracy"] == 0.5
    assert report["accuracy"] == 1.0, report
    assert report["by_group"]["kind change"] == {"pairs": 1, "accuracy": 1.0}


def test_precedence_eval_names_a_bad_file(tmp_path):
    result = _evaluated(tmp_path, "precedence", "bad.jsonl", [{"question": "a", "older": "b", "newer": "c", "label": "BOTH"}])
    assert result.returncode != 0 and "bad.jsonl:1" in result.stderr and "Traceback" not in result.stderr


def test_partial_eval_reads_a_family_file_whose_lines_give_the_answer(tmp_path):
    # The partial-update reader's families and test splits say `answer` ("older"/"newer"), not a label.
    rows = [{"family": "f1", "category": "partial", "question": q, "answer": answer,
             "older": "Quarterly offsite: June 3 at the Larchmont Hotel, 40 people, budget 12k.",
             "newer": "moved the offsite to the Fenwick Inn, everything else stays"}
            for q, answer in (("Which hotel is the offsite at?", "newer"), ("How many people come to the offsite?", "older"))]
    result = _evaluated(tmp_path, "partial", "families.jsonl", rows, "--json")
    assert result.returncode == 0, result.stderr
    [report] = json.loads(result.stdout)
    assert report["pairs"] == 2 and report["always_newer_accuracy"] == 0.5
    assert report["by_group"]["label NEWER"]["pairs"] == 1 and report["by_group"]["label OLDER"]["pairs"] == 1
    result = _evaluated(tmp_path, "partial", "bad.jsonl", [{**rows[0], "answer": "both"}])
    assert result.returncode != 0 and "bad.jsonl:1" in result.stderr and "'both'" in result.stderr
    assert "Traceback" not in result.stderr
