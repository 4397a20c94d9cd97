"""Score the precedence model on val (int8, and fp32 when given), time it, and write its manifest metrics and REPORT.md."""

# Usage (runtime venv, no torch): .venv/bin/python models/precedence/evaluate.py [--fp32 ONNX] [--sure-step 0.01]

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from memory_daemon.evals.precedence import VALIDATION, load_pairs, model_scores, summarise  # noqa: E402
from preprocessing.precedence_model import PrecedenceModel, verdict  # noqa: E402
from preprocessing.registry import sha256_of  # noqa: E402
from preprocessing.relation_model import MODEL_FILE, TOKENIZER_FILE  # noqa: E402


MAX_WRONG_DECIDED = 0.03  # the share of val pairs decided (sure either way) that may be decided wrongly
# `sure` is looked for in steps of this much from 0.5 (`--sure-step`; session 41's candidates used 0.001: a model whose
# probabilities end at 0.990 has no room on the coarser grid the shipped model's `sure` was chosen on)
SURE_STEP = 0.01


def choose_sure(pairs: list[dict], newer: list[float], step: float = SURE_STEP,
                max_wrong: float = MAX_WRONG_DECIDED) -> tuple[float, dict]:
    """The lowest `sure` in steps of `step` from 0.5 at which at most `max_wrong` of the val pairs the model decides
    are decided wrongly, with what it decides there per group."""
    for sure in [round(0.5 + n * step, 6) for n in range(round(0.5 / step))]:
        said = [verdict(p, sure) for p in newer]
        decided = [(v, pair) for v, pair in zip(said, pairs) if v is not None]
        wrong = sum(v != (pair["label"] == "NEWER") for v, pair in decided)
        if decided and wrong <= max_wrong * len(decided):
            groups: dict[str, list[int]] = {}
            for v, pair in zip(said, pairs):
                row = groups.setdefault(pair.get("other", "?").split(" ")[0] + "/" + pair.get("kind", "?"), [0, 0, 0])
                row[2 if v is None else 0 if v == (pair["label"] == "NEWER") else 1] += 1
            return sure, {"decided": len(decided), "wrong": wrong, "pairs": len(pairs),
                          "by_group": {g: {"right": r[0], "wrong": r[1], "not_sure": r[2]} for g, r in sorted(groups.items())}}
    raise SystemExit("no `sure` on the grid decides any val pair within the bound")


def latency(model: PrecedenceModel, pairs: list[dict], per_call: int = 3, calls: int = 60) -> dict:
    """Milliseconds per newer_answers() call of `per_call` pairs: three for the pairs search reads (its best three
    hits), one for the partial-update reader (one per partial link)."""
    timings = []
    for i in range(calls + 5):
        chunk = [pairs[(i * per_call + j) % len(pairs)] for j in range(per_call)]
        t0 = time.perf_counter()
        model.newer_answers(chunk[0]["question"], [(p["older"], p["newer"]) for p in chunk])
        if i >= 5:
            timings.append((time.perf_counter() - t0) * 1000)
    return {"pairs": per_call, "threads": 2, "p50": round(float(np.percentile(timings, 50)), 2),
            "p95": round(float(np.percentile(timings, 95)), 2)}


def val_figures(model_dir: Path, validation: Path, fp32: str | None) -> tuple[PrecedenceModel, list[dict], list[float], dict]:
    """The shipped int8 model of `model_dir`, the val pairs, their int8 probabilities of NEWER, and the val figures
    (with the fp32 export's beside them when given)."""
    pairs = load_pairs(validation)
    model = PrecedenceModel(model_dir / MODEL_FILE, model_dir / TOKENIZER_FILE, threads=2)
    int8 = model_scores(model, pairs)
    val = {"file": str(validation.relative_to(REPO)), "sha256": sha256_of(validation), "int8": summarise(pairs, int8)}
    if fp32:
        fp32_scores = model_scores(PrecedenceModel(Path(fp32), model_dir / TOKENIZER_FILE, threads=2), pairs)
        val["fp32"] = summarise(pairs, fp32_scores)
        val["int8_vs_fp32_agreement"] = round(float(np.mean([(a >= 0.5) == (b >= 0.5)
                                                             for a, b in zip(int8, fp32_scores)])), 4)
    return model, pairs, int8, val


