"""The intent model's save/recall request heads: new examples per form, hard negatives, and the six-output fallback."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from preprocessing.intent_model import MODEL_FILE, TOKENIZER_FILE, IntentModel
from preprocessing.intent_rules import INTENTS
from preprocessing.registry import MODELS_DIR_ENV, ModelUnavailable, models_dir, sha256_of, verified_model

DATA = Path(__file__).resolve().parent.parent / "models" / "intent" / "data"
SIX_OUTPUT_MODEL = Path(__file__).resolve().parent / "data" / "intent" / "six_output_model.onnx"

# Written for this test; test_examples_are_new_to_the_model checks none is in the model's data. The model may miss
# one per group, and two of the seven save requests: the save head's threshold is set for at most 2 % false positives
# on requests_val, and 3 % on its many hard negatives, and that costs recall (0.957 there).
SAVE_REQUESTS = [
    "Store this for later: the VPN config lives in ~/work/vpn/office.ovpn",
    "pls log that my passport expires in march 2029",
    "for future reference, the grafana admin user is ops-admin",
    "Could you keep a note that Tomasz is the on-call lead for payments?",
    "The wifi password at the cabin is bluefern42, please save that.",
    "noting for later: the invoice template sits in the shared drive under finance/templates",
    "Record that we pay the cleaner every second friday.",
]
HARD_NEGATIVES = [
    "keep in mind the API paginates at 50 items when you write the loop",
    "remember to await the promise inside that helper",
    "save the chart as an SVG so it scales on retina screens",
    "log the response body before the retry so we can debug it",
    "can you store the parsed rows in a dict keyed by user id?",
    "I keep forgetting to stretch after my runs",
]
PLAIN_STATEMENTS = [
    "our staging cluster runs on three t3.large nodes",
    "my daughter starts swimming lessons on wednesdays",
    "We decided to move the retro to thursday afternoons",
    "I prefer short commit messages in the imperative mood",
    "how do I undo the last git commit without losing my changes?",
]
RECALL_REQUESTS = [
    "what did I tell you about my sister's wedding date?",
    "do you still have the name of the plumber I mentioned?",
    "remind me which port we put the metrics exporter on",
    "what have you got stored about my work schedule?",
    "did i ever tell you which dentist i go to",
]


def _key(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


@pytest.fixture(scope="module")
def model() -> IntentModel:
    return IntentModel.from_registry()


def test_examples_are_new_to_the_model():
    seen = {_key(json.loads(line)["text"]) for path in DATA.glob("*.jsonl")
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    ours = SAVE_REQUESTS + HARD_NEGATIVES + PLAIN_STATEMENTS + RECALL_REQUESTS
    assert not [text for text in ours if _key(text) in seen]


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _scored_heldout_rows() -> list[dict]:
    """The request-data lines made from the held-out splits already scored (models/intent/request_data.py)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("cortexd_request_data", DATA.parent / "request_data.py")
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    assert all(path.is_file() for path in module.SCORED_HELDOUT) and module.HELDOUT[0].is_file()
    assert not set(module.SCORED_HELDOUT) & set(module.HELDOUT)  # the split scored now never trains
    return [json.loads(line) for line in module.scored_heldout_lines()]


def test_request_splits_are_whole_families_of_the_handwritten_files():
    train, val = _rows("requests_train.jsonl"), _rows("requests_val.jsonl")
    source = _rows("requests_handwritten.jsonl")
    split_too = (_rows("requests_added_2.jsonl") + _scored_heldout_rows() + _rows("requests_composed.jsonl")
                 + _rows("requests_contrasts.jsonl") + _rows("requests_contrasts_2.jsonl") + _rows("requests_added_3.jsonl"))
    added = _rows("requests_added.jsonl")  # train only
    assert not {r["family"] for r in train} & {r["family"] for r in val}
    assert len({r["family"] for r in source} | {r["family"] for r in added} | {r["family"] for r in split_too}) == \
        len({r["family"] for r in source}) + len({r["family"] for r in added}) + len({r["family"] for r in split_too})
    assert sorted(map(json.dumps, train + val)) == sorted(map(json.dumps, source + added + split_too))
    assert {json.dumps(r) for r in added} <= {json.dumps(r) for r in train}
    assert 0.10 <= len(val) / len(source + split_too) <= 0.22  # request_data.VAL_PERCENT of the families


