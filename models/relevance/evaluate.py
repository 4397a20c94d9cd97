"""Score the relevance model on val (fp32 and int8), choose its threshold there, write it to the manifest and write REPORT.md."""

# Usage (runtime venv, no torch):  .venv/bin/python models/relevance/evaluate.py [--fp32 ONNX] [--test]
# The threshold is the lowest at which val's false-positive rate is at most MAX_VAL_FALSE_POSITIVES. compile_context
# asks the model only about hits its cosine rule turned away. The first rule, 0.03 (chosen before any measurement,
# threshold 0.982), was loosened to 0.10 (0.847) on held-out v7 and v8's timelines (development sets), where it put
# the current memory in more contexts (v7 0.850 -> 0.917) for little leakage; held-out v10, scored once with 0.10,
# showed the cost: a memory in the context of a foreign question for 0.133 of its scenarios (0.067 without the model;
# 0.067 at 0.03, with the current memory in 0.817 of contexts against 0.833 at 0.10 and 0.750 without). Back to 0.03:
# a context the hooks put before every prompt must not fill up with look-alikes. v10 is a development set since.
# --test also scores the frozen test split (tests/data/relevance/), once, at the end of a round.

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from memory_daemon.evals.relevance import TEST, VALIDATION, load_pairs, model_scores, summarise  # noqa: E402
from preprocessing.registry import sha256_of  # noqa: E402
from preprocessing.relation_model import MODEL_FILE, TOKENIZER_FILE  # noqa: E402
from preprocessing.relevance_model import RelevanceModel  # noqa: E402

MAX_VAL_FALSE_POSITIVES = 0.03


def choose_threshold(scores: list[float], gold: list[bool]) -> float:
    """The lowest score threshold (to 4 places) whose false-positive rate on these pairs is <= MAX_VAL_FALSE_POSITIVES."""
    negatives = np.sort(np.asarray([s for s, g in zip(scores, gold) if not g]))[::-1]
    allowed = int(np.floor(MAX_VAL_FALSE_POSITIVES * len(negatives)))
    # Above the (allowed+1)-th highest negative score, at most `allowed` negatives pass.
    return float(np.ceil(negatives[allowed] * 10000 + 1e-9) / 10000) if allowed < len(negatives) else 0.5


def latency(model: RelevanceModel, pairs, batch: int = 8, calls: int = 60) -> dict:
    """Milliseconds per relevance() call of `batch` memories for one query, as compile_context sends them."""
    import time

    timings = []
    for i in range(calls + 5):
        chunk = [pairs[(i * batch + j) % len(pairs)] for j in range(batch)]
        t0 = time.perf_counter()
        model.relevance(chunk[0].query, [p.memory for p in chunk])
        if i >= 5:
            timings.append((time.perf_counter() - t0) * 1000)
    return {"batch": batch, "threads": 2, "p50": round(float(np.percentile(timings, 50)), 2),
            "p95": round(float(np.percentile(timings, 95)), 2)}


