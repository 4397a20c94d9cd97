"""Which of the memories a statement is surely read as updating it replaces: a conditional logit (models/update_choice)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from preprocessing.bounds import DEDUP_CHARS, text_prefix
from preprocessing.dedup import DedupCandidate, announces_change, shares_topic
from preprocessing.registry import ModelUnavailable, verified_model
from preprocessing.stopwords import STOPWORDS
from preprocessing.terms import salient_keys

UPDATE_CHOICE_MODEL = "update_choice"
WEIGHTS_FILE = "weights.json"
# One score per candidate, from what a store of any size knows about the pair; each count is capped, so one long
# text cannot outweigh the rest.
FEATURES = ("cosine", "candidate_worded_as_change", "shares_topic", "shared_words", "shared_names")
MAX_SHARED_WORDS, MAX_SHARED_NAMES = 4, 3
_CONTENT_WORD = re.compile(r"[a-z0-9]+")
MIN_WORD_CHARS = 3


def content_words(text: str) -> set[str]:
    """Lower-case words of three or more characters that are not stopwords, from the text's first DEDUP_CHARS."""
    return {w for w in _CONTENT_WORD.findall(text_prefix(text, DEDUP_CHARS).lower())
            if len(w) >= MIN_WORD_CHARS and w not in STOPWORDS}


def choice_features(new_text: str, candidate: DedupCandidate) -> tuple[float, ...]:
    """FEATURES of (new text, a memory it is read as updating), in that order."""
    shared_words = len(content_words(new_text) & content_words(candidate.text))
    shared_names = len(salient_keys(new_text) & salient_keys(candidate.text))
    return (candidate.similarity, float(announces_change(candidate.text)), float(shares_topic(new_text, candidate.text)),
            float(min(shared_words, MAX_SHARED_WORDS)), float(min(shared_names, MAX_SHARED_NAMES)))


class UpdateChooser:
    """choose(new_text, candidates) -> the candidate with the highest linear score of its choice_features."""

    def __init__(self, weights: dict[str, float]) -> None:
        missing = [name for name in FEATURES if name not in weights]
        if missing or not all(math.isfinite(float(weights[name])) for name in FEATURES if name in weights):
            raise ModelUnavailable(f"{UPDATE_CHOICE_MODEL}: weights need finite values for {list(FEATURES)}; "
                                   f"missing {missing}")
        self.weights = tuple(float(weights[name]) for name in FEATURES)

    @classmethod
    def load(cls) -> "UpdateChooser":
        """The registry's models/update_choice, after its files matched the sha256 in its manifest."""
        import json

        model = verified_model(UPDATE_CHOICE_MODEL)
        try:
            weights = json.loads(model.file(WEIGHTS_FILE).read_text())["weights"]
        except (ValueError, KeyError, TypeError) as error:
            raise ModelUnavailable(f"{UPDATE_CHOICE_MODEL}: {WEIGHTS_FILE} is not a weights file: {error}") from error
        return cls(weights)

    def score(self, new_text: str, candidate: DedupCandidate) -> float:
        return sum(w * x for w, x in zip(self.weights, choice_features(new_text, candidate), strict=True))

    def choose(self, new_text: str, candidates: Sequence[DedupCandidate]) -> DedupCandidate:
        """The likeliest of the candidates to be what the new text replaces (the first on a tie)."""
        if not candidates:
            raise ValueError("choose() needs at least one candidate")
        if len(candidates) == 1:
            return candidates[0]
        scores = [self.score(new_text, c) for c in candidates]
        return candidates[scores.index(max(scores))]
