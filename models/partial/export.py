"""Export the fine-tuned partial-update reader to int8 ONNX (model_int8.onnx, tokenizer.json, manifest.json)."""

# Usage (training venv): .venv/bin/python models/partial/data/build.py, then the precedence model's recipe and input
# from its fine-tuned weights (REPORT.md, "Training"):
#   HF_HUB_OFFLINE=1 /work/trainenv/bin/python models/precedence/train.py --data-dir models/partial/data \
#       --model-dir <the precedence model's fine-tuned dir> --epochs 8 --threads 2 --seed 7 --work-dir /tmp/partial-work
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

# models/precedence is first on sys.path: `export` is its export.py (the same architecture and input), not this file
from export import export_pair_model  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--finetuned", required=True, help="directory written by models/precedence/train.py")
    p.add_argument("--out-dir", default=str(HERE), help="where the artifacts go (default: %(default)s)")
    args = p.parse_args(argv)
    return export_pair_model(
        Path(args.finetuned).resolve(), Path(args.out_dir).resolve(), name="cortexd-partial-minilm-l6-int8-onnx",
        task="pair classification for search and compile_context: of a memory and a newer one that changed one of "
        "its details, which answers a question now (OLDER: it asks an unchanged detail; NEWER: the changed one)",
        export_command="python models/partial/export.py --finetuned <work-dir>/model")


if __name__ == "__main__":
    sys.exit(main())
