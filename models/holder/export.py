"""Export the fine-tuned holder classifier to int8 ONNX (model_int8.onnx, tokenizer.json, manifest.json); evaluate.py writes REPORT.md."""

# Usage (training venv):
#   HF_HUB_OFFLINE=1 /work/trainenv/bin/python models/holder/export.py --finetuned /tmp/holder-work/model
# Then, in the runtime venv (no torch), the val figures, the threshold and REPORT.md:
#   .venv/bin/python models/holder/evaluate.py --fp32 /tmp/holder-work/onnx-fp32/model.onnx
# Layer 0's feed-forward MatMuls stay fp32, as in the intent and relation models.

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from onnx_export_common import (  # noqa: E402
    build_versions, changed_splits, export_int8, io_signature, make_log, manifest_source, opset, write_manifest,
)
from preprocessing.holder_model import LABELS, MAX_TOKENS, MODEL_FILE, TOKENIZER_FILE  # noqa: E402
from preprocessing.onnx_text import write_runtime_tokenizer  # noqa: E402
from preprocessing.registry import sha256_of  # noqa: E402
from train import split_paths  # noqa: E402

KEEP_FP32 = ("/bert/encoder/layer.0/intermediate/dense/MatMul", "/bert/encoder/layer.0/output/dense/MatMul")
log = make_log("export")


def build(finetuned: Path, out_dir: Path) -> int:
    training = json.loads((finetuned / "training.json").read_text(encoding="utf-8"))
    base_model_dir = Path(training["base_model_dir"])
    for path in changed_splits(split_paths(Path(training["snapshot_dir"])), training["dataset"]):
        log(f"{path} is not the snapshot {finetuned} was trained with; re-run train.py")
        return 2
    out_dir.mkdir(parents=True, exist_ok=True)
    model_path, tokenizer_path = out_dir / MODEL_FILE, out_dir / TOKENIZER_FILE
    fp32_path = export_int8(finetuned, model_path, "ORTModelForSequenceClassification", KEEP_FP32, log)
    write_runtime_tokenizer(base_model_dir / TOKENIZER_FILE, tokenizer_path, MAX_TOKENS)
    inputs, outputs = io_signature(model_path)
    manifest = {
        "name": "cortexd-holder-minilm-l6-int8-onnx",
        "task": "text classification for search and import: does a stored statement state a particular other person's "
                "or group's own fact (OTHER) or not (USER)",
        "source": manifest_source(base_model_dir, finetuned, TOKENIZER_FILE),
        "licence": "Apache-2.0",
        "files": {name: {"sha256": sha256_of(out_dir / name), "bytes": (out_dir / name).stat().st_size}
                  for name in (MODEL_FILE, TOKENIZER_FILE)},
        "labels": list(LABELS),
        "input": "one statement ([CLS] text [SEP], token type 0), truncated to max_length word pieces",
        "build": {
            "command": training["command"],
            "export_command": "python models/holder/export.py --finetuned <work-dir>/model",
            **build_versions(),
            "export": f"optimum ORTModelForSequenceClassification.from_pretrained(export=True), opset {opset(model_path)}",
            "fp32_onnx_bytes": fp32_path.stat().st_size,
            "quantization": "onnxruntime quantize_dynamic, QInt8 weights, per-channel; kept fp32: " + ", ".join(KEEP_FP32),
            "tokenizer_changes": f"upstream tokenizer.json with truncation max_length {MAX_TOKENS} "
                                 "and padding BatchLongest; training used the same file",
        },
        "training": {k: v for k, v in training.items()
                     if k not in ("command", "base_model_dir", "data_dir", "snapshot_dir", "dataset")},
        "dataset": training["dataset"],
        "inputs": inputs,
        "outputs": outputs,
        "output": "logits; softmax gives the probability of each label, in `labels` order",
        "runtime_requires": ["onnxruntime", "tokenizers", "numpy"],
        "max_length": MAX_TOKENS,
        "lowercase": True,
    }
    write_manifest(out_dir, manifest, log)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--finetuned", required=True, help="directory written by train.py")
    p.add_argument("--out-dir", default=str(HERE), help="where the artifacts go (default: %(default)s)")
    args = p.parse_args(argv)
    return build(Path(args.finetuned).resolve(), Path(args.out_dir).resolve())


if __name__ == "__main__":
    sys.exit(main())
