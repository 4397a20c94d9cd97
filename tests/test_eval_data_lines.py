"""Every evaluation's JSONL loader names the file and line of a line that is not a JSON object, and skips blank ones."""

import json
import subprocess

import pytest
from conftest import CORTEXD

from memory_daemon.evals.holders import load_statements
from memory_daemon.evals.precedence import load_pairs as precedence_pairs
from memory_daemon.evals.relations import load_pairs as relation_pairs
from memory_daemon.evals.relevance import load_pairs as relevance_pairs
from memory_daemon.evals.retrieval import read_jsonl

GOOD = {
    "holders": (load_statements, {"text": "My standup is at 9:30.", "label": "USER"}),
    "precedence": (precedence_pairs, {"question": "When?", "older": "Tuesdays.", "newer": "Thursdays now.",
                                      "label": "NEWER"}),
    "relations": (relation_pairs, {"existing": "Deploys are on Tuesdays.", "new": "Deploys moved to Thursdays.",
                                   "label": "UPDATE"}),
    "relevance": (relevance_pairs, {"query": "When do we deploy?", "memory": "Deploys are on Tuesdays.",
                                    "label": "RELEVANT"}),
    "timelines": (read_jsonl, {"id": "t1"}),
}


@pytest.mark.parametrize("suite", sorted(GOOD))
@pytest.mark.parametrize("bad_line, says", [("{oops", "not valid JSON"), ("[1, 2]", "needs a JSON object, not list"),
                                             ('"text"', "needs a JSON object, not str")])
def test_a_line_that_is_not_a_json_object_is_named(tmp_path, suite, bad_line, says):
    load, good = GOOD[suite]
    path = tmp_path / "data.jsonl"
    path.write_text(f"{json.dumps(good)}\n\n{bad_line}\n{json.dumps(good)}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=f"data.jsonl:3: {says}"):
        load(path)
    path.write_text(f"\n{json.dumps(good)}\n  \n{json.dumps(good)}\n", encoding="utf-8")
    assert len(load(path)) == 2


@pytest.mark.parametrize("suite", ["timelines", "kinds"])
def test_the_cli_says_which_line_of_a_data_file_is_bad(tmp_path, suite):
    path = tmp_path / "scenarios.jsonl"
    path.write_text('{"id": "t1"}\n[oops\n', encoding="utf-8")
    result = subprocess.run(CORTEXD + ["eval", suite, "--data", str(path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    assert "scenarios.jsonl:2: not valid JSON" in result.stderr and "Traceback" not in result.stderr
