"""Whether a stored statement states another person's or group's own fact, from a fine-tuned MiniLM classifier (int8 ONNX)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from preprocessing.onnx_text import cpu_session, model_inputs, softmax_rows, wordpiece_tokenizer
from preprocessing.registry import ModelUnavailable, VerifiedModel, verified_model

HOLDER_MODEL = "holder"
MODEL_FILE = "model_int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
# The model's output order; models/holder/data/DATASET.md defines each label. OTHER: the fact belongs to a particular
# other person or group ("legal moved down to floor 2"); USER: the user's own, a shared or an impersonal fact, or
# something another party did to the user's things ("The committee gave me plot 22").
LABELS = ("USER", "OTHER")
MAX_TOKENS = 64  # one statement; the longest training statement is well under this
_MAX_CHARS = 600


class HolderModel:
    """others(texts) -> whether each text states another's own fact, one onnxruntime call a text."""

    def __init__(self, model_path: Path, tokenizer_path: Path, threads: int = 1, threshold: float = 0.5,
                 version: str = "") -> None:
        self._session = cpu_session(model_path, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        width = self._session.get_outputs()[0].shape[-1]
        if width != len(LABELS):
            raise ModelUnavailable(f"{HOLDER_MODEL}: {model_path} has {width} outputs but {len(LABELS)} labels")
        self._tokenizer = wordpiece_tokenizer(tokenizer_path, MAX_TOKENS)
        self.threshold = threshold  # the OTHER probability at which a text counts as another's (chosen on val)
        self.version = version  # "<model file sha256>@<threshold>": what a kept reading names (its verdicts' source)

    @classmethod
    def load(cls, threads: int = 1) -> "HolderModel":
        """The registry's models/holder, after every file matched the sha256 in its manifest."""
        model: VerifiedModel = verified_model(HOLDER_MODEL)
        labels = model.manifest.get("labels")
        if tuple(labels or ()) != LABELS:
            raise ModelUnavailable(f"{HOLDER_MODEL}: manifest labels {labels} are not {list(LABELS)}")
        threshold = model.manifest.get("threshold")
        if not isinstance(threshold, (int, float)) or not 0 < threshold < 1:
            raise ModelUnavailable(f"{HOLDER_MODEL}: manifest threshold {threshold!r} is not a probability")
        sha256 = model.manifest["files"][MODEL_FILE]["sha256"]
        return cls(model.file(MODEL_FILE), model.file(TOKENIZER_FILE), threads, float(threshold),
                   f"{sha256}@{float(threshold)}")

    def other_probabilities(self, texts: Sequence[str]) -> list[float]:
        """The probability that each text states another's own fact (OTHER), one text a call: int8 activations are
        scaled per call, so a text read in a batch can read otherwise beside a longer one (4 of 400 val statements
        crossed the threshold), and a reading is kept with its memory (memory_daemon/memory/holder_readings.py)."""
        other = LABELS.index("OTHER")
        return [float(softmax_rows(self._session.run(None, model_inputs(self._tokenizer, [text[:_MAX_CHARS]],
                                                                         self._inputs))[0])[0, other])
                for text in texts]

    def others(self, texts: Sequence[str]) -> list[bool]:
        """Whether each text states another person's or group's own fact, at the manifest's threshold."""
        return [p >= self.threshold for p in self.other_probabilities(texts)]
