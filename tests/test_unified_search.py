"""search_memory over facts, episodes and decisions as well as memories, on a real daemon and through the proxy."""

from __future__ import annotations

import json
import subprocess

import grpc
import pytest

from conftest import CORTEXD, mcp_session
from memory_daemon.client.python_client import as_dict
from memory_daemon.context.unified_search import KINDS, checked_kinds
from memory_daemon.core.errors import InvalidArgument

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def daemon(module_daemon):
    """One daemon for the module: each test seeds its own namespace (a fresh daemon each cost ≈ 3 s)."""
    return module_daemon


def _seed(client) -> dict[str, str]:
    ids = {}
    client.save_memory(content="Lunch is at noon at the Thai place near the office.")
    client.save_memory(content="The billing service is deployed with Argo CD every Thursday.", session_id="s1")
    client.upsert_fact(subject="billing_service", predicate="database", object="PostgreSQL 16", create_entities=True,
                       valid_from="2025-01-01T00:00:00Z")
    ids["pg17"] = client.upsert_fact(subject="billing_service", predicate="database", object="PostgreSQL 17",
                                     valid_from="2026-03-01T00:00:00Z").fact.id
    ids["owner"] = client.upsert_fact(subject="checkout_web", predicate="owner", object="Priya Raman",
                                      create_entities=True).fact.id
    ids["bug"] = client.record_episode(kind="bug_root_cause", title="duplicate invoices from the billing service",
                                       body="a retry without an idempotency key posted every invoice twice",
                                       entities=["billing_service"]).episode.id
    ids["queue"] = client.log_decision(type="architecture", question="Which message queue should the billing service use?",
                                       options=["Kafka", "SQS"], chosen="SQS", reasoning="managed and cheap at our volume",
                                       session_id="s1").decision.id
    ids["editor"] = client.log_decision(type="tooling", question="Which editor do we standardise on?",
                                        options=["VS Code", "Vim"], chosen="VS Code", reasoning="the team already uses it",
                                        session_id="s2").decision.id
    return ids


def _described(hit: dict) -> str:
    return hit[hit["kind"]]["id"]


def test_kinds_are_checked():
    assert checked_kinds([]) == ("memory",)
    assert checked_kinds(["all"]) == KINDS
    assert checked_kinds([" Fact ", "decision", "fact"]) == ("fact", "decision")
    with pytest.raises(InvalidArgument, match="kinds: unknown facts"):
        checked_kinds(["facts"])


def test_each_kind_answers_its_own_question_and_memories_stay_the_default(daemon):
    with daemon.client("shop-kinds") as client:
        ids = _seed(client)
        default = as_dict(client.search_memory(query="which database does the billing service use"))["hits"]
        assert default and {h["kind"] for h in default} == {"memory"}

        every = as_dict(client.search_memory(query="which database does the billing service use", kinds=["all"]))["hits"]
        assert {"memory", "fact", "decision"} <= {h["kind"] for h in every}
        assert all(h["signal_scores"] for h in every)  # every hit explains itself
        facts = [h for h in every if h["kind"] == "fact"]
        assert facts[0]["fact"]["id"] == ids["pg17"] and facts[0]["fact"]["status"] == "active"

        def first(query: str, kinds: list[str]) -> str:
            return _described(as_dict(client.search_memory(query=query, kinds=kinds))["hits"][0])

        assert first("who owns checkout web?", ["fact"]) == ids["owner"]
        assert first("why were invoices posted twice?", ["episode", "decision"]) == ids["bug"]
        assert first("what queue did we pick for billing", ["decision"]) == ids["queue"]
        assert first("which editor do we use", ["all"]) == ids["editor"]


def test_facts_that_are_no_longer_true_come_back_only_with_history(daemon):
    with daemon.client("shop-history") as client:
        ids = _seed(client)
        current = as_dict(client.search_memory(query="billing service database PostgreSQL", kinds=["fact"]))["hits"]
        assert [h["fact"]["object"] for h in current] == ["PostgreSQL 17"]
        history = as_dict(client.search_memory(query="billing service database PostgreSQL", kinds=["fact"],
                                               include_history=True))["hits"]
        assert history[0]["fact"]["id"] == ids["pg17"]
        assert {"superseded"} <= {h["fact"]["status"] for h in history[1:]}
        assert {h["fact"]["object"] for h in history[1:]} == {"PostgreSQL 16"}


