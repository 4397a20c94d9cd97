"""Whether a stored memory is about what a query asks or a task needs, from a fine-tuned MiniLM cross-encoder (int8 ONNX)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from preprocessing.context_gate import ContextGate
from preprocessing.registry import ModelUnavailable, VerifiedModel, verified_model
from preprocessing.relation_model import MODEL_FILE, TOKENIZER_FILE, RelationModel

RELEVANCE_MODEL = "relevance"
# The model's output order; models/relevance/data/DATASET.md defines each label.
LABELS = ("OFF_TOPIC", "RELEVANT")
# The rule the model backs up: compile_context counts a hit with no word of the task in common on topic from this
# cosine (memory_daemon/context/preflight.py); `cortexd eval relevance` scores the rule beside the model.
MIN_DENSE_ON_TOPIC = 0.45


class RelevanceModel:
    """relevance(query, texts) -> the probability that each text is RELEVANT to the query, all in one call.

    The query is segment A and the memory segment B, as in training; the pair reader is the relation model's."""

    def __init__(self, model_path: Path, tokenizer_path: Path, threads: int = 1, threshold: float = 0.5,
                 gate: ContextGate | None = None) -> None:
        self._pairs = RelationModel(model_path, tokenizer_path, LABELS, threads)
        self._relevant = LABELS.index("RELEVANT")
        self.threshold = threshold  # the probability at which a text counts as on topic (chosen on val)
        self.gate = gate  # compile_context's gate over this model's reading and the hit's cosine, when fitted

    @classmethod
    def load(cls, threads: int = 1) -> "RelevanceModel":
        """The registry's models/relevance, after every file matched the sha256 in its manifest."""
        model: VerifiedModel = verified_model(RELEVANCE_MODEL)
        labels = model.manifest.get("labels")
        if tuple(labels or ()) != LABELS:
            raise ModelUnavailable(f"{RELEVANCE_MODEL}: manifest labels {labels} are not {list(LABELS)}")
        threshold = model.manifest.get("threshold")
        if not isinstance(threshold, (int, float)) or not 0 < threshold < 1:
            raise ModelUnavailable(f"{RELEVANCE_MODEL}: manifest threshold {threshold!r} is not a probability")
        try:
            gate = ContextGate.from_manifest(model.manifest.get("context_gate"))
        except ValueError as error:
            raise ModelUnavailable(f"{RELEVANCE_MODEL}: manifest {error}") from None
        return cls(model.file(MODEL_FILE), model.file(TOKENIZER_FILE), threads, float(threshold), gate)

    def relevance(self, query: str, texts: Sequence[str]) -> list[float]:
        return [float(p) for p in self._pairs.probabilities([(query, t) for t in texts])[:, self._relevant]]

    def on_topic(self, query: str, texts: Sequence[str], dense: Sequence[float] | None = None) -> list[bool]:
        """Whether each text is about what the query asks: by the context gate (the model's reading and the text's
        cosine to the query, `dense`) when one is fitted and the cosines are given, else by the model's threshold."""
        return self.verdicts(self.relevance(query, texts), dense)

    def verdicts(self, probabilities: Sequence[float], dense: Sequence[float] | None = None) -> list[bool]:
        """on_topic's reading of probabilities the model gave."""
        if self.gate is None or dense is None:
            return [p >= self.threshold for p in probabilities]
        return [self.gate.admits(p, d) for p, d in zip(probabilities, dense, strict=True)]

    def probabilities(self, pairs: Sequence[tuple[str, str]]):
        """(n, 2) probabilities of (query, memory) pairs, in LABELS order (training and evaluation use this)."""
        return self._pairs.probabilities(pairs)
