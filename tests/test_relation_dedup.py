"""RelationJudge: dedup and update decisions from the real relation model, on pairs that are in no training file."""

from __future__ import annotations

from dataclasses import replace

import pytest

from preprocessing.dedup import DedupAction, DedupCandidate
from preprocessing.relation_dedup import CANDIDATE_FLOOR, SURE_UPDATE, RelationJudge
from preprocessing.relation_model import RelationModel


@pytest.fixture(scope="module")
def judge():
    return RelationJudge(RelationModel.load(threads=1))


class CountingModel:
    """The real model, counting the pairs it is asked to read."""

    def __init__(self, model):
        self.model, self.pairs, self.calls = model, 0, 0

    def classify(self, pairs):
        self.pairs += len(pairs)
        self.calls += 1
        return self.model.classify(pairs)


class CountingIntentModel:
    """The real intent model, counting the texts it is asked to read."""

    def __init__(self, model):
        self.model, self.texts = model, 0

    def classify_with_requests_batch(self, texts):
        self.texts += len(texts)
        return self.model.classify_with_requests_batch(texts)


class BrokenModel:
    """A model whose session fails at run time (a file replaced under the daemon, an onnxruntime fault)."""

    def classify(self, pairs):
        raise RuntimeError("onnxruntime: invalid graph")


def candidate(memory_id: str, text: str, similarity: float) -> DedupCandidate:
    return DedupCandidate(memory_id, text, similarity)


def test_a_paraphrase_is_merged_and_names_the_model(judge):
    verdict = judge.check("the search cluster gets re-indexed every night around 2am UTC",
                          [candidate("m1", "Nightly reindex of the search cluster runs at 02:00 UTC", 0.8)])
    assert verdict.action == DedupAction.MERGE and verdict.memory_id == "m1" and verdict.relation == "DUPLICATE"
    assert any(r.startswith("relation model: DUPLICATE") for r in verdict.reasons)


def test_an_update_is_an_update_candidate_not_a_merge(judge):
    verdict = judge.check("Python 3.9 support is gone; 3.10+ only now",
                          [candidate("m1", "We support Python 3.9 to 3.11", 0.7)])
    assert verdict.action == DedupAction.UPDATE_CANDIDATE and verdict.relation in ("UPDATE", "PARTIAL_UPDATE")


def test_the_duplicate_wins_over_an_older_version_among_candidates(judge):
    verdict = judge.check("the search cluster gets re-indexed every night around 2am UTC", [
        candidate("old", "Nightly reindex of the search cluster runs at 04:00 UTC", 0.75),
        candidate("same", "Nightly reindex of the search cluster runs at 02:00 UTC", 0.8),
    ])
    assert verdict.action == DedupAction.MERGE and verdict.memory_id == "same"


def test_candidates_under_the_floor_never_reach_the_model(judge):
    counting = RelationJudge(CountingModel(judge.model))
    verdict = counting.check("My daughter's swimming lesson is on Saturdays",
                             [candidate("far", "The billing API uses OAuth client credentials", CANDIDATE_FLOOR - 0.01)])
    assert verdict.action == DedupAction.NEW and counting.model.pairs == 0


def test_an_identical_text_merges_without_the_model(judge):
    counting = RelationJudge(CountingModel(judge.model))
    verdict = counting.check("Deploys happen on Tuesdays.", [candidate("m1", "deploys happen on tuesdays", 0.99)])
    assert verdict.action == DedupAction.MERGE and counting.model.pairs == 0


def test_a_pair_read_once_is_not_read_again(judge):
    counting = RelationJudge(CountingModel(judge.model))
    candidates = [candidate("m1", "Standup is at 9:15 every weekday", 0.7)]
    first = counting.check("standup moved to 9:45", candidates)
    second = counting.check("standup moved to 9:45", candidates)
    assert first == second and counting.model.pairs == 1


