"""Average the weights of relation runs fine-tuned from one starting point (a uniform model soup) into one model."""

# Usage (the training venv), two runs of one recipe that differ only in --order-seed, then the soup, then its export:
#   python models/relation/train.py ... --seed 7 --order-seed 7 --work-dir /tmp/rel-runs/a --no-export
#   python models/relation/train.py ... --seed 7 --order-seed 11 --work-dir /tmp/rel-runs/b --no-export
#   python models/relation/soup.py --ingredients /tmp/rel-runs/a /tmp/rel-runs/b --work-dir /tmp/rel-runs/soup
#   python models/relation/export.py --finetuned /tmp/rel-runs/soup/model
# Averaging only makes sense for runs that share their data, recipe and starting weights (Wortsman et al., "Model
# soups", ICML 2022), so anything else is refused. The soup is judged on val like any run and logged to runs.jsonl.

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import train  # first: it puts the repo and models/ on sys.path and sets the offline environment
from onnx_export_common import make_log
from train import RUNS_LOG, Batches, append_run, load_pairs, run_log_entry, val_figures, work_dir_outside

from preprocessing.relation_model import RELATIONS
from scoring import split_paths

log = make_log("soup")
# What must be equal in every ingredient's training.json for the average to be one model's neighbourhood.
SHARED = ("dataset", "sources", "seed", "learning_rate", "epochs", "batch_size", "class_weights", "transformer_layers",
          "max_length", "base_model_dir")


def ingredient(path: Path) -> tuple[Path, dict]:
    """A run's model dir (the work dir's model/, or the dir itself) and its training.json."""
    model_dir = path / "model" if (path / "model" / "training.json").is_file() else path
    training_file = model_dir / "training.json"
    if not training_file.is_file():
        raise SystemExit(f"soup: {path} holds no training.json (neither {path}/model nor {path} is a train.py run)")
    return model_dir, json.loads(training_file.read_text(encoding="utf-8"))


def mismatches(trainings: list[dict]) -> list[str]:
    """The SHARED fields on which the runs differ, each with its values."""
    return [f"{key}: {[t.get(key) for t in trainings]}" for key in SHARED
            if any(t.get(key) != trainings[0].get(key) for t in trainings[1:])]


def averaged_state(model_dirs: list[Path]):
    """The first run's model with every floating-point tensor replaced by the mean over all runs."""
    import torch
    from transformers import AutoModelForSequenceClassification

    models = [AutoModelForSequenceClassification.from_pretrained(str(d)).eval() for d in model_dirs]
    states = [m.state_dict() for m in models]
    soup = {}
    for name, tensor in states[0].items():
        soup[name] = torch.stack([s[name] for s in states]).mean(dim=0) if tensor.is_floating_point() \
            else tensor.clone()  # integer buffers (position ids) are the same in every run
    models[0].load_state_dict(soup)
    return models[0]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--ingredients", nargs="+", required=True, help="two or more train.py work dirs (or their model/)")
    p.add_argument("--work-dir", required=True, help="where the soup's model/ goes (outside the repo)")
    p.add_argument("--threads", type=int, default=1, help="torch threads for the val check")
    p.add_argument("--no-log", action="store_true", help=f"do not append the soup to {RUNS_LOG.name}")
    args = p.parse_args(argv)
    if len(args.ingredients) < 2:
        p.error("--ingredients needs at least two runs")

    import torch

    torch.set_num_threads(args.threads)
    runs = [ingredient(Path(i).resolve()) for i in args.ingredients]
    trainings = [t for _, t in runs]
    if differing := mismatches(trainings):
        log("the runs differ in " + "; ".join(differing) + ": a soup needs one recipe, one dataset, one start")
        return 2
    work_dir = Path(args.work_dir).resolve()
    if not work_dir_outside(train.REPO, work_dir, log):
        return 2

    model = averaged_state([d for d, _ in runs])
    snapshot_dir = Path(trainings[0]["snapshot_dir"])
    tokenizer_path = runs[0][0] / train.export.TOKENIZER_FILE
    paths = split_paths(snapshot_dir)
    val_examples = load_pairs(paths["val"], RELATIONS)
    check_file = snapshot_dir / train.DEV_CHECK
    dev_check = Batches(tokenizer_path, load_pairs(check_file, RELATIONS), 64) if check_file.is_file() else None
    figures = val_figures(model, Batches(tokenizer_path, val_examples, 64), val_examples, dev_check)
    ingredients = [{"command": t["command"], "best_epoch": t["best_epoch"],
                    "val_macro_f1": max(r["val_macro_f1"] for r in t["history"])} for t in trainings]
    for (model_dir, _), run in zip(runs, ingredients):
        log(f"ingredient {model_dir}: epoch {run['best_epoch']} val macro-F1 {run['val_macro_f1']:.4f}")
    log(f"soup of {len(runs)}: val acc {figures['val_accuracy']:.4f} macro-F1 {figures['val_macro_f1']:.4f} "
        f"recall {figures['val_recall']}")

    command = "python models/relation/soup.py " + " ".join(argv if argv is not None else sys.argv[1:])
    finetuned = work_dir / "model"
    model.save_pretrained(str(finetuned))
    (finetuned / train.export.TOKENIZER_FILE).write_bytes(tokenizer_path.read_bytes())
    soup = {"method": "uniform average of every floating-point weight (a model soup)",
            "ingredients": ingredients, "val": figures}
    training = {**{k: v for k, v in trainings[0].items() if k not in ("history", "train_seconds", "best_epoch")},
                "best_epoch": [t["best_epoch"] for t in trainings], "soup": soup,
                "train_seconds": sum(t["train_seconds"] for t in trainings), "command": command}
    (finetuned / "training.json").write_text(json.dumps(training, indent=2) + "\n", encoding="utf-8")
    log(f"saved the soup to {finetuned}")
    if not args.no_log:
        entry = {**run_log_entry(command, trainings[0]["dataset"], trainings[0]["sources"],
                                 trainings[0]["train_pairs_used"], {**figures, "epoch": "soup"},
                                 {"layers": trainings[0]["transformer_layers"]}),
                 "seconds": training["train_seconds"]}
        append_run(entry)
    return 0


if __name__ == "__main__":
    sys.exit(main())
