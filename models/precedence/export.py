"""Export the fine-tuned precedence cross-encoder to int8 ONNX (model_int8.onnx, tokenizer.json, manifest.json)."""

# Usage (training venv):
#   HF_HUB_OFFLINE=1 /work/trainenv/bin/python models/precedence/export.py --finetuned /tmp/precedence-work/model
# Then, in the runtime venv (no torch), the val figures and REPORT.md: .venv/bin/python models/precedence/evaluate.py
# Layer 0's feed-forward MatMuls stay fp32, as in the other pair models.

from __future__ import annotations

import argparse
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

from onnx_export_common import export_classifier, make_log  # noqa: E402
from preprocessing.precedence_model import LABELS, MAX_TOKENS  # noqa: E402
from preprocessing.relation_model import MODEL_FILE, TOKENIZER_FILE  # noqa: E402
from train import split_paths  # noqa: E402

KEEP_FP32 = ("/bert/encoder/layer.0/intermediate/dense/MatMul", "/bert/encoder/layer.0/output/dense/MatMul")
log = make_log("export")


INPUT_TEXT = ("the question as segment A, 'older [SEP] newer' as segment B ([CLS] A [SEP] B [SEP], token types 0 and "
              "1), truncated together to max_length word pieces, longest text first")


def export_pair_model(finetuned: Path, out_dir: Path, name: str, task: str, export_command: str) -> int:
    """Export a (question, older, newer) pair model written by train.py: this one, or the partial-update reader."""
    return export_classifier(
        finetuned, out_dir, name=name, task=task, labels=LABELS, input_text=INPUT_TEXT, export_command=export_command,
        split_paths=split_paths, keep_fp32=KEEP_FP32, max_tokens=MAX_TOKENS, model_file=MODEL_FILE,
        tokenizer_file=TOKENIZER_FILE, log=log)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--finetuned", required=True, help="directory written by train.py")
    p.add_argument("--out-dir", default=str(HERE), help="where the artifacts go (default: %(default)s)")
    args = p.parse_args(argv)
    return export_pair_model(
        Path(args.finetuned).resolve(), Path(args.out_dir).resolve(), name="cortexd-precedence-minilm-l6-int8-onnx",
        task="pair classification for search: of two memories on one subject, in time order, which answers a "
        "question now (OLDER or NEWER)",
        export_command="python models/precedence/export.py --finetuned <work-dir>/model")


if __name__ == "__main__":
    sys.exit(main())
