"""Fine-tune all-MiniLM-L6-v2 into the intent classifier with save/recall request heads, keep the best epoch, export it."""

# Usage (build venv, never the project's runtime venv; see models/encoder/build.py for its set-up):
#   HF_HUB_OFFLINE=1 /work/venv-build/bin/python models/intent/train.py --lr 5e-5 --epochs 5 --seed 7 --threads 1
# (the shipped model; its manifest records the exact command, which also passed --work-dir and --no-export
# and was followed by export.py --finetuned <work-dir>/model).
#
# With several learning rates there is one run per rate and the best on val macro-F1 is exported. On the
# 3,840-example dataset 2e-5 underfit (train loss still 0.17 after 5 epochs, val macro-F1 0.909 vs 0.930 at
# 5e-5), hence the default of 5e-5; the manifest records the runs behind the shipped model. On the
# 5,700-example dataset (val 578): 3e-5 / 5e-5 gave val macro-F1 0.959 / 0.969 on an earlier draft of the data,
# 4e-5 / 5e-5 gave 0.961 / 0.965 on a later one; on the final data, 5e-5 with seeds 7 / 13 / 21 gave
# 0.973 / 0.967 / 0.967 (best epoch 5 each), and seed 7 was shipped on val alone.
#
# Seventh round (val 656, test 653, both unchanged since the fifth/sixth rounds). Configurations were compared
# by the mean over seeds 7 and 13 of each run's best val macro-F1 (best epoch in brackets), all at lr 5e-5,
# batch 16, 5 epochs, warm-up 10%, weight decay 0.01:
#   sixth-round data (train 5,231), no label smoothing:   0.9649 [5] / 0.9756 [2]  mean 0.9702
#   sixth-round data, --label-smoothing 0.1:               0.9649 [5] / 0.9741 [2]  mean 0.9695
#   seventh-round data (train 5,432), no label smoothing:  0.9802 [5] / 0.9740 [5]  mean 0.9771
# The last configuration won, and within it seed 7 (val 0.9802); only that run was scored on test.
# The seventh-round runs used --threads 1 (two ran side by side); rebuild with the same thread count, since it
# can change floating-point sums.
#
# Eighth round: request heads (issue 15). One BertForSequenceClassification with 8 outputs: logits[:, :6] are the
# intents (softmax, cross-entropy), logits[:, 6] save_request and logits[:, 7] recall_request (independent sigmoids,
# binary cross-entropy). Each example adds to the loss only of the heads it has a label for (the three means are
# summed): intent-dataset texts carry their intent plus the weak request negatives of request_data.py, the
# request split (requests_train.jsonl) carries both request labels and no intent. An epoch is scored by
# intent val macro-F1 + the mean of the two heads' F1 on requests_val at a 0.5 cut (REQUEST_SELECTION below).
#
# Runs, all seed 7, --threads 1, compared on val (intent macro-F1 / save F1 / recall F1 at a 0.5 cut, best epoch):
#   1. from the base MiniLM, lr 5e-5, 5 epochs, handwritten request families only:   0.9664 / 0.932 / 1.000 [4]
#   2. warm start (--init-from the six-intent model), lr 3e-5, 3 epochs, + added families: 0.9527 / 0.971 / 1.000 [3]
#   3. as 2 with --distill-weight 1:                                                   0.9679 / 0.936 / 0.970 [3]
# The six-intent model alone has val macro-F1 0.9802; runs 1 and 2 lost up to 2.8 points of it, many of them on
# texts with a request cue ("remember that we went with X" read as a preference), so run 3 adds a KL term to the
# starting model's intent outputs on every row, which gives the request texts intent targets too. The score above
# picks the epoch within a run; across runs the one that kept the most intent val macro-F1 was shipped (run 3),
# because the intents carry a hard target and the score alone would have picked run 2 (1.938 vs 1.921). Run 1 was
# exported and missed the intent test targets (int8 accuracy 0.934), which is why the intents were protected at
# all; only run 3 was exported after that. The starting model is the
# seventh round's, re-trained with the code before the heads (`git archive 03aba19 models preprocessing`, the
# seventh round's command, 5 epochs; same fine-tuned weights sha256 as the seventh round's manifest):
#   HF_HUB_OFFLINE=1 python models/intent/train.py --init-from /tmp/cortexd-intent-work-r7-s7/model \
#       --distill-weight 1 --lr 3e-5 --epochs 3 --seed 7 --threads 1 --work-dir <work-dir> --no-export
#   HF_HUB_OFFLINE=1 python models/intent/export.py --finetuned <work-dir>/model --baseline <six-output model dir>
#
# Ninth round (issue 15, after the first held-out split was scored once): requests_added_2.jsonl (778 hand-written
# messages in 75 families, 47 % hard negatives) split by family like the hand-written source, so requests_val grows
# to 365 rows with 135 hard negatives and sets the thresholds on such negatives too; texts of both held-out splits
# are dropped from training (count only). Same recipe as run 3, from the same six-intent model (re-trained with the
# seventh round's command at 03aba19: the same fine-tuned weights sha256, 3f5b47bd…):
#   HF_HUB_OFFLINE=1 python models/intent/train.py --init-from /tmp/cortexd-intent-work-r7-s7/model \
#       --distill-weight 1 --lr 3e-5 --epochs 3 --seed 7 --threads 1 --work-dir /tmp/intent-heads-2 --no-export
# val intent macro-F1 0.9692 / save F1 0.952 / recall F1 0.913 at a 0.5 cut [3]; only this run was trained.
#
# Tenth round (the fourth, after held-out v2 was scored once): held-out v1 and v2 join the request data, each line its
# own family (request_data.SCORED_HELDOUT), so requests_val grows to 504 rows; the 3 training texts found in the new
# held-out v3 are dropped (count only). Same command and starting model as the ninth round, --work-dir
# /tmp/intent-heads-3: val intent macro-F1 0.968 / save F1 0.927 / recall F1 0.956 at a 0.5 cut after epoch 2, best
# epoch 3 (selection score 1.925); only this run was trained. Thresholds save 0.6321, recall 0.2922.
#
# Eleventh round (after held-out v3 was scored once at 0.820 save recall): v3 joins SCORED_HELDOUT, and
# data/compose_requests.py adds 1,097 rows (882 save requests, 215 task-scoped hard negatives) from 128 hand-written
# frames, each frame a family split like the rest; requests_val grows to 822 rows. Held-out v4 (written by a helper
# after v3 was examined) replaces v3 as the filter: 4 training texts equal to v4 texts are dropped (count only). Same
# recipe and starting model as the ninth and tenth rounds, --threads 2, --work-dir /tmp/intent-heads-4: val intent
# macro-F1 0.974 / save F1 0.965 / recall F1 0.932 at a 0.5 cut, best epoch 3; only this run was trained. Thresholds
# save 0.615, recall 0.2871. On the tenth round's requests_val (504 rows, never trained on by either model) the int8
# save head went from recall 0.884 / FPR 0.026 / hard-negative FPR 0.047 to 0.940 / 0.023 / 0.035.
#
# Twelfth round (after held-out v4 was scored once at 0.940 save recall, FPR 0.020, hard-negative FPR 0.050): v4
# joins SCORED_HELDOUT; data/compose_requests.py gains 11 change-request frames, 7 polite-question frames and 12
# task-scoped hard-negative frames written after v4's misses (1,325 composed rows, 158 families); requests_val grows
# to 938 rows. Held-out v5 (written by a fresh helper) is the filter: 2 training texts equal to v5 texts are dropped
# (count only). Same recipe and starting model as rounds nine to eleven, --threads 2, --work-dir /tmp/intent-heads-5:
# best epoch 3, val intent macro-F1 0.977 / save F1 0.957 / recall F1 0.924 at a 0.5 cut; only this run was trained.
# Thresholds save 0.7056, recall 0.1261. On the new requests_val (never trained on by either model) at each model's
# FPR <= 0.02 cut: save recall 0.903 (round eleven) -> 0.919.
#
# Thirteenth round (after held-out v5 was scored once): v5 joins SCORED_HELDOUT; data/compose_requests.py gains 25
# noun-phrase request frames and 12 task-scoped look-alikes of that shape; held-out v6 is the filter. Same recipe and
# starting model, --epochs 4, --work-dir /tmp/intent-heads-6: best epoch 4; thresholds save 0.7212, recall 0.3718.
# v6 (scored once): save recall 0.980, FPR 0.027, hard-negative FPR 0.067.
#
# Fourteenth round (after v6 was scored once): v6 joins SCORED_HELDOUT; data/requests_contrasts.jsonl (523 messages in
# 80 families of minimal contrasts, written by a fresh helper) is split by family; the export's threshold rule also
# caps the false-positive rate on requests_val's hard negatives at 0.03 (request_scoring.choose_threshold); held-out
# v8 is the filter (3 training texts dropped, count only). Same recipe and starting model, --epochs 4, --work-dir
# /tmp/intent-heads-7: best epoch 4 (val intent macro-F1 0.9755); int8 thresholds save 0.7565, recall 0.0735; on
# requests_val save recall 0.957 at FPR 0.018, hard-negative FPR 0.028. v8 (scored once): save recall 0.993, FPR
# 0.020, hard-negative FPR 0.050 (3 of 60); recall_request recall 1.000, FPR 0.011.
#
# Fifteenth round (after v8 was scored once): v8 joins SCORED_HELDOUT; data/requests_contrasts_2.jsonl (500 messages in
# 100 families, another fresh helper: three hard negatives of different kinds beside two requests) is split by family;
# held-out v9 is the filter (3 training texts dropped, count only). Same recipe and starting model, --epochs 4,
# --work-dir /tmp/intent-heads-8: best epoch 4 (val intent macro-F1 0.9755); int8 thresholds save 0.2657, recall
# 0.0847; on requests_val save recall 0.986 at FPR 0.0195, hard-negative FPR 0.028. v9 (scored once): save recall
# 0.993, FPR 0.047, hard-negative FPR 0.100 (6 of 60); recall_request recall 0.971, FPR 0.011. The fourteenth round's
# model read 0.973 / 0.040 / 0.083 on v9 (compared after scoring, so v9 is a development set now).
#
# Sixteenth round (session 11, after v9 was scored once and its errors read): v9 joins SCORED_HELDOUT;
# data/requests_added_3.jsonl (520 messages in 54 families, a fresh helper, from a brief naming v9's error kinds, not its
# texts) is split by family; held-out v11 is the filter. The starting model was re-trained with the seventh round's
# command at 03aba19 (same weights sha256, 3f5b47bd…). Same recipe, --epochs 4, --work-dir /tmp/intent-heads-9: best
# epoch 4 (val intent macro-F1 0.9786); int8 thresholds save 0.4457, recall 0.3173; on requests_val save recall 0.963
# at FPR 0.018, hard-negative FPR 0.025. v11 (scored once): save recall 1.000, FPR 0.012, hard-negative FPR 0.029 (2 of
# 70); recall_request recall 1.000, FPR 0.004. Intent test accuracy (int8) 0.9525.
#
# The fine-tuned PyTorch model goes to --work-dir (outside the repo, not committed); export.py turns it
# into models/intent/model_int8.onnx, tokenizer.json, manifest.json and REPORT.md.

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import export  # noqa: E402
from finetune_common import (  # noqa: E402
    SELECTION_TIE_RULE, Schedule, add_common_arguments, recipe, seed_everything, torch_feeds, work_dir_outside,
)
from onnx_export_common import default_model_dir, make_log  # noqa: E402
from preprocessing.intent_rules import INTENTS  # noqa: E402
from preprocessing.onnx_text import write_runtime_tokenizer  # noqa: E402
from preprocessing.registry import sha256_of  # noqa: E402
from request_data import HEADS, heldout_texts, load_requests, normalised, weak_request_labels  # noqa: E402
from request_scoring import binary_metrics  # noqa: E402
from scoring import classification_metrics, load_split, request_paths, snapshot, split_paths  # noqa: E402
from split_snapshot import snapshot_splits  # noqa: E402

