"""Memories never go stale: updates, corrections and implicit updates supersede older memories, on save and on import."""

from __future__ import annotations

import random

import grpc
import pytest


@pytest.fixture(scope="module")
def daemon(module_daemon):
    """One daemon for the module: each test has its own namespace (a fresh daemon each cost ≈ 3 s)."""
    return module_daemon


def contents(hits) -> list[str]:
    return [h.memory.content for h in hits]


def test_an_update_supersedes_and_search_serves_the_current_memory(daemon):
    with daemon.client("ops") as client:
        old = client.save_memory(content="Deploys happen on Tuesdays").memory
        new = client.save_memory(content="Deploys happen on Thursdays now")
        assert list(new.superseded_memories) == [old.id]
        assert contents(client.search_memory(query="which day do deploys happen?").hits)[0] == "Deploys happen on Thursdays now"
        # The stale memory is still findable, but only after every current match.
        assert contents(client.search_memory(query="deploys tuesdays").hits) == [
            "Deploys happen on Thursdays now", "Deploys happen on Tuesdays"]
        history = client.search_memory(query="deploys tuesdays", include_history=True).hits
        stale = next(h.memory for h in history if h.memory.id == old.id)
        assert stale.superseded_by == new.memory.id and stale.superseded_at
        assert contents(history)[0] == "Deploys happen on Thursdays now"


def test_an_update_that_does_not_repeat_its_subject_uses_the_session(daemon):
    with daemon.client("ops-session") as client:
        old = client.save_memory(content="The team standup is at 9:30 every morning", session_id="s1").memory
        client.save_memory(content="I like my coffee black", session_id="s1")
        moved = client.save_memory(content="actually we moved it to 10:15", session_id="s1")
        assert old.id in moved.superseded_memories
        hits = client.search_memory(query="when is the standup?", include_history=True).hits
        assert hits[0].memory.id == moved.memory.id or hits[0].memory.superseded_by == ""


def test_explicit_supersedes_and_its_bad_input(daemon):
    with daemon.client("ops-explicit") as client:
        old = client.save_memory(content="Lunch order goes to Maria").memory
        new = client.save_memory(content="Lunch orders are collected by Tom", supersedes=old.id)
        assert list(new.superseded_memories) == [old.id]
        with pytest.raises(grpc.RpcError) as raised:
            client.save_memory(content="Something else entirely", supersedes="mem_doesnotexist")
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND
        assert "Something else entirely" not in contents(client.search_memory(query="something else entirely").hits)


def test_imports_apply_updates_in_time_order_not_arrival_order(daemon):
    chain = [
        ("v1", "The billing service runs on Python 3.9", "2025-01-10T09:00:00Z"),
        ("v2", "The billing service runs on Python 3.10", "2025-04-02T09:00:00Z"),
        ("v3", "The billing service runs on Python 3.11", "2025-08-20T09:00:00Z"),
        ("v4", "The billing service runs on Python 3.12", "2026-01-05T09:00:00Z"),
    ]
    records = [{"id": i, "text": t, "timestamp": ts} for i, t, ts in chain]
    records += [{"id": f"noise-{n}", "text": f"Note {n}: the office plant needs water", "timestamp": "2025-06-01T00:00:00Z"}
                for n in range(3)]
    random.Random(3).shuffle(records)
    with daemon.client("hist") as client:
        reply = client.import_records(records)
        assert reply.imported == 7 and not reply.errors
        assert reply.update_checks_pending == 7  # the statements are stored; their update checks run after
        assert client.wait_for_update_checks(120) == 0
        hits = client.search_memory(query="which Python does billing run on?").hits
        assert hits[0].memory.external_id == "v4"
        current = [h for h in hits if not h.memory.superseded_by]
        assert hits[: len(current)] == current  # every superseded version comes after every current memory
        assert {h.memory.external_id for h in current} & {"v1", "v2", "v3"} == set()
        history = client.search_memory(query="billing service python", include_history=True, limit=10).hits
        ranked = [h.memory.external_id for h in history if h.memory.external_id.startswith("v")]
        assert ranked[0] == "v4" and set(ranked) == {"v1", "v2", "v3", "v4"}


def test_import_counts_add_up_across_chunks(daemon):
    with daemon.client("bulk") as client:
        # Turns of a chat log (a speaker each): counting needs no relation model, which reads each statement's
        # nearest memories (≈ 50 ms a record here).
        records = [{"id": f"r{i}", "text": f"record number {i} about topic {i % 13}", "speaker": "user",
                    "session": "log"} for i in range(1203)]
        first = client.import_records(records)
        assert (first.imported, first.skipped) == (1203, 0)
        again = client.import_records(records)
        assert (again.imported, again.skipped) == (0, 1203)


def test_a_transcript_turn_keeps_the_turn_before_it_across_imports_and_sessions(daemon):
    """A reply is found by the words of what it answers: each turn keeps the turn before it in its session as context,
    also when that turn came in an earlier import, and never one from another session."""
    with daemon.client("transcript") as client:
        client.import_records([
            {"id": "a1", "text": "Did you finish the Tallow migration?", "speaker": "ana", "session": "s1",
             "timestamp": "2025-03-01T10:00:00Z"},
            {"id": "b1", "text": "What should we cook on Sunday?", "speaker": "ben", "session": "s2",
             "timestamp": "2025-03-01T10:01:00Z"}])
        client.import_records([
            {"id": "a2", "text": "Yes, last night!", "speaker": "ben", "session": "s1",
             "timestamp": "2025-03-01T10:02:00Z"},
            {"id": "c1", "text": "Hello there", "speaker": "cem", "session": "s3",
             "timestamp": "2025-03-01T10:03:00Z"},
            {"id": "b2", "text": "Lentil soup sounds good", "speaker": "ana", "session": "s2",
             "timestamp": "2025-03-01T10:04:00Z"}])
        context = {m.external_id: m.context for m in client.export_memories(limit=10).memories}
        assert context["a2"] == "in reply to: Did you finish the Tallow migration?"
        assert context["b2"] == "in reply to: What should we cook on Sunday?"
        assert context["a1"] == context["b1"] == context["c1"] == ""
        hits = client.search_memory(query="Tallow migration finished", limit=3, signals=["lexical"]).hits
        assert "a2" in [h.memory.external_id for h in hits]


