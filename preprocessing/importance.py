"""Importance scoring: a deterministic memory strength in [0, 2] from intent, emphasis cues and hedges."""

from __future__ import annotations

import re

from preprocessing.bounds import RULE_CHARS, text_prefix

MIN_STRENGTH = 0.0
MAX_STRENGTH = 2.0

# Where a message starts before any cue. Decisions and corrections are the costliest
# to forget (a corrected fact that decays loses to the stale one); questions and recall
# requests are rarely worth keeping at all. An unknown intent is neutral.
INTENT_BASE: dict[str | None, float] = {
    "SAVE_DECISION": 1.3,
    "UPDATE_INFO": 1.2,
    "SAVE_PREFERENCE": 1.1,
    "SAVE_FACT": 1.0,
    "RECALL_INFO": 0.8,
    "QUESTION": 0.8,
    None: 1.0,
}

# Each group counts once, at its strongest matching cue, so "critical, crucial,
# very important" is not three times more important than "critical". Groups add up.
EMPHASIS = (  # how strongly the user flags it
    (r"\b(?:never|don't ever|do not ever) forget\b|\bmust(?: not|n't) forget\b", 0.4),
    (r"\b(?:critical|crucial|vital|essential|top priority|non-negotiable)\b|\b(?:very|really|extremely|super) important\b", 0.3),
    (r"\bimportant\b|\b(?:don't|do not) forget\b|\bkey point\b|\bhigh priority\b", 0.2),
)
COMMITMENT = (  # a settled rule or choice rather than a passing remark
    (r"\b(?:decided|always|never(?! forget)|must(?! not forget|n't forget)|mandatory|required|policy|rule is|committed)\b", 0.1),
)
STAKES = (  # forgetting these has real-world cost
    (r"\b(?:allerg(?:y|ic)|medication|emergency|password|api key|secret|deadline|due (?:on|by)|legal|compliance)\b", 0.1),
)
BOOST_GROUPS = (EMPHASIS, COMMITMENT, STAKES)

EXPLICIT_SAVE_BOOST = 0.2  # the user asked to remember it
IMPORTANCE_MARKER_BOOST = 0.2  # the phrase detector flagged importance

# Hedges each take 0.1 off, at most 0.3 in all: a tentative remark may be revised,
# but it is still worth keeping.
HEDGES = (
    r"\bmaybe\b",
    r"\bperhaps\b",
    r"\bprobably\b",
    r"\bi think\b",
    r"\bi guess\b",
    r"\bnot sure\b",
    r"\bfor now\b",
    r"\bfor the time being\b",
    r"\btemporar(?:y|ily)\b",
    r"\bmight\b",
    r"\bkind of\b|\bsort of\b",
)
HEDGE_DAMPER = 0.1
MAX_HEDGE_DAMPING = 0.3

# "Not important" must not score as "important": it damps instead.
NEGATED_EMPHASIS = re.compile(
    r"\b(?:not|isn't|is not|no|nothing) (?:that |very |really |too |super |all that )?(?:important|critical|crucial|urgent|a big deal)\b"
    r"|\bdoesn't (?:really )?matter\b|\bno big deal\b|\bnot a priority\b|\bunimportant\b"
)
NEGATED_EMPHASIS_DAMPER = 0.2

_BOOST_GROUPS = tuple(tuple((re.compile(p), b) for p, b in group) for group in BOOST_GROUPS)
_HEDGES = tuple(re.compile(p) for p in HEDGES)


class ImportanceScorer:
    """score(text, intent, ...) -> strength in [0.0, 2.0]; same input, same output."""

    def score(self, text: str, intent: str | None = None, importance_marker: bool = False, explicit_save: bool = False) -> float:
        """Reads the first RULE_CHARS characters of the text, where its emphasis and hedges are."""
        lowered = " ".join(text_prefix(text, RULE_CHARS).replace("\u2019", "'").lower().split())
        strength = INTENT_BASE.get(intent, INTENT_BASE[None])
        negated = NEGATED_EMPHASIS.search(lowered) is not None
        # A negated "important" would otherwise also match the emphasis cue.
        scrubbed = NEGATED_EMPHASIS.sub(" ", lowered)
        for group in _BOOST_GROUPS:
            strength += max((boost for pattern, boost in group if pattern.search(scrubbed)), default=0.0)
        if explicit_save:
            strength += EXPLICIT_SAVE_BOOST
        if importance_marker and not negated:
            strength += IMPORTANCE_MARKER_BOOST
        hedges = sum(1 for pattern in _HEDGES if pattern.search(lowered))
        strength -= min(hedges * HEDGE_DAMPER, MAX_HEDGE_DAMPING)
        if negated:
            strength -= NEGATED_EMPHASIS_DAMPER
        # Rounding keeps sums like 1.1 + 0.2 from surfacing as 1.3000000000000003.
        return round(min(MAX_STRENGTH, max(MIN_STRENGTH, strength)), 3)