def test_a_forgotten_memory_leaves_no_pair_in_memory_however_long_it_is(judge):
    """Pairs are remembered by their first PAIR_KEY_CHARS characters; forgetting a longer memory drops them too."""
    counting = RelationJudge(CountingModel(judge.model))
    long_memory = "Standup is at 9:15 every weekday. " + "The agenda is blockers first, then demos. " * 40
    candidates = [candidate("m1", long_memory, 0.7)]
    counting.check("standup moved to 9:45", candidates)
    counting.forget_texts([long_memory])
    counting.check("standup moved to 9:45", candidates)
    assert counting.model.pairs == 2


def test_pairs_of_several_new_texts_are_read_in_one_call_as_judge_reads_each(judge):
    counting = RelationJudge(CountingModel(judge.model))
    dentist = candidate("m1", "My dentist is Dr. Okafor at Millbrook Dental.", 0.56)
    database = candidate("m2", "The staging database is Postgres 14.", 0.63)
    pairs = [("Switched dentists: I see Dr. Lind at Harbour Smiles now.", dentist),
             ("Upgraded the production database to Postgres 16 last night.", database)]
    together = counting.judge_pairs(pairs)
    assert (counting.model.calls, counting.model.pairs) == (1, 2)
    alone = [judge.judge(text, [memory], floor=-1)[0] for text, memory in pairs]
    assert [(p.candidate, p.relation.label, p.overruled) for p in together] == \
        [(p.candidate, p.relation.label, p.overruled) for p in alone]
    assert together[0].relation.label == "UPDATE" and together[0].relation.confidence >= SURE_UPDATE
    assert together[1].overruled  # production's upgrade is another instance's: it updates nothing of staging's
    assert counting.judge_pairs(pairs) == together and counting.model.calls == 1  # read once, remembered


def test_no_more_than_max_pairs_are_read(judge):
    counting = RelationJudge(CountingModel(judge.model), max_pairs=3)
    candidates = [candidate(f"m{i}", f"The team {i} standup is at 9:{10 + i}", 0.5 + i / 100) for i in range(6)]
    counting.check("standup is at 9:30", candidates)
    assert counting.model.pairs == 3


def test_a_failing_model_answers_new_with_the_reason():
    verdict = RelationJudge(BrokenModel()).check("standup moved to 9:45",
                                                 [candidate("m1", "Standup is at 9:15 every weekday", 0.7)])
    assert verdict.action == DedupAction.NEW and verdict.memory_id is None
    assert "relation model failed" in verdict.degraded and "invalid graph" in verdict.degraded


def test_no_candidates_is_new(judge):
    assert judge.check("anything at all", []).action == DedupAction.NEW


def test_the_number_rule_keeps_a_changed_version_the_model_reads_as_a_duplicate():
    """The model reads "… a timeout of 30 seconds" / "… timeout is 45 seconds" as one statement (digits are where it
    is weakest; run 12 did the same with "Python 3.9" / "Python 3.10", which run 15 reads right); the number rule that
    overrules it is what keeps the new value from being merged away."""
    model = RelationModel.load(threads=1)
    old = [candidate("m1", "The API gateway has a timeout of 30 seconds", 0.95)]
    new = "The API gateway timeout is 45 seconds"
    assert RelationJudge(model, overrule_numbers=False).check(new, old).action == DedupAction.MERGE
    ruled = RelationJudge(model).check(new, old)
    assert ruled.action != DedupAction.MERGE and "overruled" in " ".join(ruled.reasons)


