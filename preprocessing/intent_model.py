"""Intent classification with the fine-tuned MiniLM as an int8 ONNX model on onnxruntime; no torch at run time."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from preprocessing.bounds import INTENT_CHARS, text_prefix
from preprocessing.intent_rules import INTENTS, IntentPrediction
from preprocessing.onnx_text import cpu_session, model_inputs, wordpiece_tokenizer
from preprocessing.registry import ModelUnavailable, VerifiedModel, verified_model

INTENT_MODEL = "intent"
MODEL_FILE = "model_int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
MAX_TOKENS = 128


class IntentModel:
    """classify(text) -> IntentPrediction with softmax probabilities over the manifest's labels; source "model"."""

    def __init__(self, model_path: Path, tokenizer_path: Path, labels: Sequence[str], threads: int = 1) -> None:
        self._session = cpu_session(model_path, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.labels = tuple(labels)
        width = self._session.get_outputs()[0].shape[-1]
        if width != len(self.labels):
            raise ModelUnavailable(f"{INTENT_MODEL}: {model_path} has {width} outputs but {len(self.labels)} labels")
        self._tokenizer = wordpiece_tokenizer(tokenizer_path, MAX_TOKENS)

    @classmethod
    def from_registry(cls, threads: int = 1) -> "IntentModel":
        model: VerifiedModel = verified_model(INTENT_MODEL)
        labels = model.manifest.get("labels")
        if not labels or set(labels) != set(INTENTS):
            raise ModelUnavailable(f"{INTENT_MODEL}: manifest labels {labels} are not the intents {list(INTENTS)}")
        return cls(model.file(MODEL_FILE), model.file(TOKENIZER_FILE), labels, threads)

    def tokenize(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The model's input arrays, padded to the longest text. Truncation keeps only the first 128 word pieces
        anyway; cutting the text first bounds tokenisation time on a pasted log or document."""
        return model_inputs(self._tokenizer, [text_prefix(text, INTENT_CHARS) for text in texts], self._inputs)

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """(n, labels) softmax probabilities, float64 so each row sums to 1 within 1e-12."""
        if not texts:
            return np.zeros((0, len(self.labels)), dtype=np.float64)
        logits = self._session.run(None, self.tokenize(texts))[0].astype(np.float64)
        logits -= logits.max(axis=1, keepdims=True)
        weights = np.exp(logits)
        return weights / weights.sum(axis=1, keepdims=True)

    def classify(self, text: str, prior_turns: Sequence[str] = ()) -> IntentPrediction:
        # prior_turns is accepted for RuleIntentClassifier compatibility; the model reads one message.
        return self.classify_batch([text])[0]

    def classify_batch(self, texts: Sequence[str]) -> list[IntentPrediction]:
        # Int8 activations are quantised per batch, so a message's probabilities can shift
        # slightly with its batch-mates; classify() one message at a time for exact repeatability.
        predictions = []
        for row in self.probabilities(texts):
            best = int(row.argmax())
            probs = {label: float(p) for label, p in zip(self.labels, row)}
            predictions.append(IntentPrediction(self.labels[best], float(row[best]), probs, "model"))
        return predictions
