"""Training steps shared by the MiniLM fine-tunes (models/intent, relation and relevance train.py): build venv only."""

# torch and transformers are imported inside the functions that need them, as in onnx_export_common.

from __future__ import annotations

import argparse
import random
from pathlib import Path

from onnx_export_common import SOURCE_PACKAGE, Log

OPTIMIZER = "AdamW (torch), no weight decay on biases and LayerNorm weights"
SELECTION_TIE_RULE = "strictly higher: ties keep the earlier epoch"


def add_common_arguments(p: argparse.ArgumentParser, here: Path, default_work_dir: Path, *, seed: int,
                         threads: int) -> None:
    """The options every fine-tune takes: where things are, the optimiser and schedule, the seed and threads."""
    p.add_argument("--data-dir", default=str(here / "data"), help="the dataset's split files (default: %(default)s)")
    p.add_argument("--model-dir", help="local all-MiniLM-L6-v2 dir (default: the one inside the installed "
                                       f"{SOURCE_PACKAGE} package)")
    p.add_argument("--work-dir", default=str(default_work_dir),
                   help="where the fine-tuned PyTorch model and fp32 ONNX go; outside the repo (default: %(default)s)")
    p.add_argument("--out-dir", default=str(here), help="where the artifacts go (default: %(default)s)")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--warmup", type=float, default=0.1, help="linear warm-up share of all steps")
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--max-grad-norm", type=float, default=1.0)
    p.add_argument("--label-smoothing", type=float, default=0.0, help="cross-entropy label smoothing")
    p.add_argument("--seed", type=int, default=seed)
    p.add_argument("--threads", type=int, default=threads, help="torch intra-op threads while training")
    p.add_argument("--no-export", action="store_true", help="stop after saving the fine-tuned model")


def work_dir_outside(repo: Path, work_dir: Path, log: Log) -> bool:
    """False (and says why) when the work dir is inside the repo, where the PyTorch weights could be committed."""
    if work_dir == repo or repo in work_dir.parents:
        log(f"--work-dir {work_dir} is inside the repo; the PyTorch weights must not be committed")
        return False
    return True


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)


def torch_feeds(encodings) -> dict:
    """A batch of tokenizers encodings (padded to the longest) as the model's input tensors."""
    import torch

    return {
        "input_ids": torch.tensor([e.ids for e in encodings], dtype=torch.long),
        "attention_mask": torch.tensor([e.attention_mask for e in encodings], dtype=torch.long),
        "token_type_ids": torch.tensor([e.type_ids for e in encodings], dtype=torch.long),
    }


class Schedule:
    """AdamW without weight decay on biases and LayerNorm weights, a linear schedule with warm-up, clipped steps."""

    def __init__(self, model, args: argparse.Namespace, lr: float, steps_per_epoch: int) -> None:
        import torch
        from transformers import get_linear_schedule_with_warmup

        no_decay = ("bias", "LayerNorm.weight")
        groups = [
            {"params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)],
             "weight_decay": args.weight_decay},
            {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)], "weight_decay": 0.0},
        ]
        self.model, self.max_grad_norm = model, args.max_grad_norm
        self.optimizer = torch.optim.AdamW(groups, lr=lr)
        self.total_steps = steps_per_epoch * args.epochs
        self.warmup_steps = int(round(args.warmup * self.total_steps))
        self.scheduler = get_linear_schedule_with_warmup(self.optimizer, self.warmup_steps, self.total_steps)

    def step(self, loss) -> float:
        """Back-propagate `loss`, clip, step the optimiser and the schedule; the loss as a float."""
        import torch

        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
        self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return loss.item()

    def describe(self, warmup_share: float) -> str:
        return f"linear, warm-up {warmup_share:.0%} of {self.total_steps} steps ({self.warmup_steps})"


def recipe(args: argparse.Namespace, schedule: str, max_length: int) -> dict:
    """The part of training.json both fine-tunes write the same way; `schedule` is Schedule.describe()."""
    return {
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "optimizer": OPTIMIZER,
        "weight_decay": args.weight_decay,
        "schedule": schedule,
        "max_grad_norm": args.max_grad_norm,
        "label_smoothing": args.label_smoothing,
        "max_length": max_length,
        "padding": "batch-longest",
        "seed": args.seed,
        "torch_threads": args.threads,
    }


def contrast_groups(examples, key, positive, negative) -> list[tuple[list[int], list[int]]]:
    """Per key(example) (one question, one existing memory): the indexes of its positive and of its negative examples,
    in order of first appearance, for the keys that have both."""
    groups: dict[object, tuple[list[int], list[int]]] = {}
    for i, example in enumerate(examples):
        positives, negatives = groups.setdefault(key(example), ([], []))
        if positive(example):
            positives.append(i)
        elif negative(example):
            negatives.append(i)
    return [g for g in groups.values() if g[0] and g[1]]


def pairwise_ranking_loss(margins_of, group, count: int, rng):
    """softplus(margin of a negative - margin of a positive) over `count` (positive, negative) pairs drawn from one
    contrast group; margins_of(indexes) reads the distinct examples in one forward pass, one margin each."""
    import torch

    positives, negatives = group
    chosen = [(int(rng.choice(positives)), int(rng.choice(negatives))) for _ in range(count)]
    rows = sorted({i for pair in chosen for i in pair})
    position = {i: n for n, i in enumerate(rows)}
    margins = margins_of(rows)
    positive = margins[[position[a] for a, _ in chosen]]
    negative = margins[[position[b] for _, b in chosen]]
    return torch.nn.functional.softplus(negative - positive).mean()