OUTPUTS = (*INTENTS, *HEADS)  # logits[:, :6] intents, then one logit per request head
REQUEST_SELECTION = "intent val macro-F1 + mean of save_request and recall_request F1 on requests_val at 0.5"

DEFAULT_WORK_DIR = Path(os.environ.get("TMPDIR", "/tmp")) / "cortexd-intent-work"
log = make_log("train")


@dataclass(frozen=True)
class TrainRow:
    """One training text and its label per head; -1 where it has none (that head's loss ignores it)."""

    text: str
    intent: int
    save_request: int
    recall_request: int


def training_rows(intent_examples, request_examples) -> list[TrainRow]:
    rows = [TrainRow(e.text, INTENTS.index(e.label), *weak_request_labels(e.text, e.label)) for e in intent_examples]
    rows += [TrainRow(e.text, -1, int(e.save_request), int(e.recall_request)) for e in request_examples]
    return rows


def drop_heldout(rows: list[TrainRow]) -> list[TrainRow]:
    """Drop every training text whose normalised form is in the held-out request split; print only how many."""
    heldout = heldout_texts()
    kept = [r for r in rows if normalised(r.text) not in heldout]
    print(f"held-out overlap dropped from training: {len(rows) - len(kept)}", file=sys.stderr, flush=True)
    return kept


