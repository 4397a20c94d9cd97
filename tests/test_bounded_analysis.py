"""Bounded analysis: whatever a text's size or shape, each model, the parser, the rules and the indexes read a capped
prefix of it (counted here, never timed)."""

from __future__ import annotations

import random
from collections import Counter
from types import SimpleNamespace

import pytest

import preprocessing.dedup as dedup
import preprocessing.gazetteer as gazetteer_module
import preprocessing.intent_rules as intent_rules
import preprocessing.phrases as phrases
from preprocessing.bounds import (
    DEDUP_CHARS, ENCODER_CHARS, INTENT_CHARS, PARSE_CHARS, PARSE_TOKENS, RULE_CHARS, TERM_CHARS, WORD_CHARS,
    short_words, text_prefix,
)
from preprocessing.dedup import FUZZY_TRIALS, DedupAction, DedupCandidate, DeduplicationChecker
from preprocessing.entities import SUFFIX_WINDOW, EntityExtractor, TechnologyGazetteer, bound_suffix_search
from preprocessing.phrases import MATCHES_PER_RULE, PhraseDetector
from preprocessing.terms import MAX_NAME_WORDS, identifiers, salient_keys, terms

KIB = 1024
_SENTENCES = (
    "Priya owns the billing service and the invoices cron job.",
    "Our Postgres 16 cluster runs on three r6g.xlarge nodes in eu-west-1.",
    "The flaky test is in tests/test_payments.py::test_refund_partial.",
    "My sister Ana lives in Lisbon and visits in June.",
)


def prose(size: int, seed: int = 0) -> str:
    chooser = random.Random(seed)
    text = ""
    while len(text) < size:
        text += chooser.choice(_SENTENCES) + " "
    return text[:size]


PATHOLOGICAL = {
    "64 KiB single token": "a" * (64 * KIB),
    "10,000 '='": "=" * 10_000,
    "64 KiB prose": prose(64 * KIB),
    "64 KiB prose without spaces": prose(64 * KIB).replace(" ", ""),
    "64 KiB of one-character words": "= " * (32 * KIB),
    "64 KiB of mixed punctuation": "".join(random.Random(1).choice("=!()[]{}<>?;:,*&^%$#@~|/") for _ in range(65536)),
}


@pytest.fixture(scope="module")
def extractor() -> EntityExtractor:
    return EntityExtractor.load()


# -- the prefix every analysis reads ------------------------------------------------------------------------


def test_a_text_that_fits_is_read_whole():
    assert text_prefix("short text", 100) == "short text"


def test_a_long_text_is_read_up_to_a_word_boundary_near_the_limit():
    text = prose(10_000)
    head = text_prefix(text, 1000)
    assert text.startswith(head) and 900 < len(head) <= 1000
    assert head[-1].isspace() or text[len(head)].isspace()


def test_a_text_without_spaces_is_cut_at_the_limit():
    assert text_prefix("x" * 5000, 1000) == "x" * 1000


def test_over_long_words_are_cut_in_place_so_offsets_hold():
    text = "keep this " + "y" * 500 + " and this " + "z" * (WORD_CHARS + 1)
    cut = short_words(text)
    assert len(cut) == len(text)
    assert max(len(run) for run in cut.split()) == WORD_CHARS
    assert cut.startswith("keep this " + "y" * WORD_CHARS + " ") and " and this " in cut


# -- spaCy: tokenizer, tagger, NER, parser --------------------------------------------------------------------


@pytest.mark.parametrize("name", PATHOLOGICAL)
def test_the_parser_reads_a_capped_prefix_of_short_words(extractor, name):
    doc = extractor.bounded_doc(PATHOLOGICAL[name])
    assert len(doc.text) <= PARSE_CHARS and len(doc) <= PARSE_TOKENS
    assert max(len(token.text) for token in doc if not token.is_space) <= WORD_CHARS


