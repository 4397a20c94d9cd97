"""Score the int8 relation model on a pair file (val, and the held-out test once) and write REPORT.md (no torch)."""

# Usage (the project's runtime venv):
#   .venv/bin/python models/relation/evaluate.py [--val models/relation/data/val.jsonl] [--report models/relation/REPORT.md]
# The lead's one scoring of the held-out split fills the report's Test section:
#   .venv/bin/python models/relation/evaluate.py --test tests/data/heldout_4/relation_pairs_test_4.jsonl
# A future `cortexd eval relations` can load this file and call evaluate_relations(path) or main(argv).

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
for _path in (str(REPO), str(HERE.parent), str(HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from preprocessing.registry import sha256_of, verified_model  # noqa: E402
from preprocessing.relation_model import MODEL_FILE, RELATION_MODEL, TOKENIZER_FILE, RelationModel  # noqa: E402
from scoring import BATCH, PairExample, load_pairs, score, summarise  # noqa: E402

BUILD_ONLY_MODULES = ("torch", "transformers", "optimum", "onnx", "sentence_transformers")
RUNS_LOG = HERE / "runs.jsonl"
VAL_COMPATIBLE = HERE / "data" / "val_compatible.jsonl"
SHORT = {"DUPLICATE": "DUP", "UPDATE": "UPD", "PARTIAL_UPDATE": "PART", "COMPATIBLE": "COMP", "UNRELATED": "UNREL"}
LATENCY_CALLS = 300
TARGET_BATCH8_2_THREADS_MS = 8.0
MAX_MODEL_BYTES = 30_000_000


class _BlockBuildOnly:
    """Meta-path finder that makes build-only packages unimportable."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BUILD_ONLY_MODULES:
            raise ModuleNotFoundError(f"{name} is build-only and blocked in the runtime check")
        return None


def block_build_modules() -> None:
    """From here on, importing torch, transformers, optimum or onnx fails, as it would in the runtime venv."""
    sys.meta_path.insert(0, _BlockBuildOnly())


# --------------------------------------------------------------------------- measuring


def evaluate_relations(pairs_path: Path, threads: int = 1, batch: int = BATCH) -> dict:
    """The registry's int8 model on a {existing, new, label[, category, family]} JSONL: every figure of summarise()."""
    model = RelationModel.load(threads=threads)
    examples = load_pairs(Path(pairs_path), model.labels)
    result = summarise(examples, score(model.classify, examples, batch=batch), model.labels, batch=batch)
    result["file_sha256"] = sha256_of(Path(pairs_path))
    return result


def compatible_check(pairs_path: Path) -> dict:
    """The development check: what the model answers on same-subject COMPATIBLE pairs from held-back generator
    families (data/generate.py), as shares of each predicted label. Not used for selection."""
    result = evaluate_relations(pairs_path)
    labels = list(result["per_class"])
    row = result["confusion"][labels.index("COMPATIBLE")]
    return {"pairs": sum(row), "file_sha256": result["file_sha256"],
            "predicted": {label: round(n / sum(row), 6) for label, n in zip(labels, row)}}


def latency(examples: Sequence[PairExample], threads: int, batch: int, calls: int = LATENCY_CALLS) -> dict:
    """p50/p95 ms of one classify() call on `batch` val pairs (tokenisation, inference, softmax), after warm-up."""
    model = RelationModel.load(threads=threads)
    pairs = [(e.existing, e.new) for e in examples]
    batches = [pairs[i:i + batch] for i in range(0, len(pairs) - batch + 1, batch)]
    for chunk in batches[:10]:
        model.classify(chunk)
    ms, cpu_ms = [], []
    for i in range(calls):
        chunk = batches[i % len(batches)]
        t0, c0 = time.perf_counter(), time.process_time()
        model.classify(chunk)
        ms.append((time.perf_counter() - t0) * 1000)
        cpu_ms.append((time.process_time() - c0) * 1000)
    # On one thread the CPU time a call used is what it would take on an idle core: other work on a shared
    # machine stretches the wall clock, not this. (With two threads onnxruntime's spinning inflates it instead.)
    return {"threads": threads, "batch": batch, "calls": calls, "p50": round(float(np.percentile(ms, 50)), 3),
            "p95": round(float(np.percentile(ms, 95)), 3),
            "cpu_p50": round(float(np.percentile(cpu_ms, 50)), 3) if threads == 1 else None,
            "load_average": round(os.getloadavg()[0], 2)}


# --------------------------------------------------------------------------- report


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _confusion_table(matrix: list[list[int]], labels: Sequence[str]) -> list[str]:
    lines = ["| gold \\ predicted | " + " | ".join(SHORT[label] for label in labels) + " |",
             "| --- |" + " ---: |" * len(labels)]
    for label, row in zip(labels, matrix):
        lines.append(f"| {SHORT[label]} | " + " | ".join(str(v) for v in row) + " |")
    return lines


def _scores_section(s: dict, labels: Sequence[str], what: str) -> list[str]:
    """Headline, per label, confusion, dedup view and calibration of one summary."""
    d = s["dedup"]
    interval = s["accuracy_interval"]
    lines = [
        "| measure | value |", "| --- | ---: |",
        f"| pairs | {s['examples']} |",
        f"| accuracy % | {_pct(s['accuracy'])} |",
        f"| accuracy, 95 % interval resampling the {interval['families']} families % | "
        f"{_pct(interval['low'])}–{_pct(interval['high'])} |",
        f"| macro-F1 % | {_pct(s['macro_f1'])} |",
        f"| lowest label recall % | {_pct(min(c['recall'] for c in s['per_class'].values()))} |",
        f"| DUPLICATE precision / recall / F1 % | {_pct(d['duplicate_precision'])} / {_pct(d['duplicate_recall'])} "
        f"/ {_pct(d['duplicate_f1'])} |",
        f"| updates (UPDATE + PARTIAL_UPDATE) predicted DUPLICATE % | {_pct(d['updates_as_duplicate'])} "
        f"(of {d['updates']}) |",
        f"| updates predicted UPDATE or PARTIAL_UPDATE % | {_pct(d['update_recall_either'])} |",
        f"| COMPATIBLE + UNRELATED predicted DUPLICATE % | {_pct(d['keep_both_as_duplicate'])} (of {d['keep_both']}) |",
        f"| COMPATIBLE + UNRELATED predicted an update % | {_pct(d['keep_both_as_update'])} |",
        f"| expected calibration error | {s['calibration']['ece']:.3f} |",
        "",
        f"Per label ({what}):", "",
        "| label | support | precision % | recall % | F1 % |", "| --- | ---: | ---: | ---: | ---: |",
    ]
    for label in labels:
        c = s["per_class"][label]
        lines.append(f"| {label} | {c['support']} | {_pct(c['precision'])} | {_pct(c['recall'])} | {_pct(c['f1'])} |")
    lines += ["", "Confusion matrix (rows: gold, columns: predicted):", ""]
    lines += _confusion_table(s["confusion"], labels)
    lines += ["", "DUPLICATE recall by category (paraphrase kinds):", "",
              "| category | pairs | recall % |", "| --- | ---: | ---: |"]
    for category, c in d["duplicate_recall_by_category"].items():
        lines.append(f"| {category} | {c['pairs']} | {_pct(c['recall'])} |")
    lines += ["", "Accuracy by label and category:", "", "| label/category | pairs | accuracy % |",
              "| --- | ---: | ---: |"]
    for category, c in s["categories"].items():
        lines.append(f"| {category} | {c['pairs']} | {_pct(c['accuracy'])} |")
    lines += ["", "Reliability by top-label confidence:", "",
              "| confidence | pairs | mean confidence | accuracy % |", "| --- | ---: | ---: | ---: |"]
    for b in s["calibration"]["buckets"]:
        close = "]" if b["high"] == 1.0 else ")"
        lines.append(f"| [{b['low']:.2f}, {b['high']:.2f}{close} | {b['count']} | "
                     f"{b['mean_confidence']:.3f} | {_pct(b['accuracy']) if b['count'] else '–'} |")
    return lines


def _errors(s: dict, limit: int = 30) -> list[str]:
    lines = [f"First {min(limit, len(s['errors']))} of {len(s['errors'])} misclassified pairs:", "",
             "| existing | new | gold | predicted | confidence |", "| --- | --- | --- | --- | ---: |"]
    for e in s["errors"][:limit]:
        cells = [t.replace("|", "\\|").replace("\n", " ")[:90] for t in (e["existing"], e["new"])]
        lines.append(f"| {cells[0]} | {cells[1]} | {SHORT[e['gold']]} ({e['category']}) | {SHORT[e['predicted']]} | "
                     f"{e['confidence']:.2f} |")
    return lines


def _runs_section(manifest: dict) -> list[str]:
    if not RUNS_LOG.is_file():
        return []
    runs = [json.loads(line) for line in RUNS_LOG.read_text(encoding="utf-8").splitlines() if line.strip()]
    shipped = manifest.get("build", {}).get("command")
    lines = ["", "## Selection runs (val only)", "",
             "Every training run, in order, from `runs.jsonl` (appended by train.py). The shipped run is marked; "
             "it was chosen on val macro-F1 alone; each row is the run's best epoch by val macro-F1. Training times are wall clock on the shared machine (two runs side by side).", "",
             "| # | command (train.py …) | train pairs | best epoch | val acc % | val macro-F1 % | DUP F1 % | "
             "upd→DUP % | COMP+UNREL→update % | val_compatible→UPD % | recall DUP / UPD / PART / COMP / UNREL % | "
             "minutes |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for i, r in enumerate(runs, 1):
        mark = " **(shipped)**" if r["command"] == shipped else ""
        args = r["command"].replace("python models/relation/train.py ", "")
        if "stopped" in r:  # a run that did not finish: why, instead of figures
            lines.append(f"| {i} | `{args}` | {r.get('train_pairs', '–')} | stopped: {r['stopped']} |" + " – |" * 8)
            continue
        recall = " / ".join(_pct(r["val_recall"][label]) for label in SHORT)
        optional = [_pct(r[k]) if k in r else "–" for k in ("val_keep_both_as_update", "val_compatible_as_update")]
        lines.append(f"| {i} | `{args}`{mark} | {r['train_pairs']} | {r['best_epoch']} | {_pct(r['val_accuracy'])} | "
                     f"{_pct(r['val_macro_f1'])} | {_pct(r['val_duplicate_f1'])} | "
                     f"{_pct(r['val_updates_as_duplicate'])} | {' | '.join(optional)} | {recall} | "
                     f"{r['seconds'] / 60:.0f} |")
        if "not_shipped" in r:  # a finished run that was not shipped although its val figure was higher: why
            lines.append(f"| | ↳ run {i} not shipped: {r['not_shipped']} |" + " |" * 10)
    lines += ["", "COMP+UNREL→update: val COMPATIBLE and UNRELATED pairs predicted UPDATE or PARTIAL_UPDATE. "
              "val_compatible→UPD: the development check above, PyTorch model at the best epoch (– where the run "
              "predates it)."]
    return lines


def _epoch_rows(history: list[dict]) -> list[str]:
    lines = ["| epoch | train loss | val acc % | val macro-F1 % | DUP F1 % | upd→DUP % | seconds |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for row in history:
        lines.append(f"| {row['epoch']} | {row['train_loss']:.4f} | {_pct(row['val_accuracy'])} | "
                     f"{_pct(row['val_macro_f1'])} | {_pct(row['val_duplicate_f1'])} | "
                     f"{_pct(row['val_updates_as_duplicate'])} | {row['seconds']:.0f} |")
    return lines


def _soup_rows(soup: dict) -> list[str]:
    """A model soup (soup.py): each averaged run with its best epoch and val figure, then the soup's own."""
    lines = [f"A model soup: {soup['method']}, of these runs (PyTorch, val):", "",
             "| run (train.py …) | best epoch | val macro-F1 % |", "| --- | ---: | ---: |"]
    for run in soup["ingredients"]:
        lines.append(f"| `{run['command'].replace('python models/relation/train.py ', '')}` | {run['best_epoch']} | "
                     f"{_pct(run['val_macro_f1'])} |")
    lines.append(f"| **the soup** | – | **{_pct(soup['val']['val_macro_f1'])}** |")
    return lines


def _markdown(result: dict, manifest: dict, labels: Sequence[str]) -> str:
    val = result["val"]
    lat = {(x["threads"], x["batch"]): x for x in result["latency"]}
    files = manifest.get("files", {})
    metrics = manifest.get("metrics", {})
    training = manifest.get("training", {})
    batch8_2 = lat[(2, BATCH)]["p50"]
    lines = [
        "# Relation model: fine-tuned MiniLM cross-encoder (int8 ONNX)",
        "",
        "Reads (existing memory, new text) and answers DUPLICATE, UPDATE, PARTIAL_UPDATE, COMPATIBLE or UNRELATED "
        "(definitions: `data/DATASET.md`). Generated by `python models/relation/evaluate.py` in the runtime venv "
        "(onnxruntime, tokenizers, numpy; no torch) on `" + result["val_file"] + f"` ({val['examples']} pairs, "
        f"sha256 `{result['val_sha256'][:12]}…`), {BATCH} pairs per `classify()` call as the dedup check would send "
        "a new text with its candidates. Val is hand-written families that training never saw, but the "
        "configuration was chosen on it, so these figures are somewhat optimistic; the held-out test below is the "
        "unbiased one. Val is small (28 families); one family moves a label's recall by several points.",
        "",
        "## Validation (int8, the shipped file)",
        "",
    ]
    lines += _scores_section(val, labels, "val")
    lines += [
        "", "## Size and latency", "",
        f"`{MODEL_FILE}` {result['model_bytes'] / 1e6:.1f} MB + `{TOKENIZER_FILE}` "
        f"{files.get(TOKENIZER_FILE, {}).get('bytes', 0) / 1e6:.1f} MB. Latency of one `classify()` call (tokenisation, "
        f"inference, softmax) on val pairs, {LATENCY_CALLS} calls after warm-up:",
        "",
        "| pairs per call | threads | p50 ms | p95 ms | CPU ms per call, p50 | load average |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for (threads, batch), x in sorted(lat.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        cpu = f"{x['cpu_p50']:.2f}" if x.get("cpu_p50") is not None else "–"
        lines.append(f"| {batch} | {threads} | {x['p50']:.2f} | {x['p95']:.2f} | {cpu} | {x['load_average']:.1f} |")
    lines += [
        "",
        "Targets: " + "; ".join(f"{name}: {'met' if ok else '**not met**'}" for name, ok in (
            (f"{BATCH} pairs on 2 threads p50 ≤ {TARGET_BATCH8_2_THREADS_MS:g} ms ({batch8_2:.2f})",
             batch8_2 <= TARGET_BATCH8_2_THREADS_MS),
            ("model ≤ 30 MB", result["model_bytes"] <= MAX_MODEL_BYTES))) + ". The machine is shared with other "
        "work (load average in the table; 2 cores), so treat wall-clock latency as an upper bound; on one "
        "thread, the CPU time per call is close to what an idle core would take.",
    ]
    if metrics.get("val"):
        mv = metrics["val"]
        lines += [
            "", "## fp32 vs int8 (val, from manifest.json, written at export)", "",
            "| model | accuracy % | macro-F1 % | DUP F1 % | upd→DUP % |", "| --- | ---: | ---: | ---: | ---: |",
        ]
        names = {"fp32": "fp32 ONNX", "int8": "int8 shipped (layer-0 FFN kept fp32), 8 per call",
                 "int8_single": "int8 shipped, 1 pair per call", "all_int8": "int8, every MatMul quantized"}
        for key, name in names.items():
            m = mv[key]
            lines.append(f"| {name} | {_pct(m['accuracy'])} | {_pct(m['macro_f1'])} | {_pct(m['duplicate_f1'])} | "
                         f"{_pct(m['updates_as_duplicate'])} |")
        lines += [
            "",
            f"The shipped int8 gives fp32's label on {_pct(metrics['int8_vs_fp32_agreement'])} % of val pairs "
            f"(largest probability difference {metrics['int8_vs_fp32_max_abs_prob_diff']:.3f}); with every MatMul "
            f"quantized, {_pct(metrics['all_int8_vs_fp32_agreement'])} % "
            f"({manifest['build']['all_int8_bytes'] / 1e6:.1f} MB). One pair per call vs {BATCH} per call: same "
            f"label on {_pct(metrics['int8_batch_vs_single_agreement'])} % (int8 activations are quantised per "
            f"call; largest probability difference {metrics['int8_batch_vs_single_max_abs_prob_diff']:.3f}). fp32 "
            f"ONNX vs PyTorch: max logit difference {metrics['fp32_onnx_vs_torch_max_abs_logit_diff']:.2e}. "
            f"fp32 ONNX is {manifest['build']['fp32_onnx_bytes'] / 1e6:.1f} MB (not kept).",
        ]
    if training:
        weights = training.get("class_weight_values", {})
        lines += [
            "", "## Training", "",
            f"all-MiniLM-L6-v2 + a linear head over [CLS], pair input (existing = segment A, new = segment B), "
            f"max length {training['max_length']}; lr {training['learning_rate']:g}, batch {training['batch_size']}, "
            f"{training['epochs']} epochs ({training['schedule']}), weight decay {training['weight_decay']}, "
            f"class weights {training['class_weights']}"
            + (f" ({', '.join(f'{SHORT[k]} {v}' for k, v in weights.items())})"
               if training["class_weights"] != "none" else "")
            + f", seed {training['seed']}; {training['train_pairs_used']} training pairs from "
            f"{', '.join(training['sources'])}; best epoch {training['best_epoch']} by val macro-F1. "
            f"{training['train_seconds'] / 60:.0f} min on {training['torch_threads']} CPU thread(s).",
            "",
        ]
        lines += _soup_rows(training["soup"]) if "soup" in training else _epoch_rows(training["history"])
    check = result.get("compatible_check")
    if check:
        lines += [
            "", "## Development check: same-subject COMPATIBLE pairs (`data/val_compatible.jsonl`)", "",
            f"{check['pairs']} pairs from generator families held back from training (`data/generate.py`): two "
            "different attributes of the same subject, both true, some phrased as a change (\"… moved to port "
            "9000\" next to a memory about its Python version). A wrong UPDATE here would retire a true memory. "
            "Templated and not used for selection, so a check of this one failure, not a score.", "",
            "| predicted | " + " | ".join(SHORT[label] for label in labels) + " |",
            "| --- |" + " ---: |" * len(labels),
            "| % of pairs | " + " | ".join(_pct(check["predicted"][label]) for label in labels) + " |",
        ]
    lines += _runs_section(manifest)
    cpu8 = lat[(1, BATCH)].get("cpu_p50") or lat[(1, BATCH)]["p50"]
    lines += [
        "", "## Known limits (for whoever wires it into the daemon)", "",
        f"- **Latency.** A pair costs about {cpu8 / BATCH:.1f} ms of CPU ({BATCH} pairs padded to the longest "
        f"one: {cpu8:.0f} ms on one thread, {batch8_2:.0f} ms on two), so {BATCH} candidates per new memory do "
        f"not fit the {TARGET_BATCH8_2_THREADS_MS:g} ms target on this CPU. Keeping only MiniLM's bottom 3 layers "
        "halves the cost but lost about 14 points of val macro-F1 (the `--layers 3` selection run), so it was "
        "not shipped. "
        "What fits: send only the candidates whose cosine passes a floor (a clearly UNRELATED pair does not "
        f"need the cross-encoder): on two threads one pair takes {lat[(2, 1)]['p50']:.1f} ms and four pairs "
        f"{lat[(2, 4)]['p50']:.1f} ms; or run the check off the write path.",
        "- **Batch-mates.** Int8 activations are quantised per call, so a borderline pair's answer can change "
        "with the other pairs in the call (the batch-vs-single agreement above). Pairs the model is sure of do "
        "not move; decisions should use the probabilities, not only the label.",
        "- **Val is small** (234 pairs, 28 families): PARTIAL_UPDATE has 28 pairs, so its recall moves about "
        "3.6 points per pair. The UPDATE/PARTIAL_UPDATE and COMPATIBLE/UNRELATED boundaries are where most errors "
        "are; both sides of each lead to the same store action (supersede; keep both), which the dedup view "
        "above scores.",
        "- **Team sets in training.** The shipped model trained on `tests/data/activation/dedup_pairs.jsonl` "
        "(duplicate and update pairs) and UPDATE pairs from `tests/data/retrieval/timelines.jsonl`; those files no "
        "longer measure this model on unseen pairs.",
    ]
    lines += ["", "## Where the model errs (val)", ""]
    lines += _errors(val)
    lines += ["", "## Test (held-out, scored once by the lead)", ""]
    test = result.get("test")
    if test is None:
        lines += ["Not scored yet. The lead fills this section once, at the very end, with",
                  "`.venv/bin/python models/relation/evaluate.py --test tests/data/heldout/relation_pairs_test.jsonl`;",
                  "nothing in this model's data, training, selection or export read that file."]
    else:
        lines += [f"`{result['test_file']}` (sha256 `{result['test_sha256'][:12]}…`), {BATCH} pairs per call.", ""]
        lines += _scores_section(test, labels, "test")
        lines += [""] + _errors(test)
    lines += [
        "", "## Environment", "",
        f"onnxruntime {_version('onnxruntime')}, tokenizers {_version('tokenizers')}, numpy {np.__version__}, "
        f"Python {platform.python_version()}; {platform.machine()}, {os.cpu_count()} CPUs, shared with other work.",
        "",
    ]
    return "\n".join(lines)


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def _shown(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(REPO)) if REPO in path.parents else str(path)


def write_report(val_path: Path, report_path: Path, test_path: Path | None = None) -> dict:
    """Score the registry's int8 model on val (and test, if given), time it, write the Markdown report."""
    val_path, report_path = Path(val_path), Path(report_path)
    verified = verified_model(RELATION_MODEL)
    labels = verified.manifest["labels"]
    recorded = verified.manifest.get("dataset", {}).get("val", {})
    val_sha = sha256_of(val_path)
    result = {
        # A snapshot of the recorded split is named after the split it copies.
        "val_file": recorded["file"] if val_sha == recorded.get("sha256") else _shown(val_path),
        "val_sha256": val_sha,
        "model_bytes": verified.file(MODEL_FILE).stat().st_size,
        "val": evaluate_relations(val_path),
    }
    if VAL_COMPATIBLE.is_file():
        result["compatible_check"] = compatible_check(VAL_COMPATIBLE)
    examples = load_pairs(val_path, labels)
    result["latency"] = [latency(examples, threads, batch) for batch in (1, 4, BATCH) for threads in (1, 2)]
    if test_path is not None:
        result["test_file"] = _shown(Path(test_path))
        result["test_sha256"] = sha256_of(Path(test_path))
        result["test"] = evaluate_relations(Path(test_path))
    report_path.write_text(_markdown(result, verified.manifest, labels), encoding="utf-8")
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--val", default=str(HERE / "data" / "val.jsonl"), help="validation pairs (default: %(default)s)")
    p.add_argument("--test", help="the held-out pairs; scored into the report's Test section (the lead, once)")
    p.add_argument("--report", default=str(HERE / "REPORT.md"), help="where to write (default: %(default)s)")
    p.add_argument("--json", action="store_true", help="also print the numbers (without per-pair errors) as JSON")
    args = p.parse_args(argv)
    result = write_report(Path(args.val), Path(args.report), Path(args.test) if args.test else None)
    for split in ("val", "test"):
        if split in result:
            s = result[split]
            print(f"{split}: accuracy {s['accuracy']:.4f} macro-F1 {s['macro_f1']:.4f} DUP F1 "
                  f"{s['dedup']['duplicate_f1']:.4f} updates->DUP {s['dedup']['updates_as_duplicate']:.4f}",
                  file=sys.stderr)
    print("latency p50 ms: " + ", ".join(f"{x['batch']} pairs/{x['threads']} thr {x['p50']:.2f}"
                                         for x in result["latency"]) + f" -> {args.report}", file=sys.stderr)
    if args.json:
        slim = {k: ({kk: vv for kk, vv in v.items() if kk not in ("errors", "families")} if isinstance(v, dict) else v)
                for k, v in result.items()}
        print(json.dumps(slim, indent=2))
    return 0


if __name__ == "__main__":
    # Run as a script, prove the runtime path needs no build-only package; when imported (a future
    # `cortexd eval relations` may load this file) leave the host process's imports alone.
    block_build_modules()
    sys.exit(main())
