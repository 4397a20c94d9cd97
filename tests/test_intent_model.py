"""Int8 ONNX intent model: sha256-checked loading, clear examples per label, and well-formed probabilities."""

from __future__ import annotations

import math
import shutil

import pytest

from preprocessing.intent_model import MODEL_FILE, IntentModel
from preprocessing.intent_rules import INTENTS, IntentPrediction
from preprocessing.registry import MODELS_DIR_ENV, ModelUnavailable, models_dir, sha256_of, verified_model

# Clear cases written for this test, not taken from the dataset; the model may miss one per class.
EXAMPLES: dict[str, list[str]] = {
    "SAVE_PREFERENCE": [
        "I prefer pnpm over npm",
        "I really like dark mode in every editor",
        "My favourite language is Rust",
        "Please keep your answers short, I don't like long explanations",
        "I hate meetings before 10am",
        "I'd rather use tabs than spaces",
    ],
    "SAVE_DECISION": [
        "We decided to use Postgres for the billing service",
        "Let's go with Redis for the session cache",
        "We're going with Vite instead of webpack",
        "Final decision: the mobile app will be written in Flutter",
        "I've decided to take the job in Berlin",
        "We chose Stripe over Adyen for payments",
    ],
    "SAVE_FACT": [
        "My wife's name is Anna",
        "Our API runs on Kubernetes in eu-west-1",
        "The staging database is on port 5433",
        "I work at Acme as a data engineer",
        "My birthday is on June 12",
        "I'm allergic to peanuts",
    ],
    "RECALL_INFO": [
        "What did I say about the database migration?",
        "Do you remember my wife's name?",
        "Remind me what we decided about caching",
        "What's my staging db port again?",
        "Which editor did I tell you I prefer?",
        "Have I told you about my allergies?",
    ],
    "UPDATE_INFO": [
        "Actually, the staging db moved to port 5434",
        "I no longer use vim, I switched to Helix",
        "We switched from Jenkins to GitHub Actions last month",
        "Correction: Priya handles payments now, not billing",
        "I don't drink coffee anymore",
        "My new address is 12 Rose Street",
    ],
    "QUESTION": [
        "How do I reverse a list in Python?",
        "Can you write a regex that matches email addresses?",
        "What is the difference between TCP and UDP?",
        "Explain how consistent hashing works",
        "Why does my docker build keep failing?",
        "Thanks, that was really helpful!",
    ],
}


@pytest.fixture(scope="module")
def model() -> IntentModel:
    return IntentModel.from_registry()


def test_loads_from_the_registry_after_its_sha256_matched(model):
    manifest = verified_model("intent").manifest
    assert list(model.labels) == manifest["labels"] == list(INTENTS)
    assert sha256_of(models_dir() / "intent" / MODEL_FILE) == manifest["files"][MODEL_FILE]["sha256"]
    assert manifest["files"][MODEL_FILE]["bytes"] <= 30_000_000


def _copy_of_intent_model(tmp_path):
    # The dataset and the report are not part of the artifact.
    shutil.copytree(models_dir() / "intent", tmp_path / "intent", ignore=shutil.ignore_patterns("data", "*.md"))
    return tmp_path / "intent"


def test_a_corrupted_model_is_refused(tmp_path, monkeypatch):
    copy = _copy_of_intent_model(tmp_path)
    data = bytearray((copy / MODEL_FILE).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (copy / MODEL_FILE).write_bytes(bytes(data))
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(ModelUnavailable, match="corrupt"):
        IntentModel.from_registry()


def test_a_missing_tokenizer_is_refused(tmp_path, monkeypatch):
    copy = _copy_of_intent_model(tmp_path)
    (copy / "tokenizer.json").unlink()
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path))
    with pytest.raises(ModelUnavailable, match="missing"):
        IntentModel.from_registry()


def test_labels_must_match_the_model_outputs():
    verified = verified_model("intent")
    with pytest.raises(ModelUnavailable):
        IntentModel(verified.file(MODEL_FILE), verified.file("tokenizer.json"), INTENTS[:5])


@pytest.mark.parametrize("label", INTENTS)
def test_clear_examples(model, label):
    texts = EXAMPLES[label]
    predictions = [model.classify(text) for text in texts]
    wrong = [(text, p.intent, round(p.confidence, 2)) for text, p in zip(texts, predictions) if p.intent != label]
    assert len(wrong) <= 1, wrong


def test_every_label_has_six_examples():
    assert set(EXAMPLES) == set(INTENTS)
    assert all(len(texts) == 6 for texts in EXAMPLES.values())


@pytest.mark.parametrize(
    "text", ["", "   ", "I prefer tabs", "What did I say?", "?!?", "naïve café — ünïcödé 🙂", "x" * 10_000,
             "word " * 500],
)
def test_probabilities_are_a_distribution(model, text):
    prediction = model.classify(text, prior_turns=["Should we use Redis or Memcached?"])
    assert isinstance(prediction, IntentPrediction)
    assert prediction.source == "model"
    assert list(prediction.all_probs) == list(INTENTS)
    assert math.isclose(sum(prediction.all_probs.values()), 1.0, abs_tol=1e-9)
    assert all(0.0 <= p <= 1.0 for p in prediction.all_probs.values())
    assert prediction.confidence == max(prediction.all_probs.values())
    assert prediction.all_probs[prediction.intent] == prediction.confidence


def test_batch_gives_one_distribution_per_text(model):
    texts = [t for texts in EXAMPLES.values() for t in texts[:2]]
    predictions = model.classify_batch(texts)
    assert len(predictions) == len(texts)
    for prediction in predictions:
        assert prediction.source == "model"
        assert math.isclose(sum(prediction.all_probs.values()), 1.0, abs_tol=1e-9)
    assert model.classify_batch([]) == []


def test_deterministic(model):
    assert model.classify("Let's go with Redis") == model.classify("Let's go with Redis")