def test_filters_apply_to_every_kind(daemon):
    with daemon.client("shop-filters") as client:
        ids = _seed(client)

        def found(**filters) -> set[str]:
            return {_described(h) for h in as_dict(client.search_memory(query="billing service", kinds=["all"],
                                                                        **filters))["hits"]}

        in_session = found(session_id="s1")
        assert ids["queue"] in in_session and ids["editor"] not in in_session and ids["pg17"] not in in_session
        about = found(entity="billing_service")
        assert ids["pg17"] in about and ids["owner"] not in about and ids["bug"] in about
        assert found(until="2000-01-01T00:00:00Z") == set()
        tagged = as_dict(client.search_memory(query="billing service", kinds=["all"], tags=["nothing-has-this"]))
        assert tagged["hits"] == []
        with pytest.raises(grpc.RpcError) as raised:
            client.search_memory(query="billing", kinds=["everything"])
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "kinds: unknown everything" in raised.value.details()


def test_new_items_are_found_by_the_next_search(daemon):
    with daemon.client("shop-new") as client:
        _seed(client)
        assert not [h for h in as_dict(client.search_memory(query="feature flags vendor", kinds=["fact"]))["hits"]
                    if "LaunchDarkly" in h["fact"]["object"]]
        added = client.upsert_fact(subject="checkout_web", predicate="feature_flags", object="LaunchDarkly").fact.id
        hits = as_dict(client.search_memory(query="feature flags vendor", kinds=["fact"]))["hits"]
        assert hits[0]["fact"]["id"] == added
        client.retire_fact(fact_id=added)  # ends now
        hits = as_dict(client.search_memory(query="feature flags vendor", kinds=["fact"]))["hits"]
        assert added not in {h["fact"]["id"] for h in hits}


async def test_search_memory_tool_returns_other_kinds_through_the_proxy(daemon):
    with daemon.client("shop-proxy") as client:
        ids = _seed(client)
    async with mcp_session(daemon.address, "shop-proxy") as host:
        tools = {t.name: t for t in (await host.list_tools()).tools}
        assert "kinds" in tools["search_memory"].input_schema["properties"]
        result = await host.call_tool("search_memory", {"query": "what queue did we pick for billing",
                                                        "kinds": ["decision"]})
        assert not result.is_error, result.content[0].text
        hits = json.loads(result.content[0].text)["hits"]
        assert hits[0]["kind"] == "decision" and hits[0]["decision"]["id"] == ids["queue"]


