"""Export the fine-tuned holder classifier to int8 ONNX (model_int8.onnx, tokenizer.json, manifest.json); evaluate.py writes REPORT.md."""

# Usage (training venv):
#   HF_HUB_OFFLINE=1 /work/trainenv/bin/python models/holder/export.py --finetuned /tmp/holder-work/model
# Then, in the runtime venv (no torch), the val figures, the threshold and REPORT.md:
#   .venv/bin/python models/holder/evaluate.py --fp32 /tmp/holder-work/onnx-fp32/model.onnx
# Layer 0's feed-forward MatMuls stay fp32, as in the intent and relation models.

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
from preprocessing.holder_model import LABELS, MAX_TOKENS, MODEL_FILE, TOKENIZER_FILE  # noqa: E402
from train import split_paths  # noqa: E402

KEEP_FP32 = ("/bert/encoder/layer.0/intermediate/dense/MatMul", "/bert/encoder/layer.0/output/dense/MatMul")
log = make_log("export")


def build(finetuned: Path, out_dir: Path) -> int:
    return export_classifier(
        finetuned, out_dir, name="cortexd-holder-minilm-l6-int8-onnx",
        task="text classification for search: does a stored statement state a particular other person's or group's "
             "own fact (OTHER) or not (USER)",
        labels=LABELS, input_text="one statement ([CLS] text [SEP], token type 0), truncated to max_length word pieces",
        export_command="python models/holder/export.py --finetuned <work-dir>/model", split_paths=split_paths,
        keep_fp32=KEEP_FP32, max_tokens=MAX_TOKENS, model_file=MODEL_FILE, tokenizer_file=TOKENIZER_FILE, log=log)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--finetuned", required=True, help="directory written by train.py")
    p.add_argument("--out-dir", default=str(HERE), help="where the artifacts go (default: %(default)s)")
    args = p.parse_args(argv)
    return build(Path(args.finetuned).resolve(), Path(args.out_dir).resolve())


if __name__ == "__main__":
    sys.exit(main())
