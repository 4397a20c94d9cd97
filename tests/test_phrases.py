"""PhraseDetector: explicit save requests, recall requests and importance markers, and its labelled dev set."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from preprocessing.phrases import (
    IMPORTANCE_MARKER,
    RECALL_REQUEST,
    SAVE_REQUEST,
    PhraseDetector,
    evaluate_save_requests,
    mask_non_prose,
)

SAVE_REQUESTS = Path(__file__).parent / "data" / "activation" / "save_requests.jsonl"
detector = PhraseDetector()


def phrases(text: str, kind: str) -> list[str]:
    return [p.text for p in detector.detect(text).matched_phrases if p.kind == kind]


@pytest.mark.parametrize("text", [
    "remember that we use pnpm, not npm",
    "Remember: the staging db lives on port 5433",
    "pls remember i'm allergic to shellfish",
    "could you remember that I prefer tabs over spaces?",
    "ok ship it — btw remember that we use pnpm",
    "dont forget i'm on vacation from the 12th to the 20th",
    "Do not forget: all timestamps in this codebase are UTC.",
    "never forget that my mom's birthday is May 4th",
    "make a note that the client prefers email over slack",
    "Note that I'm colorblind, so avoid red/green charts.",
    "please note that the client is in PST",
    "keep in mind that I'm on a Windows machine",
    "bear in mind we deploy only on Tuesdays",
    "for future reference, our AWS account id is 123456789012",
    "note to self: rotate the API keys before March",
    "save this: my preferred font is JetBrains Mono",
    "store this for later — the cabin wifi is pinecone42",
    "write this down: our on-call rotation starts monday",
    "jot this down, my passport expires in august 2027",
    "add this to your memory: I work at Acme",
    "commit this to memory: the main branch is protected",
    "FYI for later, the design review moved to Fridays",
    "memorize this: the office door code is 4471",
    "I want you to remember that I live in Lisbon",
    "the wifi password is hunter2. remember that.",
    "my bday is tomorrow dont forget",
    "always remember to use pnpm in this repo",
    "from now on remember to run ruff before you suggest a commit",
    "one thing to remember: our CI uses GitHub Actions",
])
def test_explicit_save_requests_are_detected(text):
    assert detector.detect(text).save_request, text


@pytest.mark.parametrize("text", [
    "I can't remember how to revert a commit in git",
    "I don't remember the syntax for list comprehensions",
    "I forgot my password for the staging dashboard",
    "do you remember which database we picked?",
    "remember to add tests for the new endpoint",
    "don't forget to run the linter before pushing",
    "make sure to update the changelog",
    "this function saves the file to disk",
    "store it in a variable before the loop",
    "save the model to disk after each epoch",
    "write this down to a file called notes.txt",
    "Note that the function returns None when the key is missing.",
    "the Remember me checkbox doesn't persist the session",
    "we have a memory leak in the worker process",
    "the save button is greyed out on mobile",
    "add a memo field to the invoice form",
    "don't forget the semicolon at the end of the line",
    "I'll keep that in mind next time",
    "he told me to remember that the server is fragile",
    "I'll never forget that trip to Iceland",
    "make a note in the changelog about the breaking change",
    "can you save this file as UTF-8?",
])
def test_other_uses_of_memory_words_are_not_save_requests(text):
    assert not detector.detect(text).save_request, text


@pytest.mark.parametrize("text", [
    "the error says 'remember me' is not a valid field",
    'the docstring says "remember that x must be positive" but it is never checked',
    "What does `remember()` do in Compose?",
    "```\n# don't forget that this runs twice\nfoo()\n```\nwhy does this run twice?",
    "> remember that the cache is per-process\nis this comment still true?",
])
def test_code_quotes_and_quoted_replies_are_ignored(text):
    signals = detector.detect(text)
    assert not signals.save_request and not signals.matched_phrases


def test_quoted_text_next_to_a_real_request_does_not_hide_it():
    text = 'remember that our error page says "oops" on purpose'
    assert phrases(text, SAVE_REQUEST) == ["remember"]
    assert detector.detect('remember "pnpm" is the only package manager we allow').save_request


def test_masking_keeps_every_offset():
    text = "use `save()` and \u201cremember\u201d \u2014 don\u2019t forget it"
    masked = mask_non_prose(text)
    assert len(masked) == len(text)
    assert "save" not in masked and "remember" not in masked
    assert masked.endswith("don't forget it")


@pytest.mark.parametrize("text", [
    "what did I say about the deployment schedule?",
    "What did I tell you about my allergies?",
    "do you remember which database we picked for analytics?",
    "remind me what the staging URL is",
    "what was the name of the restaurant I mentioned last week?",
    "did I mention my sister's wedding date?",
    "have I told you about my cat?",
    "recall my preferences for code formatting",
    "what's the name of my dog again?",
    "check your memory for anything about my travel plans",
])
def test_recall_requests_are_detected(text):
    signals = detector.detect(text)
    assert signals.recall_request and not signals.save_request, text


@pytest.mark.parametrize("text", [
    "I can't remember how to exit vim",
    "remind me to call the dentist tomorrow",
    "what did the tests output?",
    "Remember when IE6 was a thing?",
    "How do you remember all of this?",
])
def test_not_recall_requests(text):
    assert not detector.detect(text).recall_request, text


@pytest.mark.parametrize("text", [
    "Very important: the build must pass on Windows too",
    "This is critical — prod deploys need two approvals",
    "it's crucial that the migration runs first",
    "top priority today is the login bug",
    "high-priority: patch the auth bypass",
    "never forget that my son is diabetic",
    "going forward, always remember that I want type hints",
    "IMPORTANT read this first",
])
def test_importance_markers(text):
    assert detector.detect(text).importance_marker, text


@pytest.mark.parametrize("text", [
    "the critical section isn't protected by a lock",
    "we're on the critical path for the release",
    "the vital signs dashboard needs a dark theme",
    "this isn't very important but the footer looks off",
    "what's the most important feature to build first?",
    "I'll never forget that trip to Iceland",
])
def test_not_importance_markers(text):
    assert not detector.detect(text).importance_marker, text


def test_matched_spans_point_into_the_original_message():
    text = "Very important: ok ship it \u2014 btw don\u2019t forget that we use pnpm. What did I say about CI?"
    signals = detector.detect(text)
    assert signals.save_request and signals.recall_request and signals.importance_marker
    for phrase in signals.matched_phrases:
        assert text[phrase.start:phrase.end] == phrase.text
    by_kind = {p.kind: p for p in signals.matched_phrases}
    assert by_kind[SAVE_REQUEST].text == "don\u2019t forget"
    assert by_kind[SAVE_REQUEST].start == text.index("don\u2019t")
    assert by_kind[IMPORTANCE_MARKER].text == "Very important"
    assert by_kind[IMPORTANCE_MARKER].start == 0
    assert by_kind[RECALL_REQUEST].text.startswith("What") and by_kind[RECALL_REQUEST].text.endswith("say")
    assert [p.start for p in signals.matched_phrases] == sorted(p.start for p in signals.matched_phrases)


def test_span_of_a_multiword_trigger():
    text = "thanks! also, for future reference, we use 4-space indentation"
    [phrase] = detector.detect(text).matched_phrases
    assert (phrase.kind, phrase.text) == (SAVE_REQUEST, "for future reference")
    assert (phrase.start, phrase.end) == (14, 14 + len("for future reference"))


def test_nothing_in_nothing_out():
    signals = detector.detect("")
    assert not (signals.save_request or signals.recall_request or signals.importance_marker)
    assert signals.matched_phrases == ()


def test_dev_set_is_large_varied_and_consistently_labelled():
    rows = [json.loads(line) for line in SAVE_REQUESTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    kinds = [row["kind"] for row in rows]
    assert len(rows) >= 320
    assert kinds.count("save") >= 120 and kinds.count("hard_negative") >= 90 and kinds.count("recall") >= 40
    assert kinds.count("neutral") > 0
    assert len({row["text"] for row in rows}) == len(rows)
    for row in rows:
        assert set(row) == {"text", "save_request", "recall_request", "importance_marker", "kind"}
        assert row["save_request"] == (row["kind"] == "save")
        if row["kind"] == "recall":
            assert row["recall_request"]
    assert {row["kind"] for row in rows if row["importance_marker"]} >= {"save", "hard_negative"}


def test_targets_on_the_dev_set():
    result = evaluate_save_requests(SAVE_REQUESTS)
    assert result["recall"] == 1.0, result["errors"]
    assert result["false_positive_rate"] <= 0.01, result["errors"]
    assert result["positives"] >= 120 and result["hard_negatives"] >= 90
    assert result["recall_request_accuracy"] >= 0.95
    assert set(result) >= {"messages", "positives", "hard_negatives", "recall", "precision", "false_positive_rate",
                           "recall_request_accuracy", "errors"}


def test_detection_is_well_under_a_millisecond_per_message():
    texts = [json.loads(line)["text"] for line in SAVE_REQUESTS.read_text(encoding="utf-8").splitlines()]
    started = time.perf_counter()
    for text in texts:
        detector.detect(text)
    assert (time.perf_counter() - started) / len(texts) < 0.001


def test_phrases_is_pure_text_analysis():
    probe = ("import sys, preprocessing.phrases; "
             "print(sorted(m for m in ('memory_daemon', 'grpc', 'duckdb') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent)
    assert out.stdout.strip() == "[]"