def test_the_pipeline_is_handed_the_bounded_docs_and_offsets_still_point_into_the_text(extractor, monkeypatch):
    handed = []
    pipe = extractor.nlp.pipe

    def recording_pipe(docs, **options):
        docs = list(docs)
        handed.extend(docs)
        return pipe(docs, **options)

    monkeypatch.setattr(extractor.nlp, "pipe", recording_pipe)
    text = prose(64 * KIB)
    [analysis] = extractor.analyze_batch([text])
    assert len(handed) == 1 and len(handed[0].text) <= PARSE_CHARS and len(handed[0]) <= PARSE_TOKENS
    assert analysis.entities and all(text[e.start:e.end] == e.text for e in analysis.entities)


def test_the_tokenizer_looks_for_suffixes_at_the_end_of_a_token_only():
    seen = []
    tokenizer = SimpleNamespace(suffix_search=lambda text: seen.append(len(text)))
    bound_suffix_search(tokenizer)
    bound_suffix_search(tokenizer)  # once is enough: a second call does not wrap it again
    tokenizer.suffix_search("=" * 10_000)
    assert seen == [SUFFIX_WINDOW]


def test_the_extractors_tokenizer_is_bounded(extractor):
    assert extractor.nlp.tokenizer.suffix_search.window == SUFFIX_WINDOW


def test_typo_correction_skips_words_longer_than_any_name(monkeypatch):
    gazetteer = TechnologyGazetteer.load()

    def no_deletions(word):
        raise AssertionError(f"would build {len(word)} deletions of a {len(word)}-letter word")

    monkeypatch.setattr(gazetteer_module, "deletions", no_deletions)
    assert gazetteer.correct_typo("k" * (64 * KIB)) is None
    monkeypatch.undo()
    assert gazetteer.correct_typo("kubernets").canonical == "Kubernetes"


# -- the ONNX models ----------------------------------------------------------------------------------------------


class RecordingTokenizer:
    def __init__(self) -> None:
        self.lengths: list[int] = []

    def encode_batch(self, texts):
        self.lengths += [len(t) for t in texts]
        return [SimpleNamespace(ids=[101, 102], attention_mask=[1, 1], type_ids=[0, 0]) for _ in texts]


@pytest.mark.parametrize("model_class, limit", [("encoder.SentenceEncoder", ENCODER_CHARS),
                                                ("intent_model.IntentModel", INTENT_CHARS)])
def test_the_models_tokenizers_read_a_capped_prefix(model_class, limit):
    import importlib

    module_name, class_name = model_class.split(".")
    cls = getattr(importlib.import_module(f"preprocessing.{module_name}"), class_name)
    model = cls.__new__(cls)  # the tokenizer alone: no ONNX session needed to see what it is handed
    model._tokenizer, model._inputs = RecordingTokenizer(), {"input_ids", "attention_mask"}
    model.tokenize([PATHOLOGICAL["64 KiB prose"], "a short one", PATHOLOGICAL["64 KiB single token"]])
    assert max(model._tokenizer.lengths) <= limit and model._tokenizer.lengths[1] == len("a short one")


# -- the rules -----------------------------------------------------------------------------------------------------


def test_phrase_rules_read_a_capped_prefix_and_still_find_a_leading_request(monkeypatch):
    masked = []
    mask = phrases.mask_non_prose

    def recording_mask(text):
        masked.append(len(text))
        return mask(text)

    monkeypatch.setattr(phrases, "mask_non_prose", recording_mask)
    signals = PhraseDetector().detect("Please remember that deploys are on Thursdays. " + '"a" ' * (16 * KIB))
    assert signals.save_request and masked == [masked[0]] and masked[0] <= RULE_CHARS


class RecordingPattern:
    def __init__(self, pattern) -> None:
        self.pattern, self.lengths = pattern, []

    def search(self, text):
        self.lengths.append(len(text))
        return self.pattern.search(text)


