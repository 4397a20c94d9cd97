"""Keyword search on a real store: terms, ranking and filters."""

from __future__ import annotations

from datetime import datetime

import pytest

from memory_daemon.config import Limits
from memory_daemon.errors import InvalidArgument
from memory_daemon.memories import ImportItem, MemoryService, NewMemory
from memory_daemon.search import KeywordSearcher, terms_of
from memory_daemon.store import Database, MemoryRepository


@pytest.fixture
def memories(tmp_path):
    database = Database(tmp_path / "test.duckdb")
    repository = MemoryRepository(database)
    yield MemoryService(repository, KeywordSearcher(repository), Limits())
    database.close()


def test_terms_keep_versions_identifiers_and_paths():
    assert terms_of("What did I say about PostgreSQL 16?") == ["postgresql", "16"]
    assert terms_of("auth_service uses JWT_HS256") == ["auth_service", "auth", "service", "uses", "jwt_hs256", "jwt", "hs256"]
    assert terms_of("python 3.12 in src/app.py") == ["python", "3.12", "3", "12", "src/app.py", "src", "app", "py"]


def test_ranking_prefers_more_matched_terms(memories):
    memories.save("ns", NewMemory("We use PostgreSQL 16 in production"))
    memories.save("ns", NewMemory("PostgreSQL is great"))
    memories.save("ns", NewMemory("Lunch is at noon"))
    hits = memories.search("ns", "postgresql 16 production", 10, (), "", "")
    assert [h.memory.content for h in hits] == ["We use PostgreSQL 16 in production", "PostgreSQL is great"]
    assert hits[0].score == 1.0 and hits[1].score == pytest.approx(1 / 3)


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