class Batches:
    """Token tensors for a list of texts, cut into batches padded to their longest text (the runtime tokenizer's way)."""

    def __init__(self, tokenizer_path: Path, rows: list[TrainRow], batch_size: int) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self.texts = [r.text for r in rows]
        self.labels = np.array([[r.intent, r.save_request, r.recall_request] for r in rows], dtype=np.int64)
        self.batch_size = batch_size

    def __len__(self) -> int:
        return (len(self.texts) + self.batch_size - 1) // self.batch_size

    def iterate(self, order):
        import torch

        for start in range(0, len(order), self.batch_size):
            rows = order[start:start + self.batch_size]
            feeds = torch_feeds(self.tokenizer.encode_batch([self.texts[i] for i in rows]))
            yield feeds, torch.from_numpy(self.labels[rows]), rows


def masked_loss(logits, labels, intent_loss):
    """Cross-entropy on the intent logits plus binary cross-entropy per request head, each over labelled rows."""
    import torch

    terms = []
    has_intent = labels[:, 0] >= 0
    if has_intent.any():
        terms.append(intent_loss(logits[has_intent, :len(INTENTS)], labels[has_intent, 0]))
    for column, index in ((1, OUTPUTS.index(HEADS[0])), (2, OUTPUTS.index(HEADS[1]))):
        has_label = labels[:, column] >= 0
        if has_label.any():
            terms.append(torch.nn.functional.binary_cross_entropy_with_logits(
                logits[has_label, index], labels[has_label, column].float()))
    return sum(terms)


