"""Whose fact a statement states, from the real spaCy parse: the relation judge's overrule of another holder's update
(the real relation model reads the pairs below as updates, 0.99-1.00) and search's demotion of another holder's
look-alike. No text here is in a training file."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from memory_daemon.core.config import Limits
from memory_daemon.memory.service import MemoryService, NewMemory
from memory_daemon.retrieval.hybrid import other_holders_down
from memory_daemon.store import Database, MemoryRepository
from preprocessing.dedup import DedupAction, DedupCandidate
from preprocessing.entities import EntityExtractor
from preprocessing.holders import HolderReader, holders_differ
from preprocessing.relation_dedup import RelationJudge
from preprocessing.relation_model import RelationModel

OWN_ALLERGY = "I'm allergic to shellfish."
FRIENDS_RETEST = "priya's allergy retest came back clear, no shellfish allergy anymore"
OWN_TEAMS_REGION = "My team's jobs deploy to region eu-west."
OTHER_TEAMS_MOVE = "platform team moved their deploys to us-central"


@pytest.fixture(scope="module")
def reader():
    return HolderReader(EntityExtractor.load().parsed)


@pytest.fixture(scope="module")
def judges(reader):
    model = RelationModel.load(threads=1)
    return RelationJudge(model), RelationJudge(model, names_other_holder=reader.names_other_holder)


def test_possessors_and_named_groups_are_holders_and_time_is_not(reader):
    assert reader.holders("Lena's gym plan went up to 45 a month").others == {"lena"}
    assert reader.holders("the data team moved their standup to 10:00").others == {"data team"}
    assert reader.holders("I get three months' notice").others == frozenset()
    own = reader.holders("Our team's standup is at 9:30")
    assert own.first_person and own.others == frozenset()


@pytest.mark.parametrize("memory, new_text", [
    (OWN_ALLERGY, FRIENDS_RETEST),
    (OWN_TEAMS_REGION, OTHER_TEAMS_MOVE),
    ("The Quarry team's code reviews happen on Mondays.", "The Heron team moved their code reviews to Thursdays."),
])
def test_another_holders_change_is_named_as_such(reader, memory, new_text):
    assert reader.names_other_holder(memory, new_text)


@pytest.mark.parametrize("memory, new_text", [
    # the user's own change, a change that names the same holder, and a holder that is the new value
    (OWN_TEAMS_REGION, "We moved our deploys to us-central."),
    ("Priya's allergy clinic is at Elm Street.", "priya's allergy clinic moved to Dock Road"),
    ("The Ledger service is owned by the Quarry team.", "ledger svc ownership moved to the heron team"),
    ("My manager is Ines Ortega.", "Ines left; my manager is now Pavel Novak."),
])
def test_the_same_holder_or_a_new_value_is_not_another_holder(reader, memory, new_text):
    assert not reader.names_other_holder(memory, new_text)


@pytest.mark.parametrize("memory, new_text", [(OWN_ALLERGY, FRIENDS_RETEST), (OWN_TEAMS_REGION, OTHER_TEAMS_MOVE)])
def test_the_judge_keeps_the_users_fact_beside_another_holders_change(judges, memory, new_text):
    plain, with_holders = judges
    candidates = [DedupCandidate("m1", memory, 0.6)]
    assert plain.judge(new_text, candidates)[0].relation.label == "UPDATE"  # the model's error this overrules
    verdict = with_holders.check(new_text, candidates)
    assert verdict.action == DedupAction.NEW
    assert any("overruled: the new text is about another instance or holder" in r for r in verdict.reasons)


def test_the_judge_still_reads_the_users_own_change_as_an_update(judges):
    _, with_holders = judges
    verdict = with_holders.check("We moved our deploys to us-central.", [DedupCandidate("m1", OWN_TEAMS_REGION, 0.6)])
    assert verdict.action == DedupAction.UPDATE_CANDIDATE and verdict.memory_id == "m1"


def test_another_environments_change_is_overruled_without_the_parser(judges):
    plain, _ = judges
    verdict = plain.check("lowered the sandbox cache TTL to 30 secs",
                          [DedupCandidate("m1", "Production cache TTL is 300 seconds.", 0.6)])
    assert verdict.action == DedupAction.NEW
    assert any("another instance or holder" in r for r in verdict.reasons)


@pytest.mark.parametrize("text", ["knee's complaining, so back to the canal path for sunday rides",
                                  "Refit's done, the studio is open again on Mondays.", "Jonah's a good lead"])
def test_a_contraction_of_is_names_no_holder(reader, text):
    assert reader.holders(text).others == frozenset()


@pytest.mark.parametrize("text, holder", [
    ("Tomasz switched his gym sessions to Thursday mornings.", "tomasz"),
    ("marisol renewed hers, it runs till 2031 now", "marisol"),
    ("Grandad always said his blood group was B negative.", "grandad"),  # through the clause "his" sits in
    ("support got their on-call allowance raised to 30 euros", "support"),
])
def test_a_subject_its_own_possessive_points_back_to_is_a_holder(reader, text, holder):
    assert reader.holders(text).others == {holder}


def test_a_relative_as_the_subject_holds_the_fact_not_the_user(reader):
    read = reader.holders("My brother moved his dentist appointment to Friday.")
    assert read.others == {"brother"} and not read.first_person


@pytest.mark.parametrize("text", [
    "Marta said the client moved his meeting to Friday.",  # another subject comes between
    "Priya moved the standup to 10:30.",  # no possessive: Priya may move the user's standup
    "I told her my day off is Friday.",  # "her" is an object, not a possessive
    "The vendor moved their deadline to May.",  # a noun with a determiner
    "She's leaving, so his cousin Javier takes over the Tuesday class.",  # the pronoun is inside the subject
])
def test_a_subject_without_its_own_possessive_is_no_holder(reader, text):
    assert reader.holders(text).others == frozenset()


def test_the_users_own_named_pet_stays_the_users(reader):
    read = reader.holders("Our cat Biscuit loves her new kibble.")
    assert read.first_person and read.others == frozenset()


@pytest.mark.parametrize("question, text", [
    ("Is my mother still staying with us?", "Her flat's finally fixed, so Mum moved back home on Sunday."),
    ("What does my father drive these days?", "Dad's car is a green Skoda now."),
    ("Where is my grandmother living?", "Gran has moved her things into a flat in Orwick."),
])
def test_a_relative_named_otherwise_by_the_question_is_the_one_asked_about(reader, question, text):
    assert reader.holders(text).others  # the text names a holder...
    assert not holders_differ(question, reader.holders(question), text, reader.holders(text))  # ...the one asked about


def test_another_relative_is_still_another_holder(reader):
    question, text = "Is my mother still staying with us?", "Dad moved his workshop into the garage."
    assert holders_differ(question, reader.holders(question), text, reader.holders(text))


def test_a_relative_of_the_user_is_another_holder(reader):
    read = reader.holders("my sister's piano teacher is Mr. Adebayo")
    assert read.others == {"sister"} and not read.first_person


def read_now(reader: HolderReader):
    """Search's reading of memories, made now (the daemon keeps each memory's: tests/test_holder_readings.py)."""
    return lambda memories: reader.statements([m.content for m in memories])


@pytest.fixture()
def rows():
    root = Path(tempfile.mkdtemp(prefix="holders"))
    database = Database(root / "test.duckdb")
    service = MemoryService(MemoryRepository(database), Limits())

    def saved(*texts):
        ids = [service.save("holders", NewMemory(text)).memory.id for text in texts]
        return {row.id: row for row in service.open("holders", ids)}, ids
    yield saved
    database.close()
    shutil.rmtree(root, ignore_errors=True)


def test_search_puts_another_holders_look_alike_below_the_users_own(reader, rows):
    found, (theirs, mine, other) = rows("The platform team's retro moved to Thursdays this month.",
                                        "My retro is on Friday afternoons.", "Retro notes go in the team wiki.")
    final = {theirs: 0.056, mine: 0.055, other: 0.050}
    other_holders_down(final, found, "when is my retro?", reader.holders, read_now(reader), depth=5, factor=0.5)
    assert final == {theirs: 0.028, mine: 0.055, other: 0.050}
    asked_plainly = {theirs: 0.056, mine: 0.055, other: 0.050}
    other_holders_down(asked_plainly, found, "when is the retro?", reader.holders, read_now(reader), depth=5,
                       factor=0.5)
    assert asked_plainly == {theirs: 0.056, mine: 0.055, other: 0.050}  # no holder asked about: no change
    beyond = {theirs: 0.040, mine: 0.055, other: 0.050}
    other_holders_down(beyond, found, "when is my retro?", reader.holders, read_now(reader), depth=2, factor=0.5)
    assert beyond[theirs] == 0.040  # only the best `depth` current hits are read


def test_search_asked_about_a_named_holder_puts_another_ones_below(reader, rows):
    found, (bram, elin) = rows("My son Bram's school changed its finishing time to 15:40.",
                               "My daughter Elin's school finishes at 15:15.")
    final = {bram: 0.056, elin: 0.055}
    other_holders_down(final, found, "What time does Elin's school let out?", reader.holders, read_now(reader),
                       depth=5, factor=0.5)
    assert final[bram] == 0.028 and final[elin] == 0.055


@pytest.fixture(scope="module")
def model_reader():
    from preprocessing.holder_model import HolderModel

    return HolderReader(EntityExtractor.load().parsed, HolderModel.load().others)


def test_search_puts_a_change_the_holder_model_reads_as_anothers_below_the_users_own(model_reader, reader, rows):
    # No possessive, named group or pronoun pointing back: only the holder model reads Kofi's change as his own.
    found, (theirs, mine) = rows("Kofi got taken off the billing approvers last week.",
                                 "I'm on the approvers list for the billing repo.")
    final = {theirs: 0.056, mine: 0.055}
    other_holders_down(final, found, "can I approve merges in the billing repo?", model_reader.holders,
                       read_now(model_reader), depth=5, factor=0.5)
    assert final == {theirs: 0.028, mine: 0.055}
    without_the_model = {theirs: 0.056, mine: 0.055}
    other_holders_down(without_the_model, found, "can I approve merges in the billing repo?", reader.holders,
                       read_now(reader), depth=5, factor=0.5)
    assert without_the_model == {theirs: 0.056, mine: 0.055}
    # A question that asks for a person is answered by a statement naming one: the model's reading is not asked.
    asked_for_a_person = {theirs: 0.056, mine: 0.055}
    other_holders_down(asked_for_a_person, found, "who can approve merges in my billing repo?", model_reader.holders,
                       read_now(model_reader), depth=5, factor=0.5)
    assert asked_for_a_person == {theirs: 0.056, mine: 0.055}


@pytest.mark.parametrize("question, alone", [
    ("Which floor is my team on?", True),
    ("how do I take my coffee?", True),
    ("which floor is the team on?", False),  # not in the first person
    ("does my brother still like the pizza place?", False),  # a relative
    ("where does my mentor Kasia sit?", False),  # a capitalised name
    ("Who signs off my expenses now?", False),  # asks for a person
    ("What digits do I dial to reach the guy I climb with?", False),  # a person it does not name
    ("What did she say about my review?", False),  # a third-person pronoun
])
def test_a_question_about_the_users_own_alone(reader, question, alone):
    from preprocessing.holders import asks_only_of_the_user

    assert asks_only_of_the_user(question, reader.holders(question)) is alone


def test_an_assistants_note_about_the_user_is_not_read_as_anothers(model_reader, rows):
    # The holder model takes "the user" for a third party; search does not ask it about such a note.
    found, (note, other) = rows("The user dislikes comments that restate what the code does.",
                                "Kofi got taken off the billing approvers last week.")
    final = {note: 0.056, other: 0.055}
    other_holders_down(final, found, "how do I like my code comments?", model_reader.holders,
                       read_now(model_reader), depth=5, factor=0.5)
    assert final == {note: 0.056, other: 0.0275}
