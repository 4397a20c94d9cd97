"""ImportanceScorer: intent bases, cue boosts and hedges, ordering and clamping to [0, 2]."""

from __future__ import annotations

import pytest

from preprocessing.importance import INTENT_BASE, MAX_STRENGTH, MIN_STRENGTH, ImportanceScorer
from preprocessing.intent_rules import INTENTS


@pytest.fixture(scope="module")
def scorer():
    return ImportanceScorer()


@pytest.mark.parametrize(
    ("intent", "expected"),
    [("SAVE_DECISION", 1.3), ("UPDATE_INFO", 1.2), ("SAVE_PREFERENCE", 1.1), ("SAVE_FACT", 1.0),
     ("RECALL_INFO", 0.8), ("QUESTION", 0.8), (None, 1.0), ("SOMETHING_NEW", 1.0)],
)
def test_intent_base_on_neutral_text(scorer, intent, expected):
    assert scorer.score("the office is on the third floor", intent) == pytest.approx(expected)


def test_every_intent_has_a_base():
    assert set(INTENTS) <= set(INTENT_BASE)


def test_cue_strength_ordering(scorer):
    plain = scorer.score("The staging db is on port 5433")
    important = scorer.score("Important: the staging db is on port 5433")
    critical = scorer.score("Critical: the staging db is on port 5433")
    never_forget = scorer.score("Never forget: the staging db is on port 5433")
    assert plain < important < critical < never_forget
    assert never_forget == pytest.approx(plain + 0.4, abs=1e-6)
    assert critical == pytest.approx(plain + 0.3, abs=1e-6)


def test_one_boost_per_group(scorer):
    once = scorer.score("This is critical")
    many = scorer.score("This is critical, crucial, vital and very important")
    assert many == pytest.approx(once, abs=1e-6)


def test_groups_add_up(scorer):
    assert scorer.score("We decided this is critical") == pytest.approx(scorer.score("this is critical") + 0.1, abs=1e-6)


def test_flags_boost(scorer):
    base = scorer.score("Priya owns billing", "SAVE_FACT")
    assert scorer.score("Priya owns billing", "SAVE_FACT", explicit_save=True) == pytest.approx(base + 0.2, abs=1e-6)
    assert scorer.score("Priya owns billing", "SAVE_FACT", importance_marker=True) == pytest.approx(base + 0.2, abs=1e-6)


def test_hedges_damp_a_little_and_are_capped(scorer):
    sure = scorer.score("We use Postgres", "SAVE_FACT")
    hedged = scorer.score("I think we use Postgres for now", "SAVE_FACT")
    very_hedged = scorer.score("Maybe, perhaps, I think, not sure, for now, probably we use Postgres", "SAVE_FACT")
    assert hedged == pytest.approx(sure - 0.2, abs=1e-6)
    assert very_hedged == pytest.approx(sure - 0.3, abs=1e-6)


def test_negated_emphasis_damps_instead_of_boosting(scorer):
    plain = scorer.score("the font is Inter")
    assert scorer.score("not important, but the font is Inter", importance_marker=True) < plain
    assert scorer.score("it doesn't matter much, but the font is Inter") < plain


def test_decision_outranks_question_for_the_same_words(scorer):
    text = "Postgres for billing"
    assert scorer.score(text, "SAVE_DECISION") > scorer.score(text, "SAVE_FACT") > scorer.score(text, "QUESTION")


def test_clamped_to_range(scorer):
    top = scorer.score(
        "Never forget, this is critical and a deadline: we decided we must always rotate the password",
        "SAVE_DECISION", importance_marker=True, explicit_save=True,
    )
    assert top == MAX_STRENGTH
    floor = scorer.score("maybe", "QUESTION")
    assert MIN_STRENGTH <= floor <= MAX_STRENGTH
    for text in ["", "   ", "x" * 10_000, "Maybe perhaps not important, I guess, sort of, for now"]:
        for intent in (*INTENTS, None):
            for flags in ((False, False), (True, True)):
                assert MIN_STRENGTH <= scorer.score(text, intent, *flags) <= MAX_STRENGTH


def test_deterministic_and_case_insensitive(scorer):
    assert scorer.score("NEVER FORGET my passport", "SAVE_FACT") == scorer.score("never forget my passport", "SAVE_FACT")
    assert scorer.score("Don\u2019t forget the demo", None) == scorer.score("Don't forget the demo", None)
