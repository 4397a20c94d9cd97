"""compile_context on a real store: three tiers, citations, the token budget as a property, and no stale content."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_daemon.core.config import Limits, RetrievalSettings
from memory_daemon.journal.decisions import DecisionLog, NewDecision
from memory_daemon.store.decisions import DecisionRepository
from memory_daemon.core.errors import InvalidArgument
from memory_daemon.graph.service import FactInput, GraphService
from memory_daemon.memory.service import MemoryService, NewMemory
from memory_daemon.context.preflight import MIN_BUDGET, ContextCompiler, ContextLine, estimate_tokens, pack
from memory_daemon.store import Database, GraphRepository, MemoryRepository
from memory_daemon.context.unified_search import unified_search

NS = "shop"


@pytest.fixture(scope="module")
def compiler(tmp_path_factory):
    database = Database(tmp_path_factory.mktemp("preflight") / "store.duckdb")
    graph = GraphService(GraphRepository(database))
    memories = MemoryService(MemoryRepository(database), Limits(), graph=graph)
    for i in range(40):
        memories.save(NS, NewMemory(f"auth_service note {i}: token refresh runs every {i + 5} minutes on worker-{i % 4}"))
    old = memories.save(NS, NewMemory("auth_service signs tokens with JWT_HS256")).memory
    memories.save(NS, NewMemory("auth_service signs tokens with PASETO v4 since June", supersedes=old.id))
    graph.upsert_fact(NS, FactInput("auth_service", "token_format", "JWT_HS256", valid_from="2026-01-01T00:00:00Z",
                                    create_entities=True))
    graph.upsert_fact(NS, FactInput("auth_service", "token_format", "PASETO v4", valid_from="2026-06-01T00:00:00Z"))
    rotating = memories.save(NS, NewMemory("we are rotating auth_service keys today")).memory
    notes = lambda ns, session: [_note(rotating.id, rotating.content, 1.0), _note(old.id, old.content, 0.9)]  # noqa: E731
    decisions = DecisionLog(DecisionRepository(database))
    logged = decisions.log_decision(NS, NewDecision(type="architecture", question="How should auth_service sign tokens?",
                                                    chosen="PASETO v4", options=("JWT_HS256", "PASETO v4"),
                                                    reasoning="No shared secrets.", session_id="s1"))
    decisions.record_outcome(NS, logged.id, True, 0.8, "fewer key rotations")
    search = unified_search(memories, database, lambda texts: None, RetrievalSettings(), graph)
    yield ContextCompiler(memories, graph, search, notes, decisions), old.id
    database.close()


def _note(memory_id: str, text: str, relevance: float) -> ContextLine:
    return ContextLine(1, "note", memory_id, f"- {text} [MEM:{memory_id}]", relevance)


def test_three_tiers_with_citations(compiler):
    compiled = compiler[0].compile(NS, "change how auth_service signs tokens", "s1", 800)
    tiers = {line.tier for line in compiled.lines}
    assert tiers == {1, 2, 3}
    assert compiled.markdown.index("Working memory") < compiled.markdown.index("Relevant knowledge") \
        < compiled.markdown.index("Session summary")
    assert all("[" in line.text and "]" in line.text for line in compiled.lines)
    assert any(line.kind == "fact" and "PASETO v4" in line.text for line in compiled.lines)
    assert any(line.kind == "decision" and "(worked)" in line.text and "[DEC:" in line.text for line in compiled.lines)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=50, max_value=2000), task=st.sampled_from([
    "change how auth_service signs tokens", "why does token refresh fail on worker-2?", "auth_service", "lunch"]))
def test_never_over_budget_and_never_stale(compiler, budget, task):
    compiled = compiler[0].compile(NS, task, "s1", budget)
    assert compiled.tokens_used == estimate_tokens(compiled.markdown) <= budget
    assert "token_format JWT_HS256" not in compiled.markdown  # the superseded fact
    assert "with JWT_HS256" not in compiled.markdown and compiler[1] not in compiled.markdown  # the superseded memory


def test_a_session_note_whose_memory_was_superseded_is_left_out(compiler):
    compiled = compiler[0].compile(NS, "change how auth_service signs tokens", "s1", 2000)
    notes = [line.id for line in compiled.lines if line.kind == "note"]
    assert len(notes) == 1 and compiler[1] not in notes


def test_a_long_task_still_fits_the_smallest_budget(compiler):
    compiled = compiler[0].compile(NS, "change how auth_service signs tokens " * 100, "s1", MIN_BUDGET)
    assert compiled.tokens_used <= MIN_BUDGET and compiled.markdown.startswith("# Context for: change how")


def test_packing_prefers_utility_density():
    short = ContextLine(2, "memory", "a", "- short and useful [MEM:a]", 0.9)
    long = ContextLine(2, "memory", "b", "- " + "long " * 60 + "[MEM:b]", 1.0)
    chosen, left = pack([long, short], 40)
    assert [c.id for c in chosen] == ["a"] and [l.id for l in left] == ["b"]


def test_bad_budget_and_empty_task(compiler):
    with pytest.raises(InvalidArgument, match="max_tokens must be between 50 and 8000"):
        compiler[0].compile(NS, "x", "", 10)
    with pytest.raises(InvalidArgument, match="task must not be empty"):
        compiler[0].compile(NS, "  ", "", 350)


class _Recorded:
    """The real unified search, recording each query compile_context sends it."""

    def __init__(self, search) -> None:
        self.search_over, self.queries = search, []

    def search(self, query, kinds=(), episode_kinds=()):
        self.queries.append(query)
        return self.search_over.search(query, kinds, episode_kinds)


def test_compile_context_asks_for_a_search_the_reranker_does_not_read(tmp_path):
    """The reranker ([retrieval] rerank_depth) reads search_memory's best hits only: compile_context, which every
    prompt calls on a 30 ms budget, asks for its search unreranked (its gate reads the doubtful hits itself)."""
    database = Database(tmp_path / "store.duckdb")
    try:
        graph = GraphService(GraphRepository(database))
        memories = MemoryService(MemoryRepository(database), Limits(), graph=graph)
        memories.save(NS, NewMemory("the billing service caches invoices in Redis"))
        recorded = _Recorded(unified_search(memories, database, lambda texts: None, RetrievalSettings(), graph))
        ContextCompiler(memories, graph, recorded, lambda ns, session: []).compile(
            NS, "where does billing cache invoices?", "", 400)
        assert recorded.queries and all(query.rerank is False for query in recorded.queries)
        assert memories.search_query(NS, "where does billing cache invoices?", 10, (), "", "").rerank
    finally:
        database.close()