def test_the_current_version_answers_a_question_only_the_outdated_one_matches(daemon):
    """Relevance found on a superseded memory passes to its successor, whatever words the successor uses."""
    with daemon.client("words") as client:
        old = client.save_memory(content="Deploys are on Tuesdays").memory
        client.save_memory(content="The office plant needs water on Fridays")
        new = client.save_memory(content="Shipping to production happens Thursday afternoons", supersedes=old.id).memory
        hits = client.search_memory(query="deploys tuesdays", signals=["lexical"]).hits
        assert hits[0].memory.id == new.id
        assert [h.memory.id for h in hits].index(old.id) > 0


def test_a_question_about_the_past_ranks_outdated_memories_by_relevance(daemon):
    with daemon.client("past") as client:
        old = client.save_memory(content="The ledger container used Python 3.11").memory
        client.save_memory(content="The ledger container uses Python 3.12 now", supersedes=old.id)
        for note in ("The ledger container image is built in CI on every merge",
                     "Ledger container logs go to Loki with a 14 day retention",
                     "The ledger container runs as a non-root user",
                     "Ledger container health checks hit /healthz every 10 seconds"):
            client.save_memory(content=note)
        before = client.search_memory(query="which Python did the ledger container use before the upgrade?", limit=3)
        assert old.id in [h.memory.id for h in before.hits]
        now = client.search_memory(query="which Python does the ledger container use?", limit=3)
        assert now.hits[0].memory.content == "The ledger container uses Python 3.12 now"


def test_unmarked_versions_of_one_statement_come_newest_first(daemon):
    """The last step of a chain says its change only by "after the upgrade", which neither the intent model nor the
    change rules read; the relation model reads it as updating the change before it and the first version both, so it
    replaces the change (RelationJudge.updates_an_earlier_version) and answers first."""
    records = [
        {"id": "first", "text": "The clusters run Kubernetes 1.26.", "timestamp": "2023-06-01T09:00:00Z"},
        {"id": "old", "text": "Upgraded the clusters to Kubernetes 1.28.", "timestamp": "2024-01-15T09:00:00Z"},
        {"id": "new", "text": "All clusters are on Kubernetes 1.30 after the upgrade.", "timestamp": "2025-02-24T09:00:00Z"},
        {"id": "other", "text": "The kubectl in the toolbox image is 1.31.", "timestamp": "2025-03-01T09:00:00Z"},
    ]
    with daemon.client("k8s") as client:
        client.import_records(records)
        assert client.wait_for_update_checks(120) == 0
        hits = client.search_memory(query="Which Kubernetes version do the clusters run?").hits
        ranked = [h.memory.external_id for h in hits]
        assert ranked.index("new") < ranked.index("old")
        successor = {m.external_id: m.superseded_by for m in client.export_memories(limit=10).memories}
        ids = {m.external_id: m.id for m in client.export_memories(limit=10).memories}
        assert successor["old"] == ids["new"] and successor["first"] == ids["old"] and not successor["other"]


def test_a_reversal_updates_what_replaced_the_original(daemon):
    """"Back to gofumpt" is closest to the outdated "formatted with gofumpt"; what it changes is "dropped gofumpt"."""
    records = [
        {"id": "m1", "text": "The Go code is formatted with gofumpt.", "timestamp": "2024-02-01T09:00:00Z"},
        {"id": "m2", "text": "We dropped gofumpt, plain gofmt only.", "timestamp": "2024-03-01T09:00:00Z"},
        {"id": "m3", "text": "We are back to gofumpt since the editor plugins support it now.",
         "timestamp": "2024-09-01T09:00:00Z"},
        {"id": "m4", "text": "The Python code is formatted with ruff format.", "timestamp": "2024-09-10T09:00:00Z"},
    ]
    with daemon.client("fmt") as client:
        client.import_records(list(reversed(records)))
        assert client.wait_for_update_checks(120) == 0
        history = client.search_memory(query="gofumpt go code formatting", include_history=True).hits
        by_id = {h.memory.external_id: h.memory for h in history}
        assert by_id["m2"].superseded_by == by_id["m3"].id
        assert by_id["m1"].superseded_by  # replaced by m2
        assert not by_id["m3"].superseded_by
        assert client.search_memory(query="Does the Go code use gofumpt?").hits[0].memory.external_id == "m3"


def test_a_pronoun_update_needs_something_in_common_with_what_it_updates(daemon):
    """"The dog ate a sock again" points back and says "again", but shares nothing with the allergy note."""
    with daemon.client("family") as client:
        allergy = client.save_memory(content="Theo is allergic to tree nuts and carries an EpiPen", session_id="d1").memory
        client.save_memory(content="The dog ate a sock again, the vet says it'll pass", session_id="d1")
        appointment = client.save_memory(content="Dentist appointment on 3 June at 8:00", session_id="d1").memory
        moved = client.save_memory(content="They just called and pushed it to 10 June, same time", session_id="d1")
        assert list(moved.superseded_memories) == [appointment.id]
        current = client.search_memory(query="Theo allergy EpiPen", include_history=True).hits
        assert next(h.memory for h in current if h.memory.id == allergy.id).superseded_by == ""
