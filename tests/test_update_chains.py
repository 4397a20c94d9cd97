"""Update chains whose links the embedding alone misses: reversals, restated versions, missed links in a chain,
pronoun updates that name people, and newer facts that only share a topic. Real daemon, real store, imports out of
order."""

from __future__ import annotations

import pytest

from preprocessing.context import names_no_subject
from preprocessing.dedup import (
    DedupAction, DedupCandidate, DeduplicationChecker, announces_change, announces_return, contradicts,
    names_other_instance, shares_topic,
)


@pytest.fixture(scope="module")
def daemon(module_daemon):
    return module_daemon


def imported(daemon, namespace: str, memories: list[tuple]) -> dict:
    """Import (id, text, timestamp[, session]) newest first; the stored memories by external id."""
    records = [{"id": m[0], "text": m[1], "timestamp": m[2], **({"session": m[3]} if len(m) > 3 else {})}
               for m in reversed(memories)]
    with daemon.client(namespace) as client:
        reply = client.import_records(records)
        assert not reply.errors and client.wait_for_update_checks(120) == 0
        return {m.external_id: m for m in client.export_memories(limit=100).memories}


def ranked(daemon, namespace: str, query: str) -> list[str]:
    with daemon.client(namespace) as client:
        return [hit.memory.external_id for hit in client.search_memory(query=query).hits]


# --- the text rules ---------------------------------------------------------------------------------------------

def test_a_name_after_a_change_marker_is_a_name():
    """"Actually Jonas will do it" names Jonas: the marker it follows does not make it the sentence's first word."""
    assert shares_topic("Actually Jonas will do it from now on.", "I pick up Theo from football on Thursdays.")
    # A capitalised first word followed by a verb ("Mia has ...") is a name too.
    assert shares_topic("Actually Sarah's mum will drive her there from now on.", "Mia has ballet on Tuesdays.")
    assert not shares_topic("The dog ate a sock again.", "Theo is allergic to tree nuts.")


def test_a_reverted_state_is_a_change():
    assert announces_change("Management reverted the Friday opening.")
    assert announces_return("Management reverted the Friday opening.")
    assert announces_return("We adopted a cat again.") and announces_return("Documents are back in Google Drive.")
    assert not announces_return("We adopted a cat from the shelter.")


def test_contradicts_needs_a_conflict_not_just_a_topic():
    assert contradicts("All clusters are on Kubernetes 1.30.", "The clusters run Kubernetes 1.28.")
    assert contradicts("Standup is at 10:15.", "Standup is at 9:30.")
    assert not contradicts("The gym opens at 6:00 on weekdays.", "The gym is open on Sundays.")


# --- links made on import ---------------------------------------------------------------------------------------

def test_a_return_to_a_replaced_state_updates_what_replaced_it(daemon):
    """"We adopted a cat again" is closer to the replaced "we have a cat" than to "we are pet-free now", and close to
    neither by MiniLM's measure: what it changes is the current version of the state it restores."""
    stored = imported(daemon, "pets", [
        ("cat", "We have a cat, a tabby called Mochi.", "2021-03-01T10:00:00Z"),
        ("none", "Mochi moved in with my sister, we are pet-free now.", "2022-08-01T10:00:00Z"),
        ("again", "We adopted a cat again, a black kitten from the shelter named Pepper.", "2024-02-01T10:00:00Z"),
        ("dog", "My sister also has a dog.", "2024-03-01T10:00:00Z"),
    ])
    assert stored["cat"].superseded_by == stored["none"].id
    assert stored["none"].superseded_by == stored["again"].id
    assert not stored["again"].superseded_by and not stored["dog"].superseded_by
    assert ranked(daemon, "pets", "Do we have a cat?")[0] == "again"


def test_a_pronoun_update_that_names_people_updates_the_session_memory(daemon):
    stored = imported(daemon, "kids", [
        ("ballet", "Mia has ballet on Tuesdays at 16:00.", "2024-09-01T18:00:00Z", "evening"),
        ("driver", "Actually Sarah's mum will drive her there from now on.", "2024-09-01T18:02:00Z", "evening"),
        ("swim", "Mia has swimming on Fridays.", "2024-09-03T18:00:00Z"),
    ])
    assert stored["ballet"].superseded_by == stored["driver"].id
    assert not stored["swim"].superseded_by
    assert ranked(daemon, "kids", "Who takes Mia to ballet?")[0] == "driver"


# --- ranking when a link is missing -----------------------------------------------------------------------------

