"""Fine-tune all-MiniLM-L6-v2 into the precedence cross-encoder; keep the best epoch on val accuracy."""

# Usage (the training venv, never the project's runtime venv):
#   .venv/bin/python models/precedence/data/build.py
#   HF_HUB_OFFLINE=1 /work/trainenv/bin/python models/precedence/train.py --epochs 4 --threads 2 --seed 7 \
#       --work-dir /tmp/precedence-work
#   HF_HUB_OFFLINE=1 /work/trainenv/bin/python models/precedence/export.py --finetuned /tmp/precedence-work/model
# Input is what search sends: the question as segment A, the two memories in time order as segment B
# (preprocessing.precedence_model.memories_text), truncated together to MAX_TOKENS word pieces.

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from finetune_common import (  # noqa: E402
    SELECTION_TIE_RULE, Schedule, add_common_arguments, recipe, seed_everything, torch_feeds, work_dir_outside,
)
from onnx_export_common import default_model_dir, make_log  # noqa: E402
from preprocessing.onnx_text import write_runtime_tokenizer  # noqa: E402
from preprocessing.precedence_model import LABELS, MAX_TOKENS, memories_text  # noqa: E402
from preprocessing.relation_model import TOKENIZER_FILE  # noqa: E402
from split_snapshot import snapshot_splits  # noqa: E402

DEFAULT_WORK_DIR = Path(os.environ.get("TMPDIR", "/tmp")) / "cortexd-precedence-work"
log = make_log("train")


def split_paths(data_dir: Path) -> dict[str, Path]:
    return {split: Path(data_dir) / f"{split}.jsonl" for split in ("train", "val")}


def load_examples(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def model_input(example: dict) -> tuple[str, str]:
    return example["question"], memories_text(example["older"], example["newer"])


def batches(tokenizer, examples, batch_size: int, order):
    import torch

    for start in range(0, len(order), batch_size):
        rows = [examples[i] for i in order[start:start + batch_size]]
        feeds = torch_feeds(tokenizer.encode_batch([model_input(e) for e in rows]))
        yield feeds, torch.tensor([LABELS.index(e["label"]) for e in rows], dtype=torch.long)


def newer_probabilities(model, tokenizer, examples) -> list[float]:
    import torch

    model.eval()
    out: list[float] = []
    with torch.no_grad():
        for feeds, _ in batches(tokenizer, examples, 64, list(range(len(examples)))):
            out += torch.softmax(model(**feeds).logits, -1)[:, LABELS.index("NEWER")].tolist()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    add_common_arguments(p, HERE, DEFAULT_WORK_DIR, seed=7, threads=2)
    p.add_argument("--lr", type=float, default=5e-5)
    args = p.parse_args(argv)

    import numpy as np
    import torch
    from tokenizers import Tokenizer
    from transformers import AutoModelForSequenceClassification

    torch.set_num_threads(args.threads)
    work_dir = Path(args.work_dir).resolve()
    if not work_dir_outside(REPO, work_dir, log):
        return 2
    model_dir = Path(args.model_dir).resolve() if args.model_dir else default_model_dir()
    work_dir.mkdir(parents=True, exist_ok=True)
    tokenizer_path = work_dir / TOKENIZER_FILE
    write_runtime_tokenizer(model_dir / TOKENIZER_FILE, tokenizer_path, MAX_TOKENS)
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    snapshot_dir = work_dir / "data"
    dataset = snapshot_splits(split_paths(Path(args.data_dir).resolve()), snapshot_dir, REPO,
                              lambda path: len(load_examples(path)))
    splits = {name: load_examples(path) for name, path in split_paths(snapshot_dir).items()}
    log(f"train {len(splits['train'])} {dict(Counter(e['label'] for e in splits['train']))}, val {len(splits['val'])}")

    seed_everything(args.seed)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(model_dir), num_labels=len(LABELS), id2label=dict(enumerate(LABELS)),
        label2id={label: i for i, label in enumerate(LABELS)})
    schedule = Schedule(model, args, args.lr, (len(splits["train"]) + args.batch_size - 1) // args.batch_size)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    rng = np.random.default_rng(args.seed)
    gold = [e["label"] == "NEWER" for e in splits["val"]]
    history, best, best_state = [], None, None
    started = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        t0 = time.perf_counter()
        losses = [schedule.step(loss_fn(model(**feeds).logits, labels))
                  for feeds, labels in batches(tokenizer, splits["train"], args.batch_size,
                                               rng.permutation(len(splits["train"])).tolist())]
        scores = newer_probabilities(model, tokenizer, splits["val"])
        stale = [s >= 0.5 for s, e in zip(scores, splits["val"]) if e["other"] == "stale"]
        row = {"epoch": epoch, "train_loss": round(float(np.mean(losses)), 5),
               "val_accuracy": round(float(np.mean([(s >= 0.5) == g for s, g in zip(scores, gold)])), 6),
               "val_stale_pairs_newer": round(float(np.mean(stale)), 4) if stale else None,
               "seconds": round(time.perf_counter() - t0, 1)}
        history.append(row)
        log(f"epoch {epoch}: {row}")
        if best is None or row["val_accuracy"] > best["val_accuracy"]:
            best, best_state = row, copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    finetuned = work_dir / "model"
    model.save_pretrained(str(finetuned))
    (finetuned / TOKENIZER_FILE).write_bytes(tokenizer_path.read_bytes())
    training = {
        "base_model_dir": str(model_dir), "data_dir": str(Path(args.data_dir).resolve()),
        "snapshot_dir": str(snapshot_dir), "dataset": dataset,
        "train_labels": dict(Counter(e["label"] for e in splits["train"])),
        "input": "question as segment A (token type 0), 'older [SEP] newer' as segment B (token type 1)",
        "learning_rate": args.lr, "best_epoch": best["epoch"], **recipe(args, schedule.describe(args.warmup), MAX_TOKENS),
        "selection": f"the epoch with the highest val accuracy ({SELECTION_TIE_RULE})",
        "history": history, "train_seconds": round(time.perf_counter() - started, 1),
        "command": "python models/precedence/train.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    (finetuned / "training.json").write_text(json.dumps(training, indent=2) + "\n", encoding="utf-8")
    log(f"saved epoch {best['epoch']} (val accuracy {best['val_accuracy']:.4f}) to {finetuned}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
