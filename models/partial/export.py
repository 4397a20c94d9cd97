"""Export the fine-tuned partial-update reader to int8 ONNX (model_int8.onnx, tokenizer.json, manifest.json)."""

# Usage (training venv), after models/precedence/train.py --data-dir models/partial/data (the same recipe and input):
#   HF_HUB_OFFLINE=1 /work/trainenv/bin/python models/partial/export.py --finetuned /tmp/partial-work/model
# Then, in the runtime venv (no torch), the val figures and REPORT.md: .venv/bin/python models/partial/evaluate.py

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "precedence"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from onnx_export_common import export_classifier, make_log  # noqa: E402
from preprocessing.precedence_model import LABELS, MAX_TOKENS  # noqa: E402
from preprocessing.relation_model import MODEL_FILE, TOKENIZER_FILE  # noqa: E402
from train import split_paths  # noqa: E402

# Layer 0's feed-forward MatMuls stay fp32, as in the other pair models.
KEEP_FP32 = ("/bert/encoder/layer.0/intermediate/dense/MatMul", "/bert/encoder/layer.0/output/dense/MatMul")
log = make_log("export")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--finetuned", required=True, help="directory written by models/precedence/train.py")
    p.add_argument("--out-dir", default=str(HERE), help="where the artifacts go (default: %(default)s)")
    args = p.parse_args(argv)
    return export_classifier(
        Path(args.finetuned).resolve(), Path(args.out_dir).resolve(), name="cortexd-partial-minilm-l6-int8-onnx",
        task="pair classification for search and compile_context: of a memory and a newer one that changed one of "
        "its details, which answers a question now (OLDER: it asks an unchanged detail; NEWER: the changed one)",
        labels=LABELS, input_text="the question as segment A, 'older [SEP] newer' as segment B ([CLS] A [SEP] B "
        "[SEP], token types 0 and 1), truncated together to max_length word pieces, longest text first",
        export_command="python models/partial/export.py --finetuned <work-dir>/model", split_paths=split_paths,
        keep_fp32=KEEP_FP32, max_tokens=MAX_TOKENS, model_file=MODEL_FILE, tokenizer_file=TOKENIZER_FILE, log=log)


if __name__ == "__main__":
    sys.exit(main())