def test_a_statement_after_a_memory_worded_as_a_change_keeps_both_unless_it_says_it_changes_something(judge):
    """The model reads any later statement on the subject of a correction as its update (here 1.00); the judge keeps
    both unless the new text says it changes something, as the intent model or the change rules read it."""
    correction = candidate("m1", "Correction: Maya's school starts at 8:15, not 8:30.", 0.6)
    kept = judge.judge("Maya takes the bus to school on Fridays.", [correction])[0]
    assert kept.relation.label == "COMPATIBLE" and "is a change" in kept.overruled
    assert judge.check("Maya takes the bus to school on Fridays.", [correction]).action != DedupAction.UPDATE_CANDIDATE
    changed = judge.judge("Maya's school moved its start to 8:00 this term.", [correction])[0]
    assert changed.relation.label in ("UPDATE", "PARTIAL_UPDATE") and not changed.overruled
    unguarded = RelationJudge(judge.model, guard_changed_memories=False)
    assert unguarded.judge("Maya takes the bus to school on Fridays.", [correction])[0].relation.label == "UPDATE"


def test_the_next_step_of_a_chain_updates_a_change_its_earlier_version_shows_it_continues(judge):
    """The guard keeps a later statement on a change's subject from retiring it, unless the model is sure the statement
    also updates what that change superseded: then it is the chain's next step, whatever its wording."""
    text = "All clusters are on Kubernetes 1.30 after the upgrade."
    upgrade = candidate("k128", "Upgraded the clusters to Kubernetes 1.28.", 0.7)
    assert judge.judge(text, [upgrade])[0].overruled  # nothing known before the change: the guard holds
    chain = replace(upgrade, earlier=("The clusters run Kubernetes 1.26.",))
    step = judge.judge(text, [chain])[0]
    assert step.relation.label == "UPDATE" and step.relation.confidence >= SURE_UPDATE and not step.overruled
    # An earlier version worded as a change is not read (the model's error would be the same there).
    changed_before = replace(upgrade, earlier=("Switched the clusters off Docker Swarm last year.",))
    assert judge.judge(text, [changed_before])[0].overruled
    # A statement on the subject that does not change what came before the correction stays beside it.
    correction = candidate("m1", "Correction: Maya's school starts at 8:15, not 8:30.", 0.6)
    kept = judge.judge("Maya takes the bus to school on Fridays.",
                       [replace(correction, earlier=("Maya's school starts at 8:30.",))])[0]
    assert kept.relation.label == "COMPATIBLE" and "is a change" in kept.overruled


def test_a_memory_that_replaced_another_is_guarded_as_a_change_whatever_its_words(judge):
    """A change without a marker word ("Halved that this week") is known as one by what it replaced: a later remark
    on the subject keeps it current, though the model reads the remark as its update; a real next step does not."""
    halved = candidate("halved", "Halved that this week, the ops review wanted it stricter.", 0.5)
    remark = "Brisk scheduler sends a warning email five minutes before a job is killed."
    # The premise: no marker, so only what the store knows can tell it is a change; the model reads an update.
    unknown = judge.judge(remark, [halved])[0]
    assert unknown.relation.label == "UPDATE" and unknown.relation.confidence >= SURE_UPDATE and not unknown.overruled
    known = replace(halved, earlier=("The Brisk scheduler keeps a 20 minute job timeout.",))
    kept = judge.judge(remark, [known])[0]
    assert kept.relation.label == "COMPATIBLE" and "is a change" in kept.overruled
    assert judge.check(remark, [known]).action != DedupAction.UPDATE_CANDIDATE
    step = judge.judge("Brisk job timeout went down again, to 5 minutes now.", [known])[0]
    assert step.relation.label == "UPDATE" and not step.overruled


def test_a_change_replaces_what_it_changes_and_not_the_neighbour_it_also_reads_as_changed(judge):
    """The model reads a statement of change as a sure update of a sibling on the same day too; the verdict replaces
    the likeliest memory and, beside it, only other versions of that one."""
    candidates = [candidate("judo", "Leo's judo class is on Wednesdays at 5pm.", 0.62),
                  candidate("guitar", "Leo's guitar lesson is on Wednesdays at 6pm.", 0.41)]
    text = "Leo moved up a belt, so judo is now on Saturdays at 10am."
    read = {pair.candidate.memory_id: pair.relation for pair in judge.judge(text, candidates)}
    # The premise: the model is sure of both, so the readings alone would retire the guitar lesson too.
    assert all(read[m].label == "UPDATE" and read[m].confidence >= SURE_UPDATE for m in ("judo", "guitar"))
    verdict = judge.check(text, candidates)
    assert verdict.action == DedupAction.UPDATE_CANDIDATE and verdict.memory_id == "judo"
    assert verdict.also_updates == ()