def predict(model, batches: Batches):
    """Intent labels and (n, 2) request-head probabilities for every text of `batches`, in order."""
    import numpy as np
    import torch

    model.eval()
    intents, heads = [], []
    with torch.no_grad():
        for feeds, _, _ in batches.iterate(list(range(len(batches.texts)))):
            logits = model(**feeds).logits
            intents += [INTENTS[i] for i in logits[:, :len(INTENTS)].argmax(-1).tolist()]
            heads.append(torch.sigmoid(logits[:, len(INTENTS):]).numpy())
    return intents, np.concatenate(heads)


def intent_logits(model, batches: Batches):
    """(n, intents) logits of `model` in eval mode for every text of `batches`, in order: the distillation target."""
    import torch

    model.eval()
    with torch.no_grad():
        return torch.cat([model(**feeds).logits[:, :len(INTENTS)]
                          for feeds, _, _ in batches.iterate(list(range(len(batches.texts))))])


def distillation_loss(logits, teacher):
    """KL(teacher's intent distribution || the model's), averaged over the batch."""
    import torch

    return torch.nn.functional.kl_div(torch.log_softmax(logits[:, :len(INTENTS)], -1), torch.softmax(teacher, -1),
                                      reduction="batchmean")


def warm_start(model, init_from: Path) -> dict:
    """Copy a six-intent fine-tuned model's encoder and intent rows into `model`; the request rows stay freshly
    initialised. Returns what the manifest says about the starting point."""
    import torch
    from transformers import AutoModelForSequenceClassification

    source = AutoModelForSequenceClassification.from_pretrained(str(init_from))
    if source.config.num_labels != len(INTENTS):
        raise ValueError(f"--init-from {init_from} has {source.config.num_labels} outputs, not the {len(INTENTS)} intents")
    model.bert.load_state_dict(source.bert.state_dict())
    with torch.no_grad():
        model.classifier.weight[:len(INTENTS)] = source.classifier.weight
        model.classifier.bias[:len(INTENTS)] = source.classifier.bias
    origin = json.loads((init_from / "training.json").read_text(encoding="utf-8"))
    return {"command": origin["command"], "best_epoch": origin["best_epoch"], "history": origin["history"],
            "fine_tuned_weights_sha256": sha256_of(init_from / "model.safetensors")}