def write_report(manifest: dict, path: Path) -> None:
    """REPORT.md from the manifest: data, training, val (and the test once scored), threshold, latency."""
    m, training = manifest["metrics"], manifest["training"]
    rows = [("val, int8 (shipped)", m["val"]["int8"])] + ([("val, fp32", m["val"]["fp32"])] if "fp32" in m["val"] else [])
    if "test" in m:
        rows.append(("**test (held-out, scored once)**", m["test"]["int8"]))
    table = "\n".join(f"| {name} | {r['pairs']} | {r['average_precision']:.3f} | {r['accuracy']:.3f} | "
                      f"{r['precision']:.3f} | {r['recall']:.3f} | {r['false_positive_rate']:.3f} |" for name, r in rows)
    kinds = "\n".join(f"| {name} | " + ", ".join(f"{k} {v['right']:.2f} ({v['pairs']})" for k, v in r["right_by_kind"].items())
                      + " |" for name, r in rows)
    history = "\n".join(f"| {h['epoch']} | {h['train_loss']:.4f} | {h['val_average_precision']:.4f} | "
                        f"{h['val_accuracy']:.4f} | {h['seconds']:.0f} |" for h in training["history"])
    test_note = (f"Test split: `{m['test']['file']}`, sha256 `{m['test']['sha256']}`, written by a fresh helper from a "
                 "brief of the kinds before training, frozen, scored once." if "test" in m else
                 "The frozen test split (`tests/data/relevance/relevance_test.jsonl`) is not scored yet.")
    path.write_text(f"""# Relevance model: fine-tuned MiniLM cross-encoder (int8 ONNX)

Reads (query, memory) — a question or a task as segment A, a stored memory as segment B — and gives the probability
that the memory is RELEVANT: about what the query asks or the task needs, an older value of the same thing included
(whether it is current is supersession's business). `compile_context` asks it about the best hits its cosine rule
turned away (`memory_daemon/context/preflight.py`); `cortexd eval relevance` prints the figures below beside that rule.
Data: `data/DATASET.md`. Built by `{manifest['build']['command']}`, then `{manifest['build']['export_command']}` and
`.venv/bin/python models/relevance/evaluate.py`.

## Figures

Threshold **{manifest['threshold']}**: {manifest['threshold_rule']}.

| split | pairs | average precision | accuracy | precision | recall | false-positive rate |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
{table}

{test_note}

Right answers by gold label and kind:

| split | by kind |
| --- | --- |
{kinds}

int8 vs fp32 agreement at the threshold (val): {m['val'].get('int8_vs_fp32_agreement', 'not measured')}.
Latency: {m['latency_ms']['batch']} memories for one query, {m['latency_ms']['threads']} threads: p50
{m['latency_ms']['p50']} ms, p95 {m['latency_ms']['p95']} ms.

## Selection

Two runs, the same data and recipe but the epochs: 4 epochs (best epoch 4, val AP 0.864 int8, 0.866 fp32; **shipped**)
and 6 epochs (`--work-dir /tmp/relevance-r2`, best epoch 5, val AP 0.867 int8, 0.870 fp32, threshold 0.777). Their
val figures are within noise of each other, so the end-to-end development measure decided: the current memory in
the context of held-out v8 / v7's timelines, and some memory in the context of a foreign question — 0.800 / 0.917 and
0.017 / 0.033 for the 4-epoch run, 0.800 / 0.883 and 0.050 / 0.033 for the 6-epoch run (development sets; README,
Context). Neither test split was read for this.

The threshold was 0.847 (val false-positive rate <= 0.10, chosen on held-out v7 and v8's timelines) when the test
split and held-out v10's timelines were scored, once each: on the test split, accuracy 0.787, precision 0.824,
recall 0.731, false-positive rate 0.156 (the cosine rule: 0.588, 0.630, 0.425, 0.250). v10 then showed the looser
threshold's cost in compiled contexts (README, Context), and the rule written first (<= 0.03, 0.982) is back; the
figures above are at 0.982. Average precision does not depend on the threshold.

## Training

all-MiniLM-L6-v2 + a linear head over [CLS], lr {training['learning_rate']}, batch {training['batch_size']},
{training['epochs']} epochs ({training['schedule']}), max length {training['max_length']}, seed {training['seed']};
train labels {training['train_labels']}; selection: {training['selection']}; best epoch {training['best_epoch']}.

| epoch | train loss | val AP | val accuracy (at 0.5) | seconds |
| ---: | ---: | ---: | ---: | ---: |
{history}

Quantization: {manifest['build']['quantization']}. Model file {manifest['files']['model_int8.onnx']['bytes']:,} bytes,
sha256 `{manifest['files']['model_int8.onnx']['sha256']}`.
""", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--test", action="store_true", help="also score the frozen test split (once, at the end)")
    p.add_argument("--fp32", help="the fp32 ONNX export.py left in the work dir, to compare int8 with")
    p.add_argument("--model-dir", default=str(HERE),
                   help="the exported model to score, whose manifest and REPORT.md are written (default: %(default)s)")
    args = p.parse_args(argv)
    model_dir = Path(args.model_dir).resolve()
    manifest_path = model_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    val = load_pairs(VALIDATION)
    gold = [x.label == "RELEVANT" for x in val]
    int8 = RelevanceModel(model_dir / MODEL_FILE, model_dir / TOKENIZER_FILE, threads=2)
    scores = {"int8": model_scores(int8, val)}
    fp32_path = Path(args.fp32 or "")
    if args.fp32 and fp32_path.is_file():
        scores["fp32"] = model_scores(RelevanceModel(fp32_path, model_dir / TOKENIZER_FILE, threads=2), val)
    threshold = choose_threshold(scores["int8"], gold)
    metrics = {"val": {k: summarise(val, s, threshold) for k, s in scores.items()}}
    if "fp32" in scores:
        same = np.mean([(a >= threshold) == (b >= threshold) for a, b in zip(scores["int8"], scores["fp32"])])
        metrics["val"]["int8_vs_fp32_agreement"] = round(float(same), 4)
    if args.test:
        test = load_pairs(TEST)
        metrics["test"] = {"int8": summarise(test, model_scores(int8, test), threshold),
                           "file": str(TEST.relative_to(REPO)), "sha256": sha256_of(TEST)}
    metrics["latency_ms"] = latency(int8, val)
    manifest["threshold"] = threshold
    manifest["threshold_rule"] = f"lowest with val false-positive rate <= {MAX_VAL_FALSE_POSITIVES} (int8)"
    manifest["metrics"] = metrics
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    write_report(manifest, model_dir / "REPORT.md")
    for split, figures in metrics.items():
        for name, summary in figures.items():
            if isinstance(summary, dict) and "recall" in summary:
                print(split, name, {k: v for k, v in summary.items() if k != "right_by_kind"})
            else:
                print(split, name, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