def test_a_reversal_answers_before_the_states_it_reverses_even_unlinked(daemon):
    """The rule and its reversal share few words with what they change; whether or not the relation model links
    them, the reversal, which says an earlier state is back, answers first."""
    stored = imported(daemon, "office", [
        ("remote", "The whole team works fully remote.", "2023-01-01T10:00:00Z"),
        ("rule", "New rule: everyone comes to the office on Mondays and Wednesdays.", "2023-06-01T10:00:00Z"),
        ("reversed", "The office rule was reversed; we are all remote again.", "2024-01-01T10:00:00Z"),
        ("coffee", "The office kitchen got a new coffee machine.", "2024-01-05T10:00:00Z"),
    ])
    assert not stored["coffee"].superseded_by and not stored["reversed"].superseded_by
    hits = ranked(daemon, "office", "Do we have to come to the office?")
    assert hits[0] == "reversed" and hits.index("rule") > 0


def test_a_version_repeated_before_its_update_is_outdated_too(daemon):
    """The reminder restates the old memory and the pronoun update supersedes the reminder; the old memory, which
    the question matches best, must not answer before the update, whether or not it was linked too."""
    stored = imported(daemon, "search", [
        ("old", "The search cluster runs Elasticsearch 7.10.", "2024-01-10T10:00:00Z"),
        ("reminder", "Quick reminder: search still runs on Elasticsearch 7.10.", "2024-06-03T14:00:00Z", "review"),
        ("move", "The review agreed we'll migrate it to OpenSearch 2.13, infra owns it.", "2024-06-03T14:02:00Z",
         "review"),
        ("logs", "The logging stack stays on Elasticsearch 8.", "2024-06-10T10:00:00Z"),
    ])
    assert stored["reminder"].superseded_by == stored["move"].id and not stored["logs"].superseded_by
    hits = ranked(daemon, "search", "Which engine does the search cluster run?")
    assert hits[0] == "move" and hits.index("old") > 0


def test_a_chain_with_a_missed_link_still_answers_with_its_end(daemon):
    """"Ben is the on-call lead" may not be linked to "the on-call lead is Marta" (no change marker); the chain still
    answers with its end, and the deputy, another attribute, stays current. The relation model reads "Chen's deputy
    on call is Priya" after "The on-call lead is now Chen; …" as UPDATE 0.96 (its known error after a memory worded as
    a change); the judge keeps both, since the deputy's text does not say it changes anything."""
    stored = imported(daemon, "oncall", [
        ("marta", "The on-call lead is Marta.", "2022-01-01T10:00:00Z"),
        ("ben", "After the rotation change, Ben is the on-call lead.", "2023-01-01T10:00:00Z"),
        ("chen", "The on-call lead is now Chen; Ben moved to the platform team.", "2024-01-01T10:00:00Z"),
        ("deputy", "Chen's deputy on call is Priya.", "2024-01-05T10:00:00Z"),
    ])
    assert stored["ben"].superseded_by == stored["chen"].id and not stored["deputy"].superseded_by
    hits = ranked(daemon, "oncall", "Who is the on-call lead?")
    assert hits[0] == "chen" and hits.index("marta") > 0


def test_a_newer_fact_on_the_same_topic_that_contradicts_nothing_keeps_its_place(daemon):
    imported(daemon, "gym", [
        ("sundays", "The gym is open on Sundays.", "2023-01-01T10:00:00Z"),
        ("hours", "The gym opens at 6:00 on weekdays.", "2024-01-01T10:00:00Z"),
    ])
    assert ranked(daemon, "gym", "Is the gym open on Sundays?")[0] == "sundays"


def test_another_environment_is_another_thing_not_a_new_value():
    assert names_other_instance("Production has SSO enabled with Okta.", "SSO on staging is disabled for now.")
    assert not names_other_instance("SSO on staging is disabled for now.", "The staging environment has SSO enabled.")
    verdict = DeduplicationChecker().compare("The production API key is stored in 1Password.", DedupCandidate(
        "m", "The staging API key is stored in 1Password.", 0.83))
    assert verdict.action != DedupAction.UPDATE_CANDIDATE


def test_a_statement_about_production_does_not_supersede_one_about_staging(daemon):
    """"Enabled" reads as a change, and the two are close; but production's SSO is not staging's."""
    stored = imported(daemon, "sso", [
        ("on", "The staging environment has SSO enabled.", "2024-01-01T10:00:00Z"),
        ("off", "SSO on staging is disabled until the IdP migration is done.", "2024-03-01T10:00:00Z"),
        ("prod", "Production has SSO enabled with Okta.", "2024-03-02T10:00:00Z"),
    ])
    assert stored["on"].superseded_by == stored["off"].id
    assert not stored["off"].superseded_by
    assert ranked(daemon, "sso", "Is SSO enabled on staging?")[0] == "off"


# --- statements that lean on what came before, and partial updates -------------------------------------------------