def test_the_composed_rows_are_what_compose_requests_writes():
    import importlib.util
    import sys

    sys.path.insert(0, str(DATA.parent))  # compose_requests imports request_data as its scripts do
    try:
        spec = importlib.util.spec_from_file_location("cortexd_compose_requests", DATA / "compose_requests.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(DATA.parent))
    composed = module.compose()
    assert composed == _rows("requests_composed.jsonl")
    assert all(r["family"].startswith("cmp-") for r in composed) and len({r["text"].lower() for r in composed}) == \
        len(composed)


def test_manifest_names_both_heads_after_the_six_intents(model):
    manifest = verified_model("intent").manifest
    assert manifest["labels"] == list(INTENTS)
    heads = manifest["request_heads"]
    assert {name: head["index"] for name, head in heads.items()} == {"save_request": 6, "recall_request": 7}
    assert all(0.0 < head["threshold"] < 1.0 for head in heads.values())
    assert model.request_heads["save_request"].threshold == heads["save_request"]["threshold"]


def _misses(model, texts, head, expected):
    readings = [model.classify_with_requests(text) for text in texts]
    return [(t, round(getattr(r, f"{head}_probability"), 3)) for t, r in zip(texts, readings)
            if getattr(r, head) is not expected]


@pytest.mark.parametrize("texts, head, expected", [
    (SAVE_REQUESTS, "save_request", True),
    (HARD_NEGATIVES, "save_request", False),
    (PLAIN_STATEMENTS, "save_request", False),
    (RECALL_REQUESTS, "recall_request", True),
    (SAVE_REQUESTS + HARD_NEGATIVES + PLAIN_STATEMENTS, "recall_request", False),
    (RECALL_REQUESTS, "save_request", False),
], ids=["save", "save-hard-negatives", "save-plain-statements", "recall", "recall-negatives", "recall-not-save"])
def test_request_heads(model, texts, head, expected):
    allowed = 2 if texts is SAVE_REQUESTS else 1
    assert len(_misses(model, texts, head, expected)) <= allowed, _misses(model, texts, head, expected)


def test_intent_part_is_what_classify_returns(model):
    text = "for future reference, the grafana admin user is ops-admin"
    reading = model.classify_with_requests(text)
    assert reading.intent == model.classify(text)
    assert 0.0 <= reading.save_request_probability <= 1.0
    assert reading.save_request == (reading.save_request_probability >= model.request_heads["save_request"].threshold)
    assert model.classify_with_requests_batch([]) == []


def _registry_with(tmp_path, onnx_path: Path, manifest_edit) -> Path:
    directory = tmp_path / "intent"
    directory.mkdir()
    shutil.copyfile(onnx_path, directory / MODEL_FILE)
    shutil.copyfile(models_dir() / "intent" / TOKENIZER_FILE, directory / TOKENIZER_FILE)
    manifest = json.loads((models_dir() / "intent" / "manifest.json").read_text())
    manifest["files"][MODEL_FILE] = {"sha256": sha256_of(directory / MODEL_FILE),
                                     "bytes": (directory / MODEL_FILE).stat().st_size}
    manifest_edit(manifest)
    (directory / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


def test_a_six_output_model_without_heads_still_loads_and_reads_none(tmp_path, monkeypatch):
    monkeypatch.setenv(MODELS_DIR_ENV, str(_registry_with(tmp_path, SIX_OUTPUT_MODEL,
                                                         lambda m: m.pop("request_heads", None))))
    old = IntentModel.from_registry()
    assert old.request_heads == {}
    reading = old.classify_with_requests("please save that my locker code is 4411")
    assert reading.intent.intent in INTENTS and reading.intent == old.classify("please save that my locker code is 4411")
    assert (reading.save_request, reading.save_request_probability) == (None, None)
    assert (reading.recall_request, reading.recall_request_probability) == (None, None)


def test_heads_in_the_manifest_must_match_the_model_outputs(tmp_path, monkeypatch):
    # Eight outputs but a manifest that names no heads: refused rather than read with the wrong softmax width.
    monkeypatch.setenv(MODELS_DIR_ENV, str(_registry_with(tmp_path, models_dir() / "intent" / MODEL_FILE,
                                                         lambda m: m.pop("request_heads"))))
    with pytest.raises(ModelUnavailable, match="outputs"):
        IntentModel.from_registry()


def test_a_head_threshold_keeps_both_false_positive_rates_under_their_caps():
    """The cut the export sets: best val recall at FPR <= 0.02 overall and <= 0.03 on hard negatives."""
    import importlib
    import sys

    sys.path.insert(0, str(DATA.parent))
    try:
        scoring = importlib.import_module("request_scoring")
    finally:
        sys.path.remove(str(DATA.parent))
    positives = [0.99, 0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65]
    easy_negatives = [0.05] * 100
    hard_negatives = [0.88] + [0.1] * 9  # one hard negative scores above most positives
    gold = [True] * len(positives) + [False] * (len(easy_negatives) + len(hard_negatives))
    probs = positives + easy_negatives + hard_negatives
    hard = [False] * (len(positives) + len(easy_negatives)) + [True] * len(hard_negatives)

    overall_only = scoring.choose_threshold(gold, probs)
    both = scoring.choose_threshold(gold, probs, hard=hard)

    assert overall_only < 0.65  # 1 false positive in 110 negatives is within 0.02: every positive is taken
    assert 0.88 < both <= 0.9  # 1 in 10 hard negatives is over 0.03: the cut stays above that negative
    assert scoring.choose_threshold(gold, probs, hard=hard, max_hard_fpr=0.1) == overall_only
