"""Which of two memories on one subject answers a question now, from a fine-tuned MiniLM cross-encoder (int8 ONNX)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from preprocessing.registry import ModelUnavailable, VerifiedModel, verified_model
from preprocessing.relation_model import MODEL_FILE, TOKENIZER_FILE, RelationModel

PRECEDENCE_MODEL = "precedence"
# The partial-update reader: the same input and labels, trained only on a memory beside a newer one that changed one
# of its details (models/partial/REPORT.md); NEWER when the question asks the changed detail.
PARTIAL_MODEL = "partial"
# The model's output order; models/precedence/data/DATASET.md defines each label.
LABELS = ("OLDER", "NEWER")
MAX_TOKENS = 128  # the question, then both memories, [CLS] and three [SEP] included


def memories_text(older: str, newer: str) -> str:
    """Segment B: the two memories in time order, the older first, as in training."""
    return f"{older} [SEP] {newer}"


class PrecedenceModel:
    """newer_answers(question, [(older, newer), ...]) -> the probability that the newer memory of each pair, rather
    than the older one, answers the question now: it changed what the older one said, or the older one is about
    something else. All pairs in one call; the question is segment A and the two memories segment B. verdicts() says
    which, only where the model is sure: at `sure` or more either way (chosen on val; manifest "sure")."""

    def __init__(self, model_path: Path, tokenizer_path: Path, threads: int = 1, sure: float = 0.5,
                 lazy: bool = False) -> None:
        self._open = lambda: RelationModel(model_path, tokenizer_path, LABELS, threads, MAX_TOKENS)
        # lazy: the ONNX session is opened on the first reading, not here (a model few stores need holds no memory
        # until one does: the partial-update reader, about 44 MB)
        self._pairs: RelationModel | None = None if lazy else self._open()
        self._opening = threading.Lock()
        self._newer = LABELS.index("NEWER")
        self.sure = sure

    @classmethod
    def load(cls, threads: int = 1, name: str = PRECEDENCE_MODEL, lazy: bool = False) -> "PrecedenceModel":
        """The registry's models/<name> (the precedence model, or the partial-update reader), after every file
        matched the sha256 in its manifest; `lazy` opens its session on the first reading."""
        model: VerifiedModel = verified_model(name)
        labels = model.manifest.get("labels")
        if tuple(labels or ()) != LABELS:
            raise ModelUnavailable(f"{name}: manifest labels {labels} are not {list(LABELS)}")
        sure = model.manifest.get("sure")
        if not isinstance(sure, (int, float)) or not 0.5 <= sure < 1:
            raise ModelUnavailable(f"{name}: manifest sure {sure!r} is not a probability in [0.5, 1)")
        return cls(model.file(MODEL_FILE), model.file(TOKENIZER_FILE), threads, float(sure), lazy)

    def newer_answers(self, question: str, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return self.newer_probabilities([(question, older, newer) for older, newer in pairs])

    def newer_probabilities(self, triples: Sequence[tuple[str, str, str]]) -> list[float]:
        """The probability of NEWER for each (question, older, newer), all in one call (evaluation sends a question
        a pair)."""
        inputs = [(question, memories_text(older, newer)) for question, older, newer in triples]
        return [float(p) for p in self.probabilities(inputs)[:, self._newer]]

    def verdicts(self, question: str, pairs: Sequence[tuple[str, str]]) -> list[bool | None]:
        """For each (older, newer) pair: True when the model is sure the newer answers the question now, False when
        it is sure the older does, None when it is not sure."""
        return [verdict(p, self.sure) for p in self.newer_answers(question, pairs)]

    def probabilities(self, inputs: Sequence[tuple[str, str]]):
        """(n, 2) probabilities of (question, memories_text) inputs, in LABELS order (evaluation uses this)."""
        if self._pairs is None:
            with self._opening:
                if self._pairs is None:
                    self._pairs = self._open()
        return self._pairs.probabilities(inputs)


def verdict(newer_probability: float, sure: float) -> bool | None:
    """True (the newer answers), False (the older) or None (not sure) for a probability that the newer answers."""
    if newer_probability >= sure:
        return True
    return False if newer_probability <= 1 - sure else None
