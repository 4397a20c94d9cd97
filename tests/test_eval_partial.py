"""`cortexd eval partial` scores the shipped partial-update reader on its val pairs, as its REPORT says; the reader's
session opens on its first reading, not at load."""

from __future__ import annotations

import json
import subprocess

from conftest import CORTEXD
from preprocessing.precedence_model import PARTIAL_MODEL, PrecedenceModel
from preprocessing.registry import models_dir


# int8 MatMuls can round differently from one CPU to another (onnxruntime picks its int8 kernels by instruction set):
# the same model and pairs scored 0.8085 where the manifest was written and 0.8227 on an AMD EPYC with AVX512-VNNI,
# 4 pairs of 282 apart.
CPU_TOLERANCE = 0.03


def test_partial_eval_gives_the_manifests_val_figure():
    result = subprocess.run(CORTEXD + ["eval", "partial", "--json"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    [report] = json.loads(result.stdout)
    val = json.loads((models_dir() / PARTIAL_MODEL / "manifest.json").read_text())["metrics"]["val"]["int8"]
    assert report["pairs"] == val["pairs"], (report, val)
    assert abs(report["accuracy"] - val["accuracy"]) <= CPU_TOLERANCE, (report, val)
    assert report["accuracy"] > report["always_newer_accuracy"]
    # At the manifest's `sure`, as search and compile_context read it: each pair counted once.
    manifest = json.loads((models_dir() / PARTIAL_MODEL / "manifest.json").read_text())
    decided, expected = report["at_sure"], manifest["metrics"]["val_at_sure"]
    assert report["sure"] == manifest["sure"]
    assert sum(decided.values()) == report["pairs"], decided
    right = sum(by_label["right"] for by_label in expected.values())
    assert abs(decided["right"] - right) <= CPU_TOLERANCE * report["pairs"], (decided, expected)


def test_the_readers_session_opens_on_its_first_reading():
    reader = PrecedenceModel.load(threads=1, name=PARTIAL_MODEL, lazy=True)
    assert reader._pairs is None  # verified, not opened
    [newer] = reader.newer_answers("Which room is the fire drill briefing in?",
                                   [("Fire drill briefing: 9 May, Room Oak, run by Petra.", "briefing moved to room elm")])
    assert reader._pairs is not None and 0.0 <= newer <= 1.0
