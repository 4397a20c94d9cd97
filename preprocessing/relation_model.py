"""How a new text relates to an existing memory, from a fine-tuned MiniLM cross-encoder (int8 ONNX); no torch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from preprocessing.onnx_text import cpu_session, model_inputs, softmax_rows, wordpiece_tokenizer
from preprocessing.registry import ModelUnavailable, VerifiedModel, verified_model

RELATION_MODEL = "relation"
MODEL_FILE = "model_int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
# The model's output order; models/relation/data/DATASET.md defines each label.
RELATIONS = ("DUPLICATE", "UPDATE", "PARTIAL_UPDATE", "COMPATIBLE", "UNRELATED")
MAX_TOKENS = 96  # both texts together, [CLS] and two [SEP] included; the longest training pair is 80
# Truncation keeps only the first word pieces anyway; cutting each text first bounds tokenisation time on a
# pasted log or document, so the work per pair has a fixed ceiling.
_MAX_CHARS = 1000


@dataclass(frozen=True)
class Relation:
    """The most likely relation of (existing, new), its probability, and the probability of every label."""

    label: str
    confidence: float
    probabilities: dict[str, float]


class RelationModel:
    """classify([(existing, new), ...]) -> one Relation per pair, all pairs in one onnxruntime call."""

    def __init__(self, model_path: Path, tokenizer_path: Path, labels: Sequence[str] = RELATIONS,
                 threads: int = 1, max_tokens: int = MAX_TOKENS) -> None:
        self._session = cpu_session(model_path, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.labels = tuple(labels)
        width = self._session.get_outputs()[0].shape[-1]
        if width != len(self.labels):
            raise ModelUnavailable(f"{RELATION_MODEL}: {model_path} has {width} outputs but {len(self.labels)} labels")
        self._tokenizer = wordpiece_tokenizer(tokenizer_path, max_tokens)

    @classmethod
    def load(cls, threads: int = 1) -> "RelationModel":
        """The registry's models/relation, after every file matched the sha256 in its manifest."""
        model: VerifiedModel = verified_model(RELATION_MODEL)
        labels = model.manifest.get("labels")
        if not labels or set(labels) != set(RELATIONS):
            raise ModelUnavailable(f"{RELATION_MODEL}: manifest labels {labels} are not the relations {list(RELATIONS)}")
        return cls(model.file(MODEL_FILE), model.file(TOKENIZER_FILE), labels, threads)

    def tokenize(self, pairs: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
        """The model's input arrays: existing as segment A, new as segment B, padded to the longest pair."""
        return model_inputs(self._tokenizer, [(a[:_MAX_CHARS], b[:_MAX_CHARS]) for a, b in pairs], self._inputs)

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """(n, labels) softmax probabilities, float64 so each row sums to 1 within 1e-12."""
        if not pairs:
            return np.zeros((0, len(self.labels)), dtype=np.float64)
        return softmax_rows(self._session.run(None, self.tokenize(pairs))[0])

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Relation]:
        # Int8 activations are quantised per call, so a pair's probabilities can shift slightly with its
        # batch-mates; a pair classified alone always gets the same answer.
        relations = []
        for row in self.probabilities(pairs):
            best = int(row.argmax())
            relations.append(Relation(self.labels[best], float(row[best]),
                                      {label: float(p) for label, p in zip(self.labels, row)}))
        return relations
