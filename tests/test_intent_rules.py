"""Rule-based intent fallback: clear examples per label, probabilities, and follow-up turns that settle a choice."""

from __future__ import annotations

import math

import pytest

from preprocessing.intent_rules import INTENTS, IntentPrediction, RuleIntentClassifier

EXAMPLES: dict[str, list[str]] = {
    "SAVE_PREFERENCE": [
        "I prefer pnpm over npm",
        "I really like dark mode in every editor",
        "I hate meetings before 10am",
        "My favourite language is Rust",
        "I always use tabs, never spaces",
        "I'd rather get short answers without the preamble",
        "Please always reply in British English",
        "Never use emojis in your replies",
        "I'm not a fan of ORMs, I like writing raw SQL",
        "When you write Python for me, use type hints everywhere",
        "I usually drink oat milk in my coffee",
        "I can't stand tailwind, plain CSS modules work better for me",
        "Keep your answers under five sentences",
    ],
    "SAVE_DECISION": [
        "We decided to use Postgres for the billing service",
        "Let's go with Redis for the session cache",
        "We're going with Vite instead of webpack",
        "I've decided to take the job in Berlin",
        "Going forward we'll use trunk-based development",
        "We chose Stripe over Adyen for payments",
        "The plan is to launch the beta in the first week of May",
        "After the review we agreed on weekly releases",
        "We're not going to support IE11",
        "Final decision: the mobile app will be Flutter",
        "We'll standardise on OpenTelemetry for tracing",
        "I'm going with the 14 inch MacBook",
    ],
    "SAVE_FACT": [
        "My wife's name is Anna",
        "Our API runs on Kubernetes in eu-west-1",
        "Priya owns the billing service",
        "The staging db is on port 5433",
        "We use GitHub Actions for CI",
        "I work at Acme as a data engineer",
        "My birthday is on June 12",
        "I'm allergic to peanuts",
        "The launch deadline is March 3",
        "Our on-call rotation changes every Monday at 9am",
        "Tom reports to Sarah on the platform team",
        "I have two kids, Leo and Mia",
        "Remember that the wifi password is hunter2",
    ],
    "RECALL_INFO": [
        "What did I say about the database migration?",
        "Do you remember my wife's name?",
        "Remind me what we decided about caching",
        "What was the name of that restaurant I liked?",
        "What's my staging db port again?",
        "Which editor did I say I prefer?",
        "Did I mention who owns the billing service?",
        "What do you know about my travel plans?",
        "Where is our API hosted?",
        "Have I told you about my allergies?",
        "What did we agree on for the release cadence?",
        "Can you remind me when the launch deadline is?",
    ],
    "UPDATE_INFO": [
        "Actually, the staging db moved to port 5434",
        "I no longer use vim, I switched to Helix",
        "We switched from Jenkins to GitHub Actions last month",
        "Correction: Priya handles payments now, not billing",
        "I don't drink coffee anymore",
        "The standup was moved to 10am",
        "From now on, call me Alex",
        "My new address is 12 Rose Street",
        "We used to deploy on Fridays but that changed",
        "Scratch that, the deadline got pushed to April 2",
        "Update my team to the platform group",
        "Tom is now the tech lead on search",
    ],
    "QUESTION": [
        "How do I reverse a list in Python?",
        "Can you write a regex that matches email addresses?",
        "Thanks, that was really helpful!",
        "Hi there",
        "What is the difference between TCP and UDP?",
        "Explain how consistent hashing works",
        "Summarise this article for me",
        "Good morning!",
        "Should we use Redis or Memcached?",
        "Fix the failing test in utils.py",
        "Why does my docker build keep failing?",
        "Any ideas for a team offsite?",
        "ok cool",
        "Help me draft an email to the landlord",
    ],
}


@pytest.fixture(scope="module")
def classifier():
    return RuleIntentClassifier()


@pytest.mark.parametrize(("label", "text"), [(label, text) for label, texts in EXAMPLES.items() for text in texts])
def test_clear_examples(classifier, label, text):
    prediction = classifier.classify(text)
    assert prediction.intent == label, (text, prediction.all_probs)


def test_every_label_has_at_least_eight_examples():
    assert set(EXAMPLES) == set(INTENTS)
    assert all(len(texts) >= 8 for texts in EXAMPLES.values())


@pytest.mark.parametrize("text", ["", "   ", "I prefer tabs", "What did I say?", "?!?", "x" * 10_000])
def test_probabilities_are_a_distribution(classifier, text):
    prediction = classifier.classify(text)
    assert isinstance(prediction, IntentPrediction)
    assert set(prediction.all_probs) == set(INTENTS)
    assert math.isclose(sum(prediction.all_probs.values()), 1.0, abs_tol=1e-9)
    assert all(0.0 <= p <= 1.0 for p in prediction.all_probs.values())
    assert prediction.confidence == pytest.approx(max(prediction.all_probs.values()))
    assert prediction.all_probs[prediction.intent] == pytest.approx(prediction.confidence)
    assert prediction.source == "rules"


