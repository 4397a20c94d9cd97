"""TagSuggester on the real encoder: obvious keywords and categories, MMR diversity, candidate handling, one encoder batch."""

from __future__ import annotations

import numpy as np
import pytest

from preprocessing.encoder import SentenceEncoder
from preprocessing.tags import (
    CATEGORY_PROTOTYPES,
    CATEGORY_TAGS,
    NEAR_DUPLICATE,
    TagSuggester,
    TagSuggestion,
    fallback_candidates,
    normalise_candidates,
)


@pytest.fixture(scope="module")
def encoder():
    return SentenceEncoder.from_registry()


@pytest.fixture(scope="module")
def suggester(encoder):
    return TagSuggester(encoder)


# (message, spaCy-like candidates, a keyword that must appear, a category that must appear)
OBVIOUS = [
    ("I prefer pnpm over npm", ["I", "pnpm", "npm"], "pnpm", {"preference", "tooling"}),
    ("The launch deadline is March 3", ["The launch deadline", "March 3"], "launch-deadline", {"deadline"}),
    ("Our API runs on Kubernetes in eu-west-1", ["Our API", "Kubernetes", "eu-west-1"], "kubernetes", {"infrastructure"}),
    ("Priya owns the billing service", ["Priya", "the billing service"], "billing-service", {"person"}),
    ("The weekly standup moved to 10am on Tuesdays", ["The weekly standup", "10am", "Tuesdays"], "weekly-standup", {"meeting"}),
    ("The login page crashes with a null pointer exception", ["The login page", "a null pointer exception"], "login-page", {"bug"}),
    ("Rotate the AWS access keys every 90 days and keep them in Vault", ["the AWS access keys", "90 days", "Vault"], "access-keys", {"security"}),
    ("I always use VS Code with vim keybindings", ["I", "VS Code", "vim keybindings"], "vs-code", {"tooling"}),
    ("We are building a mobile app for restaurant bookings", ["We", "a mobile app", "restaurant bookings"], "mobile-app", {"project"}),
]


@pytest.mark.parametrize(("text", "candidates", "keyword", "categories"), OBVIOUS)
def test_obvious_keyword_and_category(suggester, text, candidates, keyword, categories):
    suggestion = suggester.suggest(text, candidates)
    assert keyword in suggestion.keywords, suggestion
    assert categories <= set(suggestion.categories), suggestion


@pytest.mark.parametrize(("text", "candidates", "keyword", "categories"), OBVIOUS)
def test_fallback_candidates_find_the_keyword_or_part_of_it(suggester, text, candidates, keyword, categories):
    # Without a parser, bigrams are word windows, so "aws-access" may stand in for "access-keys".
    keywords = suggester.suggest(text, []).keywords
    assert any(set(k.split("-")) & set(keyword.split("-")) for k in keywords), keywords


def test_keywords_are_lower_case_hyphenated_and_at_most_top_k(encoder):
    suggester = TagSuggester(encoder, top_k=3)
    text = "The Staging Database for Project Falcon runs PostgreSQL 16 on the Frankfurt cluster with nightly backups"
    candidates = ["The Staging Database", "Project Falcon", "PostgreSQL 16", "the Frankfurt cluster", "nightly backups"]
    keywords = suggester.suggest(text, candidates).keywords
    assert 0 < len(keywords) <= 3
    for keyword in keywords:
        assert keyword == keyword.lower() and " " not in keyword
        assert 1 <= len(keyword.split("-")) <= 2


def test_near_duplicates_are_never_both_kept(encoder, suggester):
    text = "The staging database runs Postgres with nightly backups; the staging DB server is in Frankfurt"
    candidates = ["the staging database", "staging databases", "the staging DB", "the staging db server", "Postgres", "nightly backups"]
    keywords = suggester.suggest(text, candidates).keywords
    assert sum("staging" in k for k in keywords) == 1, keywords
    vectors = encoder.encode([k.replace("-", " ") for k in keywords])
    similarity = vectors @ vectors.T
    assert (similarity[~np.eye(len(keywords), dtype=bool)] < NEAR_DUPLICATE).all()


