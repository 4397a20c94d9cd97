"""The update choice: its artifact, its pick among sure updates, the judge's fallback, its fit and its eval command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from preprocessing.dedup import DedupCandidate
from preprocessing.registry import MODELS_DIR_ENV, ModelUnavailable, models_dir
from preprocessing.relation_dedup import JudgedPair, RelationJudge
from preprocessing.relation_model import Relation
from preprocessing.update_choice import FEATURES, UPDATE_CHOICE_MODEL, WEIGHTS_FILE, UpdateChooser, choice_features

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "models" / "update_choice"))

ORIGINAL = DedupCandidate("maple", "Our design review happens every Tuesday at 14:00 in the Maple room.", 0.84)
DETOUR = DedupCandidate("zoom", "While the Maple room is being repainted, design reviews are on Zoom.", 0.68)
RETURN = "Maple room is done, design reviews are back there on Tuesdays at 14:00."


def sure(*candidates: DedupCandidate) -> list[JudgedPair]:
    return [JudgedPair(c, Relation("UPDATE", 1.0, {"UPDATE": 1.0})) for c in candidates]


def test_the_shipped_weights_load_verified_and_name_every_feature():
    chooser = UpdateChooser.load()
    assert len(chooser.weights) == len(FEATURES) and all(np.isfinite(chooser.weights))
    manifest = json.loads((models_dir() / UPDATE_CHOICE_MODEL / "manifest.json").read_text())
    assert set(manifest["files"]) == {WEIGHTS_FILE} and manifest["build"]["features"] == list(FEATURES)


def test_a_return_picks_the_detour_it_shares_more_words_with_over_the_closer_original():
    chooser = UpdateChooser.load()
    # cosine, worded as a change, shares a topic, shared words (capped at 4), shared names (capped at 3)
    assert choice_features(RETURN, ORIGINAL) == (0.84, 0.0, 1.0, 3.0, 1.0)
    assert choice_features(RETURN, DETOUR) == (0.68, 0.0, 1.0, 4.0, 1.0)
    assert chooser.choose(RETURN, [ORIGINAL, DETOUR]) == DETOUR
    assert chooser.choose(RETURN, [ORIGINAL]) == ORIGINAL
    with pytest.raises(ValueError):
        chooser.choose(RETURN, [])


def test_the_judge_falls_back_to_the_closest_without_a_choice_or_when_it_fails():
    class Failing:
        def choose(self, new_text, candidates):
            raise RuntimeError("broken")

    model = object()  # never called: likeliest_replaced reads no pair
    assert RelationJudge(model).likeliest_replaced(RETURN, sure(ORIGINAL, DETOUR)) == ORIGINAL
    assert RelationJudge(model, update_choice=Failing()).likeliest_replaced(RETURN, sure(DETOUR, ORIGINAL)) == ORIGINAL
    assert RelationJudge(model, update_choice=UpdateChooser.load()).likeliest_replaced(
        RETURN, sure(ORIGINAL, DETOUR)) == DETOUR


@pytest.mark.parametrize("weights, problem", [
    ({"cosine": 1.0}, "missing"),
    ({name: float("nan") for name in FEATURES}, "finite"),
])
def test_bad_weights_are_refused_with_what_is_wrong(weights, problem):
    with pytest.raises(ModelUnavailable, match=problem):
        UpdateChooser(weights)


def test_a_tampered_weights_file_is_refused_by_its_manifest(tmp_path, monkeypatch):
    shutil.copytree(models_dir() / UPDATE_CHOICE_MODEL, tmp_path / UPDATE_CHOICE_MODEL)
    weights = tmp_path / UPDATE_CHOICE_MODEL / WEIGHTS_FILE
    weights.write_text(weights.read_text().replace('"cosine": ', '"cosine": 9'))
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(ModelUnavailable, match="corrupt"):
        UpdateChooser.load()


def test_the_fit_recovers_which_feature_marks_the_right_candidate():
    from fit import fit

    rng = np.random.default_rng(3)
    groups = []
    for _ in range(200):
        x = rng.random((3, len(FEATURES)))
        x[:, 1] = 0.0
        truth = int(rng.integers(3))
        x[truth, 1] = 1.0  # only the second feature tells the right one
        groups.append((x, truth))
    w = fit(groups, l2=0.1)
    assert w[1] > 2.0 and np.abs(np.delete(w, 1)).max() < 0.5 * w[1]


def test_eval_update_choice_tallies_a_timeline_file(tmp_path):
    timeline = {"id": "t1", "namespace": "t1", "kind": "reversal", "question": "Where are design reviews held?",
                "memories": [{"id": "maple", "text": ORIGINAL.text, "timestamp": "2024-01-09T10:00:00Z"},
                             {"id": "zoom", "text": DETOUR.text, "timestamp": "2024-03-04T10:00:00Z"},
                             {"id": "back", "text": RETURN, "timestamp": "2024-05-06T10:00:00Z"}],
                "current": "back", "stale": ["zoom"]}
    path = tmp_path / "timelines.jsonl"
    path.write_text(json.dumps(timeline) + "\n")
    done = subprocess.run([sys.executable, "-m", "memory_daemon", "eval", "update-choice", "--data", str(path), "--json"],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)[str(path)]
    assert result["learned choice"]["replaces its predecessor"] == 1
    assert result["closest in meaning"]["replaces a still-true memory"] == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "t1"}\n')
    done = subprocess.run([sys.executable, "-m", "memory_daemon", "eval", "update-choice", "--data", str(bad)],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 2 and "needs id, memories and current" in done.stderr
