"""Export the fine-tuned partial-update reader to int8 ONNX (model_int8.onnx, tokenizer.json, manifest.json): one
model, or several trained alike from different seeds, read together (manifest "members")."""

# Usage (training venv): .venv/bin/python models/partial/data/build.py, then the precedence model's recipe and input
# from its fine-tuned weights (REPORT.md, "Training"):
#   HF_HUB_OFFLINE=1 /work/trainenv/bin/python models/precedence/train.py --data-dir models/partial/data \
#       --model-dir <the precedence model's fine-tuned dir> --epochs 8 --threads 2 --seed 7 --work-dir /tmp/partial-work
#   HF_HUB_OFFLINE=1 /work/trainenv/bin/python models/partial/export.py --finetuned /tmp/partial-work/model
# With several --finetuned directories (the same recipe, other seeds), the first is model_int8.onnx and each other one
# model_int8_seed<seed>.onnx, and the manifest's "members" names them all: the reader's probability is their mean.
# Then, in the runtime venv (no torch), the val figures and REPORT.md: .venv/bin/python models/partial/evaluate.py

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "precedence"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# models/precedence is first on sys.path: `export` is its export.py (the same architecture and input), not this file
from export import MODEL_FILE, export_pair_model  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--finetuned", required=True, nargs="+",
                   help="directories written by models/precedence/train.py, one a member")
    p.add_argument("--out-dir", default=str(HERE), help="where the artifacts go (default: %(default)s)")
    args = p.parse_args(argv)
    out_dir = Path(args.out_dir).resolve()
    first, *others = [Path(f).resolve() for f in args.finetuned]
    status = _export(first, out_dir, len(args.finetuned))
    if status or not others:
        return status
    manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    manifest["members"], manifest["member_training"] = [MODEL_FILE], [_member(manifest, MODEL_FILE)]
    for finetuned in others:
        with tempfile.TemporaryDirectory() as work:
            if status := _export(finetuned, Path(work), len(args.finetuned)):
                return status
            member = json.loads((Path(work) / "manifest.json").read_text(encoding="utf-8"))
            name = f"model_int8_seed{member['training']['seed']}.onnx"
            shutil.copyfile(Path(work) / MODEL_FILE, out_dir / name)
        manifest["files"][name] = member["files"][MODEL_FILE]
        manifest["members"].append(name)
        manifest["member_training"].append(_member(member, name))
    manifest["build"]["command"] = " ; ".join(m["command"] for m in manifest["member_training"])
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


def _export(finetuned: Path, out_dir: Path, members: int) -> int:
    return export_pair_model(
        finetuned, out_dir, name="cortexd-partial-minilm-l6-int8-onnx",
        task="pair classification for search and compile_context: of a memory and a newer one that changed one of "
        "its details, which answers a question now (OLDER: it asks an unchanged detail; NEWER: the changed one)",
        export_command="python models/partial/export.py --finetuned " + " ".join(
            f"<work-dir {n}>/model" for n in range(1, members + 1)) if members > 1 else
        "python models/partial/export.py --finetuned <work-dir>/model")


def _member(manifest: dict, file: str) -> dict:
    """What one member was trained from and how: its seed, chosen epoch, val accuracy and weights."""
    training = manifest["training"]
    return {"file": file, "command": manifest["build"]["command"], "seed": training["seed"],
            "best_epoch": training["best_epoch"], "history": training["history"],
            "fine_tuned_weights_sha256": manifest["source"]["fine_tuned_weights_sha256"]}


if __name__ == "__main__":
    sys.exit(main())