def test_intent_rules_read_a_capped_prefix_of_the_message_and_of_the_turn_before(monkeypatch):
    cues, offers = RecordingPattern(intent_rules._NAMED_VALUE), RecordingPattern(intent_rules._OFFERS_CHOICE)
    monkeypatch.setattr(intent_rules, "_NAMED_VALUE", cues)
    monkeypatch.setattr(intent_rules, "_OFFERS_CHOICE", offers)
    rules = intent_rules.RuleIntentClassifier()
    rules.classify("you " * (16 * KIB))
    rules.classify("yes, Redis", ["should we use Redis or Memcached? " + "you " * (16 * KIB)])
    assert cues.lengths and max(cues.lengths) <= INTENT_CHARS
    assert offers.lengths and max(offers.lengths) <= INTENT_CHARS


def test_dedup_analyses_a_capped_prefix(monkeypatch):
    analysed = []
    analyse = dedup._analysed

    def recording(text):
        analysed.append(len(text))
        return analyse(text)

    monkeypatch.setattr(dedup, "_analysed", recording)
    long_text = prose(64 * KIB)
    DeduplicationChecker().compare(long_text + " more", DedupCandidate("m", long_text, 0.99))
    assert analysed and max(analysed) <= DEDUP_CHARS


def test_long_texts_compared_by_their_openings_are_never_merged_unless_they_are_copies():
    checker = DeduplicationChecker()
    old = prose(10_000)
    changed_tail = old[:5000] + prose(5000, seed=7)
    verdict = checker.compare(changed_tail, DedupCandidate("m", old, 0.99))
    assert verdict.action == DedupAction.REVIEW
    assert any(f"first {DEDUP_CHARS:,} characters" in reason for reason in verdict.reasons)
    assert checker.compare(old.upper(), DedupCandidate("m", old, 0.99)).action == DedupAction.MERGE


def test_fuzzy_word_matching_tries_a_bounded_number_of_pairs(monkeypatch):
    trials = []
    same = dedup._same

    def counting(a, b):
        trials.append(1)
        return same(a, b)

    monkeypatch.setattr(dedup, "_same", counting)
    # Every word starts alike and none matches another: without a cap, each word is tried against every other.
    old = " ".join(f"abcq{n}x" for n in range(400))
    new = " ".join(f"abcz{n}y" for n in range(400))
    DeduplicationChecker().compare(new, DedupCandidate("m", old, 0.99))
    assert 0 < len(trials) <= FUZZY_TRIALS


@pytest.mark.parametrize("old, new, expected", [
    ("the default branch is master", "the default branch is main", (4, 5, 4, 5)),
    ("a b c", "a b c d", None),  # an insertion
    ("a b c", "a c", None),  # a deletion
    ("a x c y", "a c y z", None),  # a move, not a swap
    ("a b c d", "a x y d", (1, 3, 1, 3)),
])
def test_one_replaced_run(old, new, expected):
    assert dedup._one_replaced_run(old.split(), new.split()) == expected


# -- search terms and cheap entity keys --------------------------------------------------------------------------


def test_search_terms_of_a_giant_token_are_capped():
    assert [len(t) for t in terms("a" * (64 * KIB))] == [TERM_CHARS]
    assert max(len(i) for i in identifiers("src/" * (16 * KIB))) <= TERM_CHARS


def test_cheap_entity_keys_stay_short_on_a_shouted_paragraph_and_come_from_the_opening():
    keys = salient_keys(" ".join(["Alpha", "Beta", "Gamma"] * 10_000))
    assert keys and all(len(k) <= TERM_CHARS and len(k.split()) <= MAX_NAME_WORDS for k in keys)
    assert salient_keys("Kubernetes " + "and so on " * 400) == {"kubernetes"}
    assert salient_keys("and so on " * 400 + "Kubernetes") == set()  # past RULE_CHARS


def test_phrase_rules_examine_a_bounded_number_of_matches(monkeypatch):
    examined = Counter()
    rules = [(words, pattern, lambda masked, m, n=n, rule=rule: examined.update([n]) or rule(masked, m))
             for n, (words, pattern, rule) in enumerate(phrases._RULES)]
    monkeypatch.setattr(phrases, "_RULES", tuple(rules))
    assert PhraseDetector().detect("remember this " * 300).save_request
    assert examined and max(examined.values()) <= MATCHES_PER_RULE
