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