def test_a_statement_that_names_its_subject_only_by_pronoun_leans_on_what_came_before():
    assert names_no_subject("She moved it to Wednesdays, same time.")
    assert names_no_subject("Bumped it to 2.0 this week, tests all pass.")
    assert not names_no_subject("Replaced Celery with Dramatiq for background jobs.")  # names what it changes
    assert not names_no_subject("The gym raised its monthly fee to 39 euros.")  # "its" is the gym's
    assert not names_no_subject("Need to renew the passport before June.")


def test_an_update_that_says_it_for_its_subject_retires_the_memory_it_refers_to(daemon):
    """"Upgraded it to 22" shares no word and little meaning with "runs on Node 18": the memories just before it are
    read with it by the relation model, whatever their cosine; the one it updates is retired, the other stays."""
    stored = imported(daemon, "billing", [
        ("node", "The billing job runs on Node 18.", "2024-02-01T10:00:00Z"),
        ("logs", "Billing job logs go to Loki.", "2024-02-03T10:00:00Z"),
        ("upgrade", "Upgraded it to 22 last night.", "2024-06-10T09:00:00Z"),
    ])
    assert stored["node"].superseded_by == stored["upgrade"].id
    assert not stored["logs"].superseded_by and not stored["upgrade"].superseded_by
    assert ranked(daemon, "billing", "Which Node version does the billing job use?")[0] == "upgrade"


def test_a_pronoun_update_is_matched_by_meaning_when_the_model_would_take_any_memory(daemon):
    """The relation model reads "she switched it to Thursdays" as an update of "Ms. Ortega lives in Valencia" (1.00):
    of the memories it could refer to, the closest in meaning is the one it revises. Relation runs 12 and 15 read it as
    a whole UPDATE of the class memory (run 10: a partial one), so the class is retired and its successor inherits its
    match on "Spanish" and ranks first on it (xfail from run 12 to session 39); the reranker, on by default since
    session 39, reads "She switched it to Thursdays" as no answer to where the teacher lives, and "Ms. Ortega lives in
    Valencia" comes first again."""
    stored = imported(daemon, "spanish", [
        ("class", "My Spanish class with Ms. Ortega is on Tuesdays at 7 pm.", "2024-01-09T19:00:00Z"),
        ("home", "Ms. Ortega lives in Valencia.", "2024-01-12T10:00:00Z"),
        ("moved", "She switched it to Thursdays.", "2024-03-01T10:00:00Z"),
    ])
    assert not stored["home"].superseded_by
    assert ranked(daemon, "spanish", "Where does my Spanish teacher live?")[0] == "home"


def test_a_partial_update_answers_what_changed_and_the_original_answers_the_rest(daemon):
    stored = imported(daemon, "offsite", [
        ("plan", "Offsite: fly to Lyon on 3 June, hotel Bellecour, return flight 6 June.", "2024-04-02T10:00:00Z"),
        ("bike", "I'll bring the folding bike on the offsite.", "2024-04-10T10:00:00Z"),
        ("return", "The return flight from the offsite moved to 7 June.", "2024-05-02T10:00:00Z"),
    ])
    assert not stored["plan"].superseded_by  # still true for the hotel and the outbound flight
    assert ranked(daemon, "offsite", "When is my return flight from the offsite?")[0] == "return"
    assert ranked(daemon, "offsite", "Which hotel is the offsite in?")[0] == "plan"


def test_an_imported_change_retires_what_it_changes_and_not_a_sibling_it_reads_as_changed(daemon):
    """The relation model reads "judo is now on Saturdays" as a sure update of the guitar lesson on the same day too,
    and "billing is on MySQL 8.0, not 5.7" of the backup schedule: only the memory changed is retired."""
    stored = imported(daemon, "siblings", [
        ("judo", "Leo's judo class is on Wednesdays at 5pm.", "2024-01-10T10:00:00Z"),
        ("guitar", "Leo's guitar lesson is on Wednesdays at 6pm.", "2024-02-10T10:00:00Z"),
        ("moved", "Leo moved up a belt, so judo is now on Saturdays at 10am.", "2024-05-10T10:00:00Z"),
        ("db", "The billing service's database is MySQL 5.7 on db-bill-1.", "2024-01-11T10:00:00Z"),
        ("backup", "Billing database backups run every night at 01:00.", "2024-02-11T10:00:00Z"),
        ("fix", "I misread the console, billing is on MySQL 8.0, not 5.7.", "2024-05-11T10:00:00Z"),
    ])
    assert stored["judo"].superseded_by == stored["moved"].id and stored["db"].superseded_by == stored["fix"].id
    assert not stored["guitar"].superseded_by and not stored["backup"].superseded_by
    assert ranked(daemon, "siblings", "When is Leo's guitar lesson?")[0] == "guitar"