@pytest.mark.parametrize(
    "text",
    [
        "How do I change my git email to a new one?",
        "Can you help me decide between Redis and Memcached?",
        "What do you prefer, tabs or spaces?",
        "Translate 'I prefer tea' into French",
        "Show me how to migrate from Jenkins to GitHub Actions",
        "What happens if I switch to a new branch with uncommitted changes?",
        "What's a good name for my cat?",
        "When I run pytest I get an import error, why?",
        "Can you make the button blue instead?",
    ],
)
def test_requests_that_mention_cue_words_stay_questions(classifier, text):
    assert classifier.classify(text).intent == "QUESTION"


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("remember that we use pnpm, not npm", "SAVE_FACT"),
        ("could you remember that I prefer tabs over spaces?", "SAVE_PREFERENCE"),
        ("make a note that the client's budget is 40k", "SAVE_FACT"),
        ("add this to your memory: I work at Acme as a backend engineer", "SAVE_FACT"),
        ("I use zsh with oh-my-zsh. Commit that to memory.", "SAVE_FACT"),
        ("oh and remember we switched from Jest to Vitest last month", "UPDATE_INFO"),
        ("Very important: remember that I'm allergic to penicillin.", "SAVE_FACT"),
        ("keep in mind that we decided to ship on Mondays", "SAVE_DECISION"),
    ],
)
def test_explicit_save_requests_are_read_by_their_content(classifier, text, label):
    assert classifier.classify(text).intent == label


@pytest.mark.parametrize(
    "text",
    [
        "remember to add tests for the new endpoint",
        "don't forget the semicolon at the end of the line",
        "store it in a variable before the loop",
        "make a note in the changelog about the breaking change",
        "I don't remember the syntax for list comprehensions",
        "how do I make vim remember the cursor position?",
    ],
)
def test_memory_words_in_tasks_are_not_save_requests(classifier, text):
    assert classifier.classify(text).intent == "QUESTION"


@pytest.mark.parametrize(
    "text",
    ["do u remember my favorite color", "remember what I said about the API keys?", "recall my preferences for code formatting",
     "could you recall the steps I shared for setting up the VPN?", "did we settle on Postgres or MySQL last time?"],
)
def test_recall_wins_over_the_words_being_asked_about(classifier, text):
    assert classifier.classify(text).intent == "RECALL_INFO"


def test_no_cue_falls_back_to_question(classifier):
    assert classifier.classify("").intent == "QUESTION"
    assert classifier.classify("the weather was nice today").intent == "QUESTION"


def test_clear_statements_are_confident(classifier):
    assert classifier.classify("I prefer pnpm over npm").confidence > 0.7
    assert classifier.classify("We decided to use Postgres for billing").confidence > 0.7


def test_deterministic(classifier):
    assert classifier.classify("Let's go with Redis") == classifier.classify("Let's go with Redis")


def test_curly_apostrophes(classifier):
    assert classifier.classify("I\u2019d rather use Poetry than pip").intent == "SAVE_PREFERENCE"
    assert classifier.classify("Let\u2019s go with Redis").intent == "SAVE_DECISION"


def test_affirmation_after_offered_options_is_a_decision(classifier):
    prior = ["Should we use Redis or Memcached for the session cache?"]
    alone = classifier.classify("yes, let's go with that")
    followed = classifier.classify("yes, let's go with that", prior)
    assert followed.intent == "SAVE_DECISION"
    assert followed.all_probs["SAVE_DECISION"] > alone.all_probs["SAVE_DECISION"]


@pytest.mark.parametrize("reply", ["Redis", "Memcached, definitely", "the first one", "sounds good", "yep"])
def test_short_selection_after_options_is_a_decision(classifier, reply):
    prior = ["Hi", "Should we use Redis or Memcached for the session cache?"]
    assert classifier.classify(reply, prior).intent == "SAVE_DECISION"


def test_selection_needs_an_offer_in_the_previous_turn(classifier):
    assert classifier.classify("sounds good", ["I deployed the fix to staging."]).intent == "QUESTION"
    assert classifier.classify("Redis", ["Redis is an in-memory store."]).intent != "SAVE_DECISION"


def test_long_or_questioning_reply_is_not_a_selection(classifier):
    prior = ["Should we use Redis or Memcached?"]
    assert classifier.classify("What is the difference between Redis and Memcached?", prior).intent == "QUESTION"


def test_choosing_between_things_asked_about_you_is_a_preference(classifier):
    prior = ["Do you prefer tea or coffee in the morning?"]
    assert classifier.classify("coffee, always", prior).intent == "SAVE_PREFERENCE"
