"""Int8 ONNX holder model: sha256-checked loading with its threshold, clear statements each way, `cortexd eval holders`."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import CORTEXD
from preprocessing.holder_model import LABELS, MODEL_FILE, TOKENIZER_FILE, HolderModel
from preprocessing.registry import models_dir, sha256_of, verified_model

DATA = Path(__file__).resolve().parent.parent / "models" / "holder" / "data"

# Written for this test before the model was trained; test_clear_statements_are_new_to_the_model checks that none is
# in train or val.
OTHER = [
    "Marisol switched to the early shift at the bakery.",
    "the finance team moved to the fifth floor in March",
    "he's off dairy completely now, oat milk only",
    "My cousin Rafe drives a blue Skoda these days.",
]
USER = [
    "My dentist appointment is on Thursday at 9.",
    "We deploy the billing service on Wednesdays.",
    "The Harbour Street car park closes at 10pm.",
    "The landlord put our rent up to 1,450 a month.",
]


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


@pytest.fixture(scope="module")
def model() -> HolderModel:
    return HolderModel.load()


def test_loads_from_the_registry_with_a_threshold_chosen_on_val(model):
    manifest = verified_model("holder").manifest
    assert tuple(manifest["labels"]) == LABELS
    for name in (MODEL_FILE, TOKENIZER_FILE):
        assert sha256_of(models_dir() / "holder" / name) == manifest["files"][name]["sha256"]
    assert 0.5 <= model.threshold == manifest["threshold"] < 1
    assert "val" in manifest["metrics"] and manifest["licence"] == "Apache-2.0"


def test_clear_statements_are_new_to_the_model():
    seen = {_key(json.loads(line)["text"]) for split in ("train", "val")
            for line in (DATA / f"{split}.jsonl").read_text(encoding="utf-8").splitlines()}
    assert not [t for t in OTHER + USER if _key(t) in seen]


def test_another_persons_own_fact_reads_other_and_the_users_does_not(model):
    other, user = model.other_probabilities(OTHER), model.other_probabilities(USER)
    assert min(other) > max(user), (other, user)
    assert sum(model.others(OTHER)) >= 3 and not any(model.others(USER))


def test_a_text_reads_the_same_whatever_is_read_beside_it_and_a_pasted_document_is_cut(model):
    # One call a text: int8 activations are scaled per call, and a reading is kept with its memory.
    together = model.other_probabilities([OTHER[0], USER[0], "a much longer statement " * 8])
    alone = [model.other_probabilities([t])[0] for t in (OTHER[0], USER[0])]
    assert together[:2] == alone
    assert model.other_probabilities([]) == [] and model.others([]) == []
    assert 0.0 <= model.other_probabilities(["a pasted log line " * 20_000])[0] <= 1.0


def test_eval_holders_scores_a_statement_file(tmp_path):
    path = tmp_path / "statements.jsonl"
    path.write_text("".join(json.dumps({"text": t, "label": label, "kind": "clear"}) + "\n"
                            for label, texts in (("OTHER", OTHER), ("USER", USER)) for t in texts), encoding="utf-8")
    result = subprocess.run(CORTEXD + ["eval", "holders", "--data", str(path), "--json"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)["statements"]
    assert report["statements"] == 8 and report["other"] == 4 and report["average_precision"] == 1.0
    assert set(report["right_by_kind"]) == {"OTHER/clear", "USER/clear"}


def test_eval_holders_names_a_bad_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"text": "a", "label": "USER"}) + "\n" + json.dumps({"text": "b", "label": "MAYBE"})
                    + "\n", encoding="utf-8")
    result = subprocess.run(CORTEXD + ["eval", "holders", "--data", str(path)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 2 and "bad.jsonl:2" in result.stderr and "Traceback" not in result.stderr
