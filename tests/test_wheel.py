"""A wheel (`pip install .`, not editable) carries the models, and the installed code finds and verifies them."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_a_wheel_install_carries_the_models_and_finds_them(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "wheel"),
                            str(REPO)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "wheel").glob("cortexd-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for model in ("encoder", "intent", "relation", "relevance", "holder"):
        assert {f"cortexd_models/{model}/{f}" for f in ("manifest.json", "model_int8.onnx", "tokenizer.json")} <= names
    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                                str(wheel)], capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stderr
    probe = ("from preprocessing.registry import models_dir, verified_model; import preprocessing; "
             "print(preprocessing.__file__); print(models_dir()); "
             "print(*(verified_model(m).directory for m in ('encoder', 'intent', 'relation', 'relevance', 'holder')))")
    env = {k: v for k, v in os.environ.items() if k != "CORTEXD_MODELS_DIR"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(target)})
    assert done.returncode == 0, done.stderr
    code_file, found, *_ = done.stdout.splitlines()
    assert code_file.startswith(str(target)), "the installed copy ran, not the checkout"
    assert found == str(target / "cortexd_models")
