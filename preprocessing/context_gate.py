"""Whether compile_context keeps a hit its cosine rule turned away: a logistic gate over the relevance model's reading
and the hit's cosine, fitted on the hits the rule turns away (models/relevance/fit_gate.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# The gate's inputs, in its weights' order: the relevance model's logit for (task, hit), and the hit's cosine to the
# task as the dense signal scored it (0 when the dense signal did not find it: under its floor).
FEATURES = ("relevance_logit", "dense")
PROBABILITY_CLIP = 1e-4  # a probability is read within [clip, 1 - clip]: a logit of at most ±9.2


def relevance_logit(probability: float) -> float:
    probability = min(max(probability, PROBABILITY_CLIP), 1 - PROBABILITY_CLIP)
    return math.log(probability / (1 - probability))


def features(relevance: float, dense: float) -> tuple[float, ...]:
    """A hit's inputs to the gate, in FEATURES order."""
    return relevance_logit(relevance), dense


@dataclass(frozen=True)
class ContextGate:
    weights: tuple[float, ...]
    bias: float
    threshold: float  # the probability from which the gate admits a hit

    @classmethod
    def from_manifest(cls, block: object) -> ContextGate | None:
        """The gate a model manifest's "context_gate" block describes; None when the block is absent. A block that
        does not describe one (other features, a weight that is not a number) is an error naming what is wrong."""
        if block is None:
            return None
        if not isinstance(block, dict):
            raise ValueError(f"context_gate must be an object, got {type(block).__name__}")
        if tuple(block.get("features") or ()) != FEATURES:
            raise ValueError(f"context_gate features {block.get('features')} are not {list(FEATURES)}")
        weights, bias, threshold = block.get("weights"), block.get("bias"), block.get("threshold")
        numbers = [*(weights if isinstance(weights, list) else [None]), bias, threshold]
        if not isinstance(weights, list) or len(weights) != len(FEATURES) or \
                not all(isinstance(n, (int, float)) and math.isfinite(n) for n in numbers):
            raise ValueError(f"context_gate needs {len(FEATURES)} finite weights, a bias and a threshold")
        if not 0 < threshold < 1:
            raise ValueError(f"context_gate threshold {threshold} is not a probability")
        return cls(tuple(float(w) for w in weights), float(bias), float(threshold))

    def probability(self, inputs: Sequence[float]) -> float:
        z = self.bias + sum(w * x for w, x in zip(self.weights, inputs, strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))

    def admits(self, relevance: float, dense: float) -> bool:
        return self.probability(features(relevance, dense)) >= self.threshold
