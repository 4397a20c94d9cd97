"""Scores the save/recall request heads beside the PhraseDetector rules and renders that part of REPORT.md (no torch)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from preprocessing.intent_model import REQUEST_HEADS, IntentModel
from preprocessing.phrases import PhraseDetector
from request_data import has_save_cue, load_requests
from request_scoring import request_summary
from scoring import WARM_UP, Example


def _timed(call, texts: Sequence[str]) -> tuple[list, dict]:
    for text in texts[:WARM_UP]:
        call(text)
    results, ms = [], []
    for text in texts:
        t0 = time.perf_counter()
        results.append(call(text))
        ms.append((time.perf_counter() - t0) * 1000)
    return results, {"p50": round(float(np.percentile(ms, 50)), 3), "p95": round(float(np.percentile(ms, 95)), 3)}


def score_requests(model: IntentModel, requests_path: Path, intent_test: Sequence[Example]) -> dict:
    """The model's heads (at the manifest's thresholds) and the rules on one request split, one message per call."""
    examples = load_requests(requests_path)
    texts = [e.text for e in examples]
    result: dict = {"file": str(requests_path), "examples": len(examples), "has_heads": bool(model.request_heads)}
    detector = PhraseDetector()
    signals, result["rules_latency_ms"] = _timed(detector.detect, texts)
    result["rules"] = request_summary(examples, {h: [getattr(s, h) for s in signals] for h in REQUEST_HEADS})
    if model.request_heads:
        readings, result["model_latency_ms"] = _timed(model.classify_with_requests, texts)
        result["model"] = request_summary(examples, {h: [getattr(r, h) for r in readings] for h in REQUEST_HEADS})
        result["thresholds"] = {h: model.request_heads[h].threshold for h in REQUEST_HEADS}
        # Ordinary messages: how often the save head fires on intent-test texts with no save cue word at all.
        plain = [e.text for e in intent_test if not has_save_cue(e.text)]
        fired = sum(r.save_request for r in model.classify_with_requests_batch(plain)) if plain else 0
        result["save_fires_on_plain_intent_test"] = {"messages": len(plain), "fired": int(fired)}
    return result


def score_heldout(model: IntentModel, path: Path) -> dict:
    """The heads on a held-out split ({text, save_request, recall_request, category}), one message per call; hard
    negatives are the rows its writer put in the category "hard_negative"."""
    import json

    from preprocessing.registry import sha256_of

    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    readings = [model.classify_with_requests(r["text"]) for r in rows]
    result: dict = {"file": str(path), "sha256": sha256_of(Path(path)), "messages": len(rows)}
    for head in REQUEST_HEADS:
        said = [bool(getattr(reading, head)) for reading in readings]
        positives = [s for r, s in zip(rows, said) if r[head]]
        negatives = [s for r, s in zip(rows, said) if not r[head]]
        hard = [s for r, s in zip(rows, said) if not r[head] and r.get("category") == "hard_negative"]
        result[head] = {"positives": len(positives), "recall": sum(positives) / max(len(positives), 1),
                        "false_positive_rate": sum(negatives) / max(len(negatives), 1),
                        "hard_negatives": len(hard), "hard_negative_false_positive_rate": sum(hard) / max(len(hard), 1)}
    return result


def heldout_markdown(heldout: dict) -> list[str]:
    """The "held-out test" part of the request-heads section: scored once, by the lead, at the end of a round."""
    lines = ["", "### Held-out test (scored once)", "",
             f"`{heldout['file']}` (sha256 `{heldout['sha256'][:12]}…`, {heldout['messages']} messages written and frozen "
             "by an independent helper before this model's training; none of its texts trained it), one message per "
             "call at the manifest's thresholds. Hard negatives are its writer's `hard_negative` category.", "",
             "| head | positives | recall % | false-positive rate % | hard-negative FPR % |",
             "| --- | ---: | ---: | ---: | ---: |"]
    for head in REQUEST_HEADS:
        m = heldout[head]
        lines.append(f"| {head} | {m['positives']} | {_pct(m['recall'])} | {_pct(m['false_positive_rate'])} | "
                     f"{_pct(m['hard_negative_false_positive_rate'])} ({m['hard_negatives']}) |")
    return lines


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def _head_rows(requests: dict, head: str) -> list[str]:
    lines = []
    for who in ("model", "rules"):
        if who not in requests:
            continue
        m = requests[who][head]
        lines.append(f"| {head} | {who} | {m['positives']} | {_pct(m['recall'])} | {_pct(m['precision'])} | "
                     f"{_pct(m['f1'])} | {_pct(m['false_positive_rate'])} ({m['false_positives']}/{m['negatives']}) | "
                     f"{_pct(m['hard_negative_false_positive_rate'])} ({m['hard_negative_false_positives']}/"
                     f"{m['hard_negatives']}) |")
    return lines


def request_markdown(requests: dict, manifest: dict) -> list[str]:
    """The "Request heads" section of REPORT.md."""
    lines = ["", "## Request heads: save_request and recall_request", ""]
    scored = f"`{Path(requests['file']).name}` ({requests['examples']} hand-written messages in families never trained on)"
    if requests["has_heads"]:
        thresholds = requests["thresholds"]
        lines += [
            f"Two sigmoid outputs on the same encoder pass as the intents (logits 6 and 7), scored on {scored} one "
            f"message per call, beside the rules (`preprocessing/phrases.py` PhraseDetector) on the same rows. "
            f"Thresholds from the manifest: save_request {thresholds['save_request']:.4f}, recall_request "
            f"{thresholds['recall_request']:.4f} ({manifest.get('request_heads_threshold_rule', '')}). They were "
            "chosen on this split, so its model figures are optimistic; the held-out test split scores them once.",
        ]
    else:
        lines += [f"This model has no request heads (six outputs); only the rules are scored, on {scored}."]
    lines += [
        "",
        "A hard negative is a negative for that head whose text holds one of its cue words (`request_data.py`), "
        "e.g. \"remember to close the cursor\" for save_request.",
        "",
        "| head | scored | positives | recall % | precision % | F1 % | false-positive rate % | hard-negative FPR % |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for head in REQUEST_HEADS:
        lines += _head_rows(requests, head)
    if not requests["has_heads"]:
        return lines
    plain = requests["save_fires_on_plain_intent_test"]
    lines += ["", f"On the {plain['messages']} intent-test messages with no save cue word at all, the save head fires on "
                  f"{plain['fired']}.", ""]
    lines += ["Latency on these rows, one message, 1 thread: model (intent + both heads) p50 / p95 "
              f"{requests['model_latency_ms']['p50']:.2f} / {requests['model_latency_ms']['p95']:.2f} ms; rules "
              f"{requests['rules_latency_ms']['p50']:.2f} / {requests['rules_latency_ms']['p95']:.2f} ms."]
    latency = manifest.get("metrics", {}).get("latency_vs_baseline")
    if latency:
        lines += ["", f"Against the previous six-output model (same test messages, interleaved, {latency['samples']} "
                      "calls each, measured at export): "
                      f"before p50 / p95 {latency['before']['p50']:.2f} / {latency['before']['p95']:.2f} ms, "
                      f"with heads {latency['after']['p50']:.2f} / {latency['after']['p95']:.2f} ms, median paired "
                      f"difference {latency['median_paired_difference_ms']:+.3f} ms."]
    lines += ["", "### Errors by family", "", "| family | rows | save model | save rules | recall model | recall rules |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    model, rules = requests["model"], requests["rules"]
    for family, info in model["save_request"]["families"].items():
        cells = [model["save_request"]["families"][family]["errors"], rules["save_request"]["families"][family]["errors"],
                 model["recall_request"]["families"][family]["errors"],
                 rules["recall_request"]["families"][family]["errors"]]
        if any(cells):
            lines.append(f"| {family} | {info['examples']} | " + " | ".join(str(c) for c in cells) + " |")
    for head in REQUEST_HEADS:
        errors = model[head]["errors"]
        if errors:
            lines += ["", f"Model errors on {head} ({len(errors)}; gold in the second column):", "",
                      "| text | gold | family |", "| --- | --- | --- |"]
            for error in errors:
                text = error["text"].replace("|", "\\|").replace("\n", " ")
                lines.append(f"| {text[:120]} | {'yes' if error['gold'] else 'no'} | {error['family']} |")
    return lines