def test_cli_search_names_each_kind(daemon):
    with daemon.client("shop-cli") as client:
        ids = _seed(client)

    def cli(*args: str) -> str:
        done = subprocess.run(CORTEXD + ["search", *args, "--namespace", "shop-cli", "--daemon", daemon.address],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    hits = json.loads(cli("billing service database", "--kind", "fact", "--kind", "decision", "--json"))["hits"]
    assert {h["kind"] for h in hits} == {"fact", "decision"}
    text = cli("billing service database", "--kind", "all")
    assert f"{ids['pg17']}  billing_service database PostgreSQL 17" in text
    assert f"{ids['queue']}  decision: " in text


def test_compile_context_finds_episodes_and_decisions_by_meaning_not_by_one_shared_word(daemon):
    with daemon.client("ops") as client:
        crash = client.record_episode(kind="bug_root_cause", title="The nightly export crashed because the disk filled up",
                                      body="old archives were never rotated").episode.id
        editor = client.log_decision(type="tooling", question="Which editor do we standardise on?",
                                     options=["VS Code", "Vim"], chosen="VS Code",
                                     reasoning="the team already uses it").decision.id
        errors = client.log_decision(type="architecture", question="How do API errors look?",
                                     options=["RFC 7807 problem+json", "ad hoc"], chosen="RFC 7807 problem+json",
                                     reasoning="clients parse one format").decision.id
        # No word in common with the episode, but the same event.
        assert crash in client.compile_context(task="why did the overnight backup job fail?").markdown
        # One word in common with the editor decision ("standardise"), nothing in meaning.
        compiled = client.compile_context(task="standardise the error format of the API").markdown
        assert errors in compiled and editor not in compiled


def test_kinds_dataset_is_well_formed_and_spread_over_kinds():
    from memory_daemon.evals.kinds import DEFAULT_DATA, SECTIONS, check_scenarios
    from memory_daemon.evals.retrieval import read_jsonl

    scenarios = read_jsonl(DEFAULT_DATA)
    assert check_scenarios(scenarios) == []
    answered = {SECTIONS[section] for s in scenarios for q in s["questions"] for section in SECTIONS
                if any(i["id"] == q["answer"] for i in s.get(section, []))}
    assert answered == set(SECTIONS.values())
    broken = [{"id": "x", "memories": [{"id": "m1", "text": "t"}], "questions": [{"question": "q", "answer": "f9"}]}]
    assert check_scenarios(broken) == ["x: question 'q' answers unknown 'f9'"]


def test_interleaving_keeps_each_list_in_order():
    from memory_daemon.context.unified_search import SearchResult, _interleaved

    def hits(name: str, scores: list[float]) -> list[tuple[float, SearchResult]]:
        return [(s, SearchResult(name, f"{name}{i}", s)) for i, s in enumerate(scores)]

    merged = _interleaved(hits("m", [0.9, 0.2, 0.8]), hits("i", [0.85, 0.5]), 10)
    # m2 scores 0.8 but ranks after m1 in its own list, so it is capped at 0.2 and comes after both items.
    assert [h.row for h in merged] == ["m0", "i0", "i1", "m1", "m2"]
    assert len(_interleaved(hits("m", [0.9, 0.2]), hits("i", [0.5]), 2)) == 2


def test_item_embeddings_are_kept_in_the_store_across_restarts(tmp_path):
    import numpy as np

    from memory_daemon.graph.service import EpisodeInput, FactInput, GraphService
    from memory_daemon.retrieval.item_index import ItemIndex
    from memory_daemon.store import Database, GraphRepository
    from memory_daemon.store.items import ItemRepository

    embedded: list[str] = []

    def embed(texts: list[str]) -> np.ndarray:
        embedded.extend(texts)
        vectors = np.random.default_rng(len(embedded)).standard_normal((len(texts), 384)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    database = Database(tmp_path / "store.duckdb")
    graph = GraphService(GraphRepository(database))
    graph.upsert_fact("ops", FactInput("billing_service", "database", "PostgreSQL 17", create_entities=True))
    graph.record_episode("ops", EpisodeInput("incident", "checkout was down for ten minutes"))
    first = ItemIndex(ItemRepository(database), embed)
    first.refresh(["ops"])
    assert len(embedded) == 2
    before = first.nearest(["ops"], embed(["query"])[0], 10, -1.0, {i.id for i in first.items(["ops"], ("fact", "episode"), None)})
    embedded.clear()

    restarted = ItemIndex(ItemRepository(database), embed)  # a new daemon on the same store
    restarted.refresh(["ops"], ("episode",))  # compile_context's kinds first: the fact is read later, not embedded
    restarted.refresh(["ops"], ("fact",))
    assert embedded == []  # nothing embedded again
    graph.upsert_fact("ops", FactInput("billing_service", "owner", "payments team"))
    restarted.refresh(["ops"])
    assert embedded == ["billing_service owner payments team"]  # only what is new
    assert set(before) <= set(restarted.nearest(["ops"], embed(["query"])[0], 10, -1.0,
                                                {i.id for i in restarted.items(["ops"], ("fact", "episode"), None)}))
    database.close()


@pytest.fixture(scope="module")
def seeded_daemon(module_daemon):
    with module_daemon.client("shop") as client:
        ids = _seed(client)
    return module_daemon, ids


KIND_CHOICES = ["memory", "fact", "episode", "decision"]


def test_every_hit_honours_the_kinds_and_filters_asked_for(seeded_daemon):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    daemon, _ids = seeded_daemon

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(kinds=st.lists(st.sampled_from(KIND_CHOICES), max_size=4),
           query=st.sampled_from(["billing service", "which database", "queue", "invoices twice", "editor", "zzz"]),
           session=st.sampled_from(["", "s1", "s2"]), history=st.booleans(), limit=st.integers(1, 12),
           entity=st.sampled_from(["", "billing_service", "checkout_web"]))
    def check(kinds, query, session, history, limit, entity):
        with daemon.client("shop") as client:
            hits = as_dict(client.search_memory(query=query, kinds=kinds, session_id=session, include_history=history,
                                                limit=limit, entity=entity))["hits"]
        allowed = set(kinds) or {"memory"}
        assert len(hits) <= limit
        if allowed != {"memory"}:  # with other kinds, every hit is scored on one scale, down the list
            scores = [h["score"] for h in hits]
            assert scores == sorted(scores, reverse=True)
        for hit in hits:
            assert hit["kind"] in allowed and hit[hit["kind"]]["id"]
            row = hit[hit["kind"]]
            if hit["kind"] == "fact" and not history:
                assert row["status"] == "active"
            if session and hit["kind"] in ("memory", "decision"):
                assert row["session_id"] == session
            assert not (session and hit["kind"] in ("fact", "episode"))
            if entity and hit["kind"] == "fact":
                assert entity in (row["subject"], row["object"])

    check()