def test_mmr_diversity_spreads_keywords_across_topics(encoder):
    text = "Our databases are PostgreSQL, MySQL, SQLite and MariaDB, with nightly backups in the Frankfurt region and a pager rotation"
    candidates = ["PostgreSQL", "MySQL", "SQLite", "MariaDB", "nightly backups", "the Frankfurt region", "the pager rotation"]
    databases = {"postgresql", "mysql", "sqlite", "mariadb"}

    def pick(diversity):
        keywords = TagSuggester(encoder, top_k=4, diversity=diversity).suggest(text, candidates).keywords
        vectors = encoder.encode(list(keywords))
        similarity = vectors @ vectors.T
        mean_pairwise = (similarity.sum() - len(keywords)) / (len(keywords) ** 2 - len(keywords))
        return keywords, float(mean_pairwise)

    relevant_only, redundancy_low = pick(0.0)
    diverse, redundancy_high = pick(0.8)
    assert len(set(diverse) & databases) <= 1, diverse
    assert len(set(diverse) - databases) >= 3, diverse
    assert redundancy_high <= redundancy_low + 1e-6, (relevant_only, diverse)


def test_given_embedding_matches_computed_one(encoder, suggester):
    text = "I prefer pnpm over npm"
    assert suggester.suggest(text, ["pnpm", "npm"], encoder.encode_one(text)) == suggester.suggest(text, ["pnpm", "npm"])


class CountingEncoder:
    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def encode(self, texts):
        self.calls.append(list(texts))
        return self.inner.encode(texts)

    def encode_one(self, text):
        return self.encode([text])[0]


def test_candidates_are_embedded_in_one_batch(encoder):
    counting = CountingEncoder(encoder)
    suggester = TagSuggester(counting)
    counting.calls.clear()  # the prototype batch at construction
    text = "Priya owns the billing service and the invoice exporter"
    suggester.suggest(text, ["Priya", "the billing service", "the invoice exporter"], encoder.encode_one(text))
    assert counting.calls == [["priya", "billing service", "invoice exporter"]]


def test_prototypes_are_built_once_at_construction(encoder):
    counting = CountingEncoder(encoder)
    TagSuggester(counting)
    assert len(counting.calls) == 1
    assert len(counting.calls[0]) == sum(len(s) for s in CATEGORY_PROTOTYPES.values())


def test_every_category_has_a_prototype_and_only_known_categories_are_suggested(suggester):
    assert tuple(CATEGORY_PROTOTYPES) == CATEGORY_TAGS
    assert all(len(sentences) >= 5 for sentences in CATEGORY_PROTOTYPES.values())
    for text, candidates, _, _ in OBVIOUS:
        assert set(suggester.suggest(text, candidates).categories) <= set(CATEGORY_TAGS)


@pytest.mark.parametrize("text", ["", "   ", "thanks!", "ok"])
def test_content_free_messages_get_no_keywords(suggester, text):
    assert suggester.suggest(text, []).keywords == ()


def test_top_k_zero_gives_categories_only(encoder):
    suggestion = TagSuggester(encoder, top_k=0).suggest("The launch deadline is March 3", ["The launch deadline"])
    assert suggestion.keywords == () and "deadline" in suggestion.categories


def test_invalid_settings_are_rejected(encoder):
    with pytest.raises(ValueError):
        TagSuggester(encoder, top_k=-1)
    with pytest.raises(ValueError):
        TagSuggester(encoder, diversity=1.5)


def test_tags_list_categories_first_without_duplicates():
    suggestion = TagSuggestion(keywords=("pnpm", "tooling", "npm"), categories=("preference", "tooling"))
    assert suggestion.tags == ("preference", "tooling", "pnpm", "npm")


def test_candidate_normalisation():
    assert normalise_candidates(
        ["the new staging database", "March 3", "3", "I", "Python 3.12", "my wife\u2019s name", "", "Priya", "Priya"]
    ) == [("staging", "database"), ("march", "3"), ("python", "3.12"), ("wife", "name"), ("priya",)]


def test_fallback_candidates_keep_identifiers_and_never_span_punctuation():
    candidates = fallback_candidates("I don't like Priya's node.js setup, c++ code and CI/CD on eu-west-1.")
    assert ("node.js", "setup") in candidates and ("c++", "code") in candidates
    assert ("ci/cd",) in candidates and ("eu-west-1",) in candidates
    assert ("setup", "c++") not in candidates
    assert not any(word in {"don't", "like", "i", "and"} for phrase in candidates for word in phrase)
