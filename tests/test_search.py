"""Hybrid search on a real store: the code-aware tokenizer, BM25 ranking, fusion, decay, and filters."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from memory_daemon.core.config import Limits, RetrievalSettings
from memory_daemon.core.errors import InvalidArgument
from memory_daemon.memory.service import ImportItem, MemoryService, NewMemory
from memory_daemon.retrieval.hybrid import decay, fuse, temporal_score
from memory_daemon.store import Database, MemoryRepository, MemoryRow
from preprocessing.terms import identifiers, terms


@pytest.fixture
def memories(tmp_path):
    database = Database(tmp_path / "test.duckdb")
    repository = MemoryRepository(database)
    yield MemoryService(repository, Limits())
    database.close()


def test_terms_keep_versions_identifiers_and_paths():
    assert terms("What did I say about PostgreSQL 16?") == ["postgresql", "postgre", "sql", "16"]
    assert terms("auth_service uses JWT_HS256") == ["auth_service", "auth", "service", "use", "jwt_hs256", "jwt", "hs", "256"]
    assert terms("python 3.12 in src/app.py") == ["python", "3.12", "3", "12", "src/app.py", "src", "app", "py"]
    assert terms("deploys moved to Thursdays") == ["deploy", "move", "thursday"]
    assert identifiers("bump AuthService to v2 and 3.12, not 16") == {"authservice", "v2", "3.12"}


def test_bm25_prefers_rarer_and_more_matched_terms(memories):
    memories.save("ns", NewMemory("We use PostgreSQL 16 in production"))
    memories.save("ns", NewMemory("PostgreSQL is great"))
    memories.save("ns", NewMemory("Lunch is at noon"))
    hits = memories.search("ns", "postgresql 16 production", 10, (), "", "", ["lexical"])
    assert [h.memory.content for h in hits] == ["We use PostgreSQL 16 in production", "PostgreSQL is great"]
    assert hits[0].signal_scores["lexical"] > hits[1].signal_scores["lexical"] > 0


def test_exact_identifier_beats_its_parts(memories):
    memories.save("ns", NewMemory("the auth service team meets on Mondays about service auth"))
    memories.save("ns", NewMemory("auth_service signs tokens"))
    hits = memories.search("ns", "auth_service", 10, (), "", "", ["lexical"])
    assert hits[0].memory.content == "auth_service signs tokens"


def test_graph_signal_follows_shared_entities_two_hops(memories):
    memories.save("ns", NewMemory("The Billing API calls LedgerCore for every invoice"))
    memories.save("ns", NewMemory("LedgerCore is maintained by Ana Ruiz"))
    memories.save("ns", NewMemory("Lunch options near the office"))
    hits = memories.search("ns", "who maintains the thing the Billing API calls?", 10, (), "", "", ["graph"])
    assert [h.memory.content for h in hits][:2] == [
        "The Billing API calls LedgerCore for every invoice", "LedgerCore is maintained by Ana Ruiz"]


def test_unknown_signal_is_refused(memories):
    with pytest.raises(InvalidArgument, match="signals: unknown vector"):
        memories.search("ns", "x", 10, (), "", "", ["vector"])


def test_decay_math_against_known_values():
    assert decay(0, 30, "exponential") == 1.0
    assert decay(30, 30, "exponential") == pytest.approx(0.5)
    assert decay(90, 30, "exponential") == pytest.approx(0.125)
    assert decay(30, 30, "power") == pytest.approx(0.5)
    assert decay(90, 30, "power") == pytest.approx(0.25)  # the long tail: power law forgets slower
    now = datetime(2026, 6, 1)
    row = MemoryRow("m", "ns", "x", (), (), 1.0, now, now - timedelta(days=30), 0)
    settings = RetrievalSettings(half_life_days=30, use_boost=0.0)
    assert temporal_score(row, now, settings) == pytest.approx(0.5)
    used = MemoryRow("m", "ns", "x", (), (), 1.0, now, now - timedelta(days=30), 3)
    assert temporal_score(used, now, RetrievalSettings(half_life_days=30, use_boost=0.2)) == pytest.approx(
        0.5 * (1 + 0.2 * 1.3862943611198906))


def test_rrf_fusion_adds_weighted_reciprocal_ranks():
    fused = fuse({"lexical": {"a": 2.0, "b": 1.0}, "dense": {"b": 0.9, "c": 0.5}}, {"lexical": 1.0, "dense": 0.5}, 60)
    assert fused["b"] == pytest.approx(1 / 62 + 0.5 / 61)
    # A memory a signal did not find ranks just after the ones it found (2 found: rank 3).
    assert fused["a"] == pytest.approx(1 / 61 + 0.5 / 63)
    assert fused["c"] == pytest.approx(1 / 63 + 0.5 / 62)
    assert fused["b"] > fused["c"]
    tied = fuse({"lexical": {"a": 1.0, "b": 1.0, "c": 0.5}}, {"lexical": 1.0}, 60)
    assert tied["a"] == tied["b"] == pytest.approx(1 / 61) and tied["c"] == pytest.approx(1 / 63)


def test_reinforcement_changes_the_ranking(memories):
    first = memories.save("ns", NewMemory("staging database host is db-stg-1", strength=1.0)).memory
    second = memories.save("ns", NewMemory("staging database host is db-stg-2", strength=1.0)).memory
    before = [h.memory.id for h in memories.search("ns", "staging database", 10, (), "", "", ["temporal", "lexical"])]
    for _ in range(5):
        memories.touch("ns", before[-1], boost_strength=True)
    after = [h.memory.id for h in memories.search("ns", "staging database", 10, (), "", "", ["temporal", "lexical"])]
    assert set(before) == set(after) == {first.id, second.id}
    assert after[0] == before[-1]


def test_filters_by_tag_and_time(memories):
    memories.import_items([
        ImportItem("a", "deploy checklist v1", "ns", "2024-01-01T00:00:00Z"),
        ImportItem("b", "deploy checklist v2", "ns", "2025-06-01T00:00:00+02:00"),
    ])
    memories.save("ns", NewMemory("deploy checklist v3", tags=("Ops",)))
    assert [h.memory.content for h in memories.search("ns", "deploy", 10, ["ops"], "", "")] == ["deploy checklist v3"]
    window = memories.search("ns", "deploy", 10, (), "2025-01-01", "2025-12-31")
    assert [h.memory.content for h in window] == ["deploy checklist v2"]
    assert window[0].memory.created_at == datetime(2025, 5, 31, 22, 0)


def test_stopword_only_query_finds_nothing_and_empty_query_is_rejected(memories):
    memories.save("ns", NewMemory("the and of"))
    assert memories.search("ns", "what is the", 10, (), "", "") == []
    with pytest.raises(InvalidArgument, match="query must not be empty"):
        memories.search("ns", "  ", 10, (), "", "")


def test_entity_filter_keeps_only_memories_that_mention_it(memories):
    owner = memories.save("ns", NewMemory("Priya Raman owns the billing service")).memory
    database = memories.save("ns", NewMemory("The billing service runs on Postgres 16")).memory
    memories.save("ns", NewMemory("The search service runs on OpenSearch"))
    assert [h.memory.id for h in memories.search("ns", "billing service", 10, (), "", "", entity="Postgres 16")] == [
        database.id]
    assert [h.memory.id for h in memories.search("ns", "who owns billing", 10, (), "", "", entity="priya raman")] == [
        owner.id]
    assert memories.search("ns", "billing service", 10, (), "", "", entity="Kafka") == []
