"""Intent classification, plus save/recall request heads, with the fine-tuned MiniLM int8 ONNX model; no torch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from preprocessing.bounds import INTENT_CHARS, text_prefix
from preprocessing.intent_rules import INTENTS, IntentPrediction
from preprocessing.onnx_text import cpu_session, model_inputs, softmax_rows, wordpiece_tokenizer
from preprocessing.registry import ModelUnavailable, VerifiedModel, verified_model

INTENT_MODEL = "intent"
MODEL_FILE = "model_int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
MAX_TOKENS = 128
SAVE_REQUEST = "save_request"
RECALL_REQUEST = "recall_request"
REQUEST_HEADS = (SAVE_REQUEST, RECALL_REQUEST)


@dataclass(frozen=True)
class RequestHead:
    """One sigmoid output of the model: which logit it is and the probability from which it counts as a request."""

    index: int
    threshold: float


@dataclass(frozen=True)
class IntentAndRequests:
    """A message's intent and whether it explicitly asks to store (save_request) or to recall (recall_request)
    something; the request fields are None when the model has no such head (a six-output model)."""

    intent: IntentPrediction
    save_request_probability: float | None
    save_request: bool | None
    recall_request_probability: float | None
    recall_request: bool | None


def request_heads_of(manifest: Mapping) -> dict[str, RequestHead]:
    """The manifest's "request_heads" ({} for a model built before them)."""
    heads = manifest.get("request_heads") or {}
    unknown = set(heads) - set(REQUEST_HEADS)
    if unknown:
        raise ModelUnavailable(f"{INTENT_MODEL}: unknown request heads {sorted(unknown)} in the manifest")
    return {name: RequestHead(int(h["index"]), float(h["threshold"])) for name, h in heads.items()}


class IntentModel:
    """classify(text) -> IntentPrediction with softmax probabilities over the manifest's labels; source "model".
    classify_with_requests(text) adds the save/recall request heads that share the same encoder pass."""

    def __init__(self, model_path: Path, tokenizer_path: Path, labels: Sequence[str], threads: int = 1,
                 request_heads: Mapping[str, RequestHead] | None = None) -> None:
        self._session = cpu_session(model_path, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.labels = tuple(labels)
        self.request_heads = dict(request_heads or {})
        width = self._session.get_outputs()[0].shape[-1]
        expected = len(self.labels) + len(self.request_heads)
        indices = sorted(h.index for h in self.request_heads.values())
        if width != expected or indices != list(range(len(self.labels), expected)):
            raise ModelUnavailable(f"{INTENT_MODEL}: {model_path} has {width} outputs but {len(self.labels)} labels "
                                   f"and request heads at {indices}")
        self._tokenizer = wordpiece_tokenizer(tokenizer_path, MAX_TOKENS)

    @classmethod
    def from_registry(cls, threads: int = 1) -> "IntentModel":
        model: VerifiedModel = verified_model(INTENT_MODEL)
        labels = model.manifest.get("labels")
        if not labels or set(labels) != set(INTENTS):
            raise ModelUnavailable(f"{INTENT_MODEL}: manifest labels {labels} are not the intents {list(INTENTS)}")
        return cls(model.file(MODEL_FILE), model.file(TOKENIZER_FILE), labels, threads,
                   request_heads_of(model.manifest))

    def tokenize(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The model's input arrays, padded to the longest text. Truncation keeps only the first 128 word pieces
        anyway; cutting the text first bounds tokenisation time on a pasted log or document."""
        return model_inputs(self._tokenizer, [text_prefix(text, INTENT_CHARS) for text in texts], self._inputs)

    def logits(self, texts: Sequence[str]) -> np.ndarray:
        """(n, outputs) raw float64 logits: the intents first, then any request heads."""
        if not texts:
            return np.zeros((0, len(self.labels) + len(self.request_heads)), dtype=np.float64)
        return self._session.run(None, self.tokenize(texts))[0].astype(np.float64)

    def probabilities(self, texts: Sequence[str]) -> np.ndarray:
        """(n, labels) softmax probabilities, float64 so each row sums to 1 within 1e-12."""
        return softmax_rows(self.logits(texts)[:, :len(self.labels)])

    def classify(self, text: str, prior_turns: Sequence[str] = ()) -> IntentPrediction:
        # prior_turns is accepted for RuleIntentClassifier compatibility; the model reads one message.
        return self.classify_batch([text])[0]

    def classify_batch(self, texts: Sequence[str]) -> list[IntentPrediction]:
        # Int8 activations are quantised per batch, so a message's probabilities can shift
        # slightly with its batch-mates; classify() one message at a time for exact repeatability.
        return [self._intent(row) for row in softmax_rows(self.logits(texts)[:, :len(self.labels)])]

    def classify_with_requests(self, text: str) -> IntentAndRequests:
        return self.classify_with_requests_batch([text])[0]

    def classify_with_requests_batch(self, texts: Sequence[str]) -> list[IntentAndRequests]:
        """Intent and request heads from one encoder pass per batch."""
        logits = self.logits(texts)
        intents = softmax_rows(logits[:, :len(self.labels)])
        results = []
        for row, intent_row in zip(logits, intents):
            fields: dict[str, float | bool | None] = {}
            for name in REQUEST_HEADS:
                head = self.request_heads.get(name)
                probability = float(1.0 / (1.0 + np.exp(-row[head.index]))) if head else None
                fields[f"{name}_probability"] = probability
                fields[name] = probability >= head.threshold if head else None
            results.append(IntentAndRequests(self._intent(intent_row), **fields))
        return results

    def _intent(self, probabilities: np.ndarray) -> IntentPrediction:
        best = int(probabilities.argmax())
        probs = {label: float(p) for label, p in zip(self.labels, probabilities)}
        return IntentPrediction(self.labels[best], float(probabilities[best]), probs, "model")
