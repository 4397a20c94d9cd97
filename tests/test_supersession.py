"""Memories never go stale: updates, corrections and implicit updates supersede older memories, on save and on import."""

from __future__ import annotations

import random

import grpc
import pytest


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
    with daemon.client("ops") as client:
        old = client.save_memory(content="The team standup is at 9:30 every morning", session_id="s1").memory
        client.save_memory(content="I like my coffee black", session_id="s1")
        moved = client.save_memory(content="actually we moved it to 10:15", session_id="s1")
        assert old.id in moved.superseded_memories
        hits = client.search_memory(query="when is the standup?", include_history=True).hits
        assert hits[0].memory.id == moved.memory.id or hits[0].memory.superseded_by == ""


def test_explicit_supersedes_and_its_bad_input(daemon):
    with daemon.client("ops") as client:
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
        records = [{"id": f"r{i}", "text": f"record number {i} about topic {i % 13}"} for i in range(1203)]
        first = client.import_records(records)
        assert (first.imported, first.skipped) == (1203, 0)
        again = client.import_records(records)
        assert (again.imported, again.skipped) == (0, 1203)