def test_an_update_replaces_every_version_of_the_statement_it_changes(judge):
    """Said twice and then changed: both versions go, the unrelated statement that shares a word stays."""
    old = candidate("old", "The search cluster runs Elasticsearch 7.10.", 0.7)
    others = [candidate("again", "Quick reminder: search still runs on Elasticsearch 7.10.", 0.6),
              candidate("logs", "The logging stack stays on Elasticsearch 8.", 0.5)]
    versions = judge.versions_of(old, others)
    assert [c.memory_id for c in versions] == ["again"]


def test_a_fact_that_holds_a_change_word_is_not_worded_as_a_change_when_the_intent_model_reads_it():
    """The change rules' markers ("handed over", "switched off") also sit in plain facts; the daemon's judge counts a
    memory as a statement of change only when the intent model reads it as UPDATE_INFO too, so a next statement
    that changes such a fact is read as its update, not guarded as a later remark on a change."""
    from memory_daemon.activation.analyzer import ActivationPipeline
    from memory_daemon.core.config import ActivationSettings
    from preprocessing.intent_model import IntentModel

    pipeline = ActivationPipeline(ActivationSettings())
    facts = ["The release train leaves on Thursdays and is handed over to QA on Fridays.",
             "Night shifts are handed over at 06:00 to the day team."]
    changes = ["We moved the release train to Thursdays.", "Switched the team chat from Slack to Zulip."]
    assert all(pipeline.worded_as_change(text) for text in facts + changes)  # the rules alone: every one
    pipeline.intent_model = counting = CountingIntentModel(IntentModel.from_registry())
    assert [pipeline.worded_as_change(text) for text in facts + changes] == [False, False, True, True]
    assert pipeline.worded_as_change(facts[0]) is False and counting.texts == 4  # a reading is remembered ...
    pipeline.forget_texts([facts[0]])
    assert pipeline.worded_as_change(facts[0]) is False and counting.texts == 5  # ... until its text is forgotten
    model = RelationModel.load(threads=1)
    fact = candidate("staging", "The staging database is switched off every weekend to save money.", 0.6)
    text = "The staging database runs around the clock, weekends included."
    assert not pipeline.states_change(text)
    assert RelationJudge(model, states_change=pipeline.states_change).judge(text, [fact])[0].overruled
    read = RelationJudge(model, states_change=pipeline.states_change,
                         worded_as_change=pipeline.worded_as_change).judge(text, [fact])[0]
    assert read.relation.label == "UPDATE" and read.relation.confidence >= SURE_UPDATE and not read.overruled


def test_the_judge_asks_the_intent_model_nothing_more_about_a_message_the_analysis_read():
    """A save's analysis reads the message with the intent model; the judge's question, whether it states a change,
    is answered from that reading instead of a second call (2-4 ms of a save's p50 when the guard is reached)."""
    from memory_daemon.activation.analyzer import ActivationPipeline
    from memory_daemon.core.config import ActivationSettings
    from preprocessing.dedup import announces_change

    pipeline = ActivationPipeline(ActivationSettings())
    pipeline.load()
    pipeline.intent_model = counting = CountingIntentModel(pipeline.intent_model)
    message = "Halved that this week, the ops review wanted it stricter."
    neighbour = candidate("timeout", "The Brisk scheduler keeps a 20 minute job timeout.", 0.5)
    analysis = pipeline.analyze(message, neighbours=lambda _embedding: [neighbour])
    read = counting.texts
    assert read == 1 and analysis.deduplication is not None
    assert pipeline.states_change(message) == (announces_change(message) or analysis.intent.intent == "UPDATE_INFO")
    assert counting.texts == read