def write_report(manifest: dict, path: Path) -> None:
    m, training = manifest["metrics"], manifest["training"]
    rows = [("val, int8 (shipped)", m["val"]["int8"])] + ([("val, fp32", m["val"]["fp32"])] if "fp32" in m["val"] else [])
    table = "\n".join(f"| {name} | {r['pairs']} | {r['accuracy']:.3f} | {r['always_newer_accuracy']:.3f} |"
                      for name, r in rows)
    groups = "\n".join(f"| {g} | {v['pairs']} | {v['accuracy']:.3f} |" for g, v in m["val"]["int8"]["by_group"].items())
    sure_rows = "\n".join(f"| {g} | {v['right']} | {v['wrong']} | {v['not_sure']} |"
                           for g, v in m["sure_decisions"]["by_group"].items())
    history = "\n".join(f"| {h['epoch']} | {h['train_loss']:.4f} | {h['val_accuracy']:.4f} | "
                        f"{h['val_stale_pairs_newer']} | {h['seconds']:.0f} |" for h in training["history"])
    path.write_text(f"""# Precedence model: fine-tuned MiniLM cross-encoder (int8 ONNX)

Reads (question, older memory, newer memory) — the question as segment A, the two memories in time order as segment
B — and gives the probability that the newer one, rather than the older, answers the question now: because it
changed what the older one said, or because the older one is about something else. Search reads its best three
current hits in pairs with it (`memory_daemon/retrieval/hybrid.py`, `ordered_by_precedence`); `cortexd eval
precedence` prints the figures below. Data: `data/DATASET.md`. Built by `{manifest['build']['command']}`, then
`{manifest['build']['export_command']}` and `.venv/bin/python models/precedence/evaluate.py`.

## Figures

Val (data/DATASET.md): the pairs of two timeline sets the model never trained on (v24, v25), a fifth of the
hand-written contrast families, and the relevance model's val answers beside their look-alikes. The epoch was chosen
on it, so it is a development figure. The end-to-end test is a held-out timeline split (README, Quality,
"Session 40").

| split | pairs | accuracy | always the newer memory |
| --- | ---: | ---: | ---: |
{table}

By group (val, int8):

| group | pairs | accuracy |
| --- | ---: | ---: |
{groups}

Search counts a pair's verdict only where the model is sure: **sure = {manifest['sure']}**, the {manifest['sure_rule']}.
There it decides {m['sure_decisions']['decided']} of {m['sure_decisions']['pairs']} val pairs, {m['sure_decisions']['wrong']} wrongly:

| pairs (other memory / kind) | right | wrong | not sure |
| --- | ---: | ---: | ---: |
{sure_rows}

int8 vs fp32 agreement at 0.5 (val): {m['val'].get('int8_vs_fp32_agreement', 'not measured')}.
Latency: {m['latency_ms']['pairs']} pairs for one question, {m['latency_ms']['threads']} threads: p50
{m['latency_ms']['p50']} ms, p95 {m['latency_ms']['p95']} ms.

## Training

all-MiniLM-L6-v2 + a linear head over [CLS], lr {training['learning_rate']}, batch {training['batch_size']},
{training['epochs']} epochs ({training['schedule']}), max length {training['max_length']}, seed {training['seed']};
train labels {training['train_labels']}; selection: {training['selection']}; best epoch {training['best_epoch']}.

| epoch | train loss | val accuracy | val stale pairs read NEWER | seconds |
| ---: | ---: | ---: | ---: | ---: |
{history}
""", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--fp32", help="the fp32 ONNX export, to compare with the shipped int8 file")
    p.add_argument("--sure-step", type=float, default=SURE_STEP, help="the grid `sure` is chosen on (%(default)s)")
    args = p.parse_args(argv)
    if not 0 < args.sure_step < 0.5:
        p.error(f"--sure-step {args.sure_step} is not in (0, 0.5)")
    model, pairs, int8, val = val_figures(HERE, VALIDATION, args.fp32)
    manifest_path = HERE / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    sure, decisions = choose_sure(pairs, int8, args.sure_step)
    manifest["sure"] = sure
    manifest["sure_rule"] = (f"lowest on a {args.sure_step} grid with at most {MAX_WRONG_DECIDED:.0%} of the val pairs "
                             "decided (sure either way) decided wrongly (int8)")
    manifest["metrics"] = {"val": val, "sure_decisions": decisions, "latency_ms": latency(model, pairs)}
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    write_report(manifest, HERE / "REPORT.md")
    print(json.dumps({"sure": sure, "decided": decisions["decided"], "wrong": decisions["wrong"],
                      "val_int8": val["int8"]["accuracy"], "val_fp32": val.get("fp32", {}).get("accuracy"),
                      "agreement": val.get("int8_vs_fp32_agreement"), "latency": manifest["metrics"]["latency_ms"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
