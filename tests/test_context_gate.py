"""compile_context's gate: read from the relevance model's manifest and traceable to the sets it was fitted on, refused
when malformed, the model's threshold without it, and fit_gate's fit and threshold rule on data made up here."""

from __future__ import annotations

import importlib.util
import json
import shutil

import numpy as np
import pytest

from preprocessing.context_gate import FEATURES, ContextGate, features
from preprocessing.registry import MODELS_DIR_ENV, ModelUnavailable, models_dir, sha256_of
from preprocessing.relevance_model import RelevanceModel

REPO = models_dir().parent


def _fit_gate():
    spec = importlib.util.spec_from_file_location("fit_gate", REPO / "models" / "relevance" / "fit_gate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _copy_with(tmp_path, monkeypatch, change) -> None:
    copy = tmp_path / "relevance"
    shutil.copytree(models_dir() / "relevance", copy,
                    ignore=shutil.ignore_patterns("data", "*.md", "*.py", "*.jsonl", "__pycache__"))
    manifest = json.loads((copy / "manifest.json").read_text())
    change(manifest)
    (copy / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))


def test_the_shipped_gate_comes_from_the_manifest_and_names_the_data_it_was_fitted_on():
    manifest = json.loads((models_dir() / "relevance" / "manifest.json").read_text())
    block = manifest["context_gate"]
    gate = RelevanceModel.load().gate
    assert gate == ContextGate.from_manifest(block) and tuple(block["features"]) == FEATURES
    assert block["fitted_on"] and block["hits"]["current"] > 0 and block["hits"]["foreign"] > 0
    for path, digest in block["fitted_on"].items():
        assert sha256_of(REPO / path) == digest, f"{path} changed since the gate was fitted"


@pytest.mark.parametrize("change, named", [
    (lambda g: g.update(features=["dense", "relevance_logit"]), "features"),
    (lambda g: g.update(weights=["high", 1.0]), "finite weights"),
    (lambda g: g.update(weights=[1.0]), "finite weights"),
    (lambda g: g.update(bias=float("nan")), "finite weights"),
    (lambda g: g.update(threshold=1.5), "threshold"),
])
def test_a_malformed_gate_is_refused_saying_what_is_wrong(tmp_path, monkeypatch, change, named):
    _copy_with(tmp_path, monkeypatch, lambda m: change(m["context_gate"]))
    with pytest.raises(ModelUnavailable, match=f"context_gate.*{named}|{named}.*context_gate"):
        RelevanceModel.load()


def test_without_a_gate_the_models_threshold_decides(tmp_path, monkeypatch):
    _copy_with(tmp_path, monkeypatch, lambda m: m.pop("context_gate"))
    model = RelevanceModel.load()
    assert model.gate is None
    probabilities = [0.2, model.threshold, 0.999]
    assert model.verdicts(probabilities, [0.44, 0.0, 0.0]) == [False, True, True]


def test_the_gate_weighs_the_reading_with_the_cosine():
    gate = ContextGate.from_manifest({"features": list(FEATURES), "weights": [1.0, 10.0], "bias": -5.0,
                                      "threshold": 0.5})
    assert gate.admits(0.5, 0.6) and not gate.admits(0.5, 0.3)  # logit 0: 6 - 5 > 0, 3 - 5 < 0
    assert not gate.admits(0.99, 0.0) and gate.admits(0.999, 0.0)  # logit 4.6 / 6.9 against the bias's 5
    assert gate.probability(features(0.5, 0.5)) == pytest.approx(0.5)
    assert ContextGate.from_manifest(None) is None


def _question(own: bool, dense: float, probability: float) -> dict:
    return {"own": own, "current": "m1" if own else "",
            "hits": [{"id": "m1" if own else "x", "score": 1.0, "kept": False, "dense": dense}],
            "read": {"0": probability}}


def test_fit_gate_learns_the_cosine_and_admits_no_more_foreign_hits_than_the_rule_it_replaces():
    fit_gate = _fit_gate()
    rng = np.random.default_rng(7)
    # Made up: answers have a higher cosine than foreign hits, and the model's reading overlaps for both.
    questions = [_question(True, float(d), float(p)) for d, p in zip(rng.uniform(0.33, 0.45, 60), rng.uniform(0.01, 0.99, 60))]
    questions += [_question(False, float(d), float(p)) for d, p in zip(rng.uniform(0.0, 0.38, 80), rng.uniform(0.0, 0.99, 80))]
    questions.append(_question(False, 0.0, 0.995))  # the one foreign hit the model's threshold (0.98) admits
    gate = fit_gate.gate_for(questions, lambda p, d: p >= 0.98)
    assert gate.weights[FEATURES.index("dense")] > 0
    foreign = [q for q in questions if not q["own"]]
    admitted = sum(gate.admits(q["read"]["0"], q["hits"][0]["dense"]) for q in foreign)
    assert admitted <= sum(q["read"]["0"] >= 0.98 for q in foreign)
    current_in, given = fit_gate.replica(questions, gate.admits)
    assert current_in > fit_gate.replica(questions, lambda p, d: p >= 0.98)[0] and given <= 1 / len(foreign)
