"""A model whose file does not match its manifest's sha256, or whose manifest has no threshold, is refused with an
error naming what is wrong: for each model that reads with a threshold (the relevance, holder and precedence models and
the partial-update reader; the two pair models' is "sure")."""

from __future__ import annotations

import json
import shutil
from functools import partial

import pytest

from preprocessing.holder_model import HolderModel
from preprocessing.precedence_model import PrecedenceModel
from preprocessing.registry import MODELS_DIR_ENV, ModelUnavailable, models_dir
from preprocessing.relevance_model import RelevanceModel

MODEL_FILE = "model_int8.onnx"
THRESHOLD_MODELS = [("relevance", RelevanceModel.load, "threshold"), ("holder", HolderModel.load, "threshold"),
                    ("precedence", PrecedenceModel.load, "sure"),
                    ("partial", partial(PrecedenceModel.load, name="partial"), "sure")]


def _copy(tmp_path, name: str):
    shutil.copytree(models_dir() / name, tmp_path / name,
                    ignore=shutil.ignore_patterns("data", "*.md", "*.py", "*.jsonl", "__pycache__"))
    return tmp_path / name


@pytest.mark.parametrize("name, load, threshold", THRESHOLD_MODELS)
def test_a_corrupted_model_is_refused_naming_the_file(tmp_path, monkeypatch, name, load, threshold):
    copy = _copy(tmp_path, name)
    data = bytearray((copy / MODEL_FILE).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (copy / MODEL_FILE).write_bytes(bytes(data))
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(ModelUnavailable, match="corrupt") as error:
        load()
    assert MODEL_FILE in str(error.value)


@pytest.mark.parametrize("name, load, threshold", THRESHOLD_MODELS)
def test_a_manifest_without_a_threshold_is_refused(tmp_path, monkeypatch, name, load, threshold):
    copy = _copy(tmp_path, name)
    manifest = json.loads((copy / "manifest.json").read_text())
    del manifest[threshold]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(ModelUnavailable, match=threshold):
        load()


def test_a_pair_model_whose_members_are_not_its_files_is_refused(tmp_path, monkeypatch):
    copy = _copy(tmp_path, "partial")
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["members"] = [MODEL_FILE, "model_int8_unlisted.onnx"]
    (copy / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(ModelUnavailable, match="members"):
        PrecedenceModel.load(name="partial")


def test_a_pair_model_of_several_members_reads_their_mean(tmp_path):
    directory = models_dir() / "partial"
    members = json.loads((directory / "manifest.json").read_text()).get("members", [MODEL_FILE])
    tokenizer = directory / "tokenizer.json"
    inputs = [("Which room is the standup in?", "Standup: Mondays 9am in room B [SEP] standup moved to 10am"),
              ("What time is the standup?", "Standup: Mondays 9am in room B [SEP] standup moved to 10am")]
    each = [PrecedenceModel(directory / member, tokenizer).probabilities(inputs) for member in members]
    together = PrecedenceModel([directory / member for member in members], tokenizer).probabilities(inputs)
    assert together == pytest.approx(sum(each) / len(each), abs=1e-6)
    assert together.sum(axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    doubled = PrecedenceModel([directory / members[0]] * 2, tokenizer).probabilities(inputs)
    assert doubled == pytest.approx(each[0], abs=1e-6)