def validate(model, val: Batches, gold_val, request_val: Batches, request_gold) -> dict:
    intents, _ = predict(model, val)
    metrics = classification_metrics(gold_val, intents, INTENTS)
    _, probs = predict(model, request_val)
    row = {"val_accuracy": metrics["accuracy"], "val_macro_f1": metrics["macro_f1"]}
    for i, head in enumerate(HEADS):
        m = binary_metrics([g[i] for g in request_gold], probs[:, i] >= 0.5)
        row[f"{head}_val"] = {k: m[k] for k in ("recall", "precision", "f1", "false_positive_rate")}
    row["selection_score"] = round(row["val_macro_f1"] + sum(row[f"{h}_val"]["f1"] for h in HEADS) / len(HEADS), 6)
    return row


def train_one(args: argparse.Namespace, lr: float, model_dir: Path, tokenizer_path: Path, splits: dict) -> dict:
    """One fine-tuning run at one learning rate; returns its history and the best epoch's weights."""
    import numpy as np
    import torch
    from transformers import AutoModelForSequenceClassification

    seed_everything(args.seed)
    model = AutoModelForSequenceClassification.from_pretrained(
        str(model_dir), num_labels=len(OUTPUTS),
        id2label=dict(enumerate(OUTPUTS)), label2id={label: i for i, label in enumerate(OUTPUTS)},
    )
    started_from = warm_start(model, Path(args.init_from)) if args.init_from else None
    train = Batches(tokenizer_path, splits["train_rows"], args.batch_size)
    val = Batches(tokenizer_path, training_rows(splits["val"], []), 64)
    gold_val = [e.label for e in splits["val"]]
    request_val = Batches(tokenizer_path, training_rows([], splits["requests_val"]), 64)
    request_gold = [(e.save_request, e.recall_request) for e in splits["requests_val"]]

    schedule = Schedule(model, args, lr, len(train))
    rng = np.random.default_rng(args.seed)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    # With a warm start, the starting model's own intent outputs on every training text (request texts too) anchor
    # the intents while the encoder learns the request heads.
    teacher = intent_logits(model, train) if args.init_from and args.distill_weight else None

    history, best, best_state = [], None, None
    started = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        t0 = time.perf_counter()
        losses = []
        for feeds, labels, rows in train.iterate(rng.permutation(len(train.texts)).tolist()):
            logits = model(**feeds).logits
            loss = masked_loss(logits, labels, loss_fn)
            if teacher is not None:
                loss = loss + args.distill_weight * distillation_loss(logits, teacher[rows])
            losses.append(schedule.step(loss))
        row = {"epoch": epoch, "train_loss": round(float(np.mean(losses)), 5),
               **validate(model, val, gold_val, request_val, request_gold),
               "seconds": round(time.perf_counter() - t0, 1)}
        history.append(row)
        log(f"lr {lr:g} epoch {epoch}: {row}")
        # Strictly better only: on a tie the earlier, less-fitted epoch is kept.
        if best is None or row["selection_score"] > best["selection_score"]:
            best = row
            best_state = copy.deepcopy(model.state_dict())
    model.load_state_dict(best_state)
    return {"lr": lr, "history": history, "best": best, "seconds": round(time.perf_counter() - started, 1),
            "started_from": started_from,
            "model": model, "schedule": schedule.describe(args.warmup)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    add_common_arguments(p, HERE, DEFAULT_WORK_DIR, seed=13, threads=2)
    p.add_argument("--lr", type=float, nargs="+", default=[5e-5],
                   help="learning rate(s); with several, the best run on val macro-F1 is kept (default: 5e-5)")
    p.add_argument("--distill-weight", type=float, default=0.0,
                   help="with --init-from: weight of a KL term pulling the intent outputs towards the starting "
                        "model's on every training text (default: %(default)s, off)")
    p.add_argument("--init-from", help="start from this six-intent fine-tuned model (a train.py work-dir's model/ "
                                       "from before the request heads) instead of the base MiniLM")
    args = p.parse_args(argv)

    import torch

    torch.set_num_threads(args.threads)
    data_dir = Path(args.data_dir).resolve()
    work_dir = Path(args.work_dir).resolve()
    if not work_dir_outside(REPO, work_dir, log):
        return 2
    model_dir = Path(args.model_dir).resolve() if args.model_dir else default_model_dir()
    work_dir.mkdir(parents=True, exist_ok=True)
    tokenizer_path = work_dir / export.TOKENIZER_FILE
    write_runtime_tokenizer(model_dir / export.TOKENIZER_FILE, tokenizer_path, export.MAX_LENGTH)
    snapshot_dir = work_dir / "data"
    dataset = snapshot(data_dir, snapshot_dir, INTENTS, REPO)
    dataset.update(snapshot_splits(request_paths(data_dir), snapshot_dir, REPO, lambda copy: len(load_requests(copy))))
    splits = {name: load_split(path, INTENTS) for name, path in split_paths(snapshot_dir).items()}
    splits.update({name: load_requests(path) for name, path in request_paths(snapshot_dir).items()})
    splits["train_rows"] = drop_heldout(training_rows(splits["train"], splits["requests_train"]))
    log(f"data {data_dir} (snapshot in {snapshot_dir}): " + ", ".join(f"{k} {len(v)}" for k, v in splits.items()))

    runs = []
    for lr in args.lr:
        run = train_one(args, lr, model_dir, tokenizer_path, splits)
        runs.append(run)
        log(f"lr {lr:g}: best epoch {run['best']['epoch']} selection score {run['best']['selection_score']:.4f} "
            f"in {run['seconds']:.0f}s")
        if len(runs) > 1:
            # Keep only the better model in memory.
            keep = max(runs, key=lambda r: r["best"]["selection_score"] if "model" in r else -1.0)
            for r in runs:
                if r is not keep:
                    r.pop("model", None)
    chosen = max((r for r in runs if "model" in r), key=lambda r: r["best"]["selection_score"])

    finetuned = work_dir / "model"
    chosen["model"].save_pretrained(str(finetuned))
    for name in (export.TOKENIZER_FILE,):
        (finetuned / name).write_bytes(tokenizer_path.read_bytes())
    training = {
        "base_model_dir": str(model_dir),
        "warm_start": chosen["started_from"],
        "data_dir": str(data_dir),
        "snapshot_dir": str(snapshot_dir),
        "dataset": dataset,
        "learning_rate": chosen["lr"],
        "best_epoch": chosen["best"]["epoch"],
        **recipe(args, chosen["schedule"], export.MAX_LENGTH),
        "selection": f"the epoch with the highest {REQUEST_SELECTION} ({SELECTION_TIE_RULE}); across learning "
                     "rates, the run whose best epoch is highest",
        "loss": "cross-entropy over logits[:, :6] for rows with an intent + binary cross-entropy with logits on "
                "logits[:, 6] (save_request) and logits[:, 7] (recall_request) for rows with that label; each a "
                "mean over the batch's labelled rows, summed"
                + (f"; plus {args.distill_weight:g} × KL(starting model's intent softmax ‖ the model's) over every "
                   "row, request rows included" if args.init_from and args.distill_weight else ""),
        "distill_weight": args.distill_weight if args.init_from else 0.0,
        "weak_request_labels": "intent train texts: save_request 0 when the text has no save cue word "
                               "(request_data.SAVE_CUES), else unlabelled; recall_request 0 for SAVE_*/UPDATE_INFO "
                               "texts with no recall cue word (request_data.RECALL_CUES), else unlabelled",
        "train_rows": len(splits["train_rows"]),
        "heldout_overlap_dropped": len(splits["train"]) + len(splits["requests_train"]) - len(splits["train_rows"]),
        "history": chosen["history"],
        "train_seconds": chosen["seconds"],
        "learning_rate_runs": [{"lr": r["lr"], "best_epoch": r["best"]["epoch"],
                                "val_macro_f1": r["best"]["val_macro_f1"],
                                "selection_score": r["best"]["selection_score"],
                                "val_accuracy": r["best"]["val_accuracy"], "seconds": r["seconds"]}
                               for r in runs],
        "command": "python models/intent/train.py " + " ".join(argv if argv is not None else sys.argv[1:]),
    }
    (finetuned / "training.json").write_text(json.dumps(training, indent=2) + "\n", encoding="utf-8")
    log(f"saved lr {chosen['lr']:g} epoch {chosen['best']['epoch']} to {finetuned}")
    if args.no_export:
        return 0
    return export.build(finetuned, Path(args.out_dir).resolve(), model_dir)


if __name__ == "__main__":
    sys.exit(main())
