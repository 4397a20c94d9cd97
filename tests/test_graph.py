"""The bi-temporal graph on a real DuckDB file: supersession, corrections, time travel on both axes, traversal, bad input."""

from __future__ import annotations

import time

import pytest

from memory_daemon.core.errors import InvalidArgument, NotFound
from memory_daemon.graph.service import EpisodeInput, FactInput, GraphService, fact_status, merkle_root
from memory_daemon.store import Database, GraphRepository
from memory_daemon.core.timefmt import format_iso, utc_now

NS = "proj"


@pytest.fixture
def graph(tmp_path):
    database = Database(tmp_path / "graph.duckdb")
    yield GraphService(GraphRepository(database))
    database.close()


def fact(subject, predicate, obj, valid_from="", **kw) -> FactInput:
    return FactInput(subject=subject, predicate=predicate, object=obj, valid_from=valid_from,
                     create_entities=True, **kw)


def active_values(graph, entity, predicate):
    view = graph.query_entity(NS, entity, 0, False)
    return sorted(f.object_value for f in view.active if f.predicate == predicate)


def values_at(graph, entity, valid_at, known_at=""):
    _, _, facts, _ = graph.time_travel(NS, valid_at, known_at, entity, 100)
    return sorted((f.predicate, f.object_value) for f in facts)


def test_supersession_chain_of_five_keeps_every_version(graph):
    versions = ["Redis 3", "Redis 4", "Redis 5", "Redis 6", "Redis 7"]
    outcomes = [graph.upsert_fact(NS, fact("cache_service", "cache", v, f"202{i}-01-01T00:00:00Z"))
                for i, v in enumerate(versions)]
    assert [o.status for o in outcomes] == ["created"] * 5
    # Each new version ended exactly the one before it, at its own valid_from.
    for previous, outcome in zip(outcomes, outcomes[1:]):
        (ended,) = outcome.superseded
        assert ended.object_value == previous.fact.object_value
        assert ended.valid_to == outcome.fact.valid_from
        assert ended.superseded_by == outcome.fact.id
    assert active_values(graph, "cache_service", "cache") == ["Redis 7"]
    view = graph.query_entity(NS, "cache_service", 0, False)
    assert [f.object_value for f in view.history] == versions[:4]
    assert all(fact_status(f, utc_now()) == "superseded" for f in view.history)
    # Links point at the successor's current version, although each successor was re-cut when it ended.
    chain = [*view.history, *view.active]
    assert [f.superseded_by for f in chain] == [f.id for f in chain[1:]] + [None]
    for i, version in enumerate(versions):
        assert values_at(graph, "cache_service", f"202{i}-06-01T00:00:00Z") == [("cache", version)]


def test_half_open_interval_boundaries(graph):
    graph.upsert_fact(NS, fact("auth_service", "token_format", "JWT_HS256", "2026-01-01T00:00:00Z"))
    graph.upsert_fact(NS, fact("auth_service", "token_format", "PASETO v4", "2026-03-01T00:00:00Z"))
    # [from, to): the old value holds up to, not at, the change; the new one holds from the change on.
    assert values_at(graph, "auth_service", "2026-02-28T23:59:59.999999Z") == [("token_format", "JWT_HS256")]
    assert values_at(graph, "auth_service", "2026-03-01T00:00:00Z") == [("token_format", "PASETO v4")]
    assert values_at(graph, "auth_service", "2025-12-31T23:59:59Z") == []
    assert values_at(graph, "auth_service", "2026-01-01T00:00:00Z") == [("token_format", "JWT_HS256")]


def test_correction_retracts_on_the_recorded_axis_only(graph):
    first = graph.upsert_fact(NS, fact("billing", "database", "Redis 6", "2026-01-01T00:00:00Z"))
    before_correction = format_iso(utc_now())
    time.sleep(0.002)
    corrected = graph.upsert_fact(NS, fact("billing", "database", "Redis 7", correction=True))
    assert corrected.status == "corrected"
    assert first.fact.id in corrected.retracted_ids and not corrected.superseded
    # The correction covers the same valid interval as the retracted fact.
    assert corrected.fact.valid_from == first.fact.valid_from and corrected.fact.valid_to is None
    assert corrected.fact.replaces == first.fact.id
    # Now we believe it was always Redis 7 ...
    assert values_at(graph, "billing", "2026-02-01T00:00:00Z") == [("database", "Redis 7")]
    # ... but before the correction we believed Redis 6 for the same valid time.
    assert values_at(graph, "billing", "2026-02-01T00:00:00Z", before_correction) == [("database", "Redis 6")]
    history = graph.query_entity(NS, "billing", 0, True).history
    assert [(f.object_value, fact_status(f, utc_now())) for f in history] == [("Redis 6", "retracted")]
    assert graph.query_entity(NS, "billing", 0, False).history == ()


def test_what_we_believed_on_march_first_about_february(graph):
    graph.upsert_fact(NS, fact("api", "framework", "Flask", "2026-01-01T00:00:00Z"))
    march_first = format_iso(utc_now())
    time.sleep(0.002)
    # Learned later: the switch had happened on February 10.
    graph.upsert_fact(NS, fact("api", "framework", "FastAPI", "2026-02-10T00:00:00Z"))
    assert values_at(graph, "api", "2026-02-20T00:00:00Z", march_first) == [("framework", "Flask")]
    assert values_at(graph, "api", "2026-02-20T00:00:00Z") == [("framework", "FastAPI")]
    assert values_at(graph, "api", "2026-02-01T00:00:00Z") == [("framework", "Flask")]


def test_out_of_order_insert_lands_in_its_place(graph):
    graph.upsert_fact(NS, fact("svc", "runtime", "Python 3.12", "2026-06-01T00:00:00Z"))
    graph.upsert_fact(NS, fact("svc", "runtime", "Python 3.10", "2026-01-01T00:00:00Z"))  # earlier, arrives later
    graph.upsert_fact(NS, fact("svc", "runtime", "Python 3.11", "2026-03-01T00:00:00Z"))  # in between
    assert active_values(graph, "svc", "runtime") == ["Python 3.12"]
    assert values_at(graph, "svc", "2026-02-01T00:00:00Z") == [("runtime", "Python 3.10")]
    assert values_at(graph, "svc", "2026-04-01T00:00:00Z") == [("runtime", "Python 3.11")]
    assert values_at(graph, "svc", "2026-07-01T00:00:00Z") == [("runtime", "Python 3.12")]
    history = graph.query_entity(NS, "svc", 0, False).history
    assert [(f.object_value, format_iso(f.valid_to)[:10]) for f in history] == [
        ("Python 3.10", "2026-03-01"), ("Python 3.11", "2026-06-01")]


def test_accumulating_predicates_and_repeats(graph):
    graph.upsert_fact(NS, fact("web", "depends_on", "Redis"))
    graph.upsert_fact(NS, fact("web", "depends_on", "PostgreSQL"))
    again = graph.upsert_fact(NS, fact("web", "depends_on", "postgres"))  # same technology, other spelling
    assert again.status == "unchanged"
    assert active_values(graph, "web", "depends_on") == ["PostgreSQL", "Redis"]
    same = graph.upsert_fact(NS, fact("web", "owner", "Priya"))
    assert graph.upsert_fact(NS, fact("web", "owner", "priya")).status == "unchanged"
    assert same.fact.singular


def test_retire_ends_a_fact_without_replacement(graph):
    kept = graph.upsert_fact(NS, fact("web", "depends_on", "Redis", "2026-01-01T00:00:00Z"))
    retired, retracted = graph.retire_fact(NS, kept.fact.id, "2026-05-01T00:00:00Z")
    assert retracted == (kept.fact.id,) and format_iso(retired.valid_to).startswith("2026-05-01")
    assert active_values(graph, "web", "depends_on") == []
    assert values_at(graph, "web", "2026-04-01T00:00:00Z") == [("depends_on", "Redis")]


def test_k_hop_traversal_ignores_superseded_edges(graph):
    graph.upsert_fact(NS, fact("checkout", "depends_on", "payments", object_kind="entity"))
    graph.upsert_fact(NS, fact("payments", "database", "MySQL", "2026-01-01T00:00:00Z", object_kind="entity"))
    graph.upsert_fact(NS, fact("payments", "database", "PostgreSQL", "2026-04-01T00:00:00Z", object_kind="entity"))
    graph.upsert_fact(NS, fact("PostgreSQL", "hosted_on", "rds-prod", object_kind="entity"))
    hops = lambda k: {e.name: d for e, d in graph.query_entity(NS, "checkout", k, False).neighbourhood}  # noqa: E731
    assert hops(1) == {"checkout": 0, "payments": 1}
    assert hops(2) == {"checkout": 0, "payments": 1, "PostgreSQL": 2}  # MySQL's edge is superseded
    assert hops(3) == {"checkout": 0, "payments": 1, "PostgreSQL": 2, "rds-prod": 3}
    edges = graph.query_entity(NS, "checkout", 2, False).edges
    assert all(e.object_value != "MySQL" for e in edges)


def test_episodes_link_to_entities_and_show_in_queries(graph):
    graph.upsert_fact(NS, fact("auth_service", "token_format", "JWT_HS256"))
    episode, created = graph.record_episode(NS, EpisodeInput(
        kind="adr", title="ADR-7: move auth tokens to PASETO v4", body="HS256 keys leaked twice.",
        files=("auth/tokens.py",), entities=("auth_service", "PASETO"), create_entities=True))
    assert [e.name for e in created] == ["PASETO"]
    assert episode.sha256 and episode.files == ("auth/tokens.py",)
    assert [e.id for e in graph.query_entity(NS, "auth_service", 0, False).episodes] == [episode.id]


def test_integrity_hashes_and_merkle_root_change_with_content(graph):
    graph.upsert_fact(NS, fact("a", "b", "c"))
    report = graph.verify_integrity(NS)
    assert report.ok and report.rows_checked == 1
    graph.record_episode(NS, EpisodeInput(kind="invariant", title="money is integer cents"))
    again = graph.verify_integrity(NS)
    assert again.ok and again.rows_checked == 2 and again.merkle_root != report.merkle_root
    assert merkle_root([("x", "1"), ("y", "2")]) != merkle_root([("y", "2"), ("x", "1")])


@pytest.mark.parametrize("request_, message", [
    (fact("s", "p", "o", "2026-05-01T00:00:00Z", valid_to="2026-04-01T00:00:00Z"), "must be later than valid_from"),
    (fact("s", "p", "o", "yesterday"), "not an ISO-8601 time"),
    (fact("s", "p", "o", valid_to="31/12/2026"), "not an ISO-8601 time"),
    (fact("s", "!!!", "o"), "not a usable name"),
    (fact("", "p", "o"), "subject is empty"),
    (fact("s", "p", "o", confidence=1.5), "confidence must be in [0, 1]"),
    (fact("s", "p", "o", object_kind="thing"), "object_kind"),
    (FactInput(subject="nobody", predicate="p", object="o"), "pass create_entities=true"),
    (FactInput(subject="ent_0000000000000000", predicate="p", object="o", create_entities=True), "no entity with id"),
    (fact("s", "p", "o", correction=True), "nothing to correct"),
])
def test_bad_fact_input_is_refused_and_nothing_is_written(graph, request_, message):
    with pytest.raises((InvalidArgument, NotFound), match=message.replace("[", r"\[").replace("]", r"\]")):
        graph.upsert_fact(NS, request_)
    counts = graph.counts(NS)
    assert (counts.entities, counts.active_facts, counts.retracted_facts) == (0, 0, 0)


def test_bad_episode_and_relation_input(graph):
    with pytest.raises(InvalidArgument, match="kind 'diary' is not one of"):
        graph.record_episode(NS, EpisodeInput(kind="diary", title="x"))
    with pytest.raises(NotFound, match="pass create_entities=true"):
        graph.record_episode(NS, EpisodeInput(kind="adr", title="x", entities=("ghost",)))
    with pytest.raises(NotFound, match="no memory, entity, episode or fact"):
        graph.create_relation(NS, "mem_missing", "see_also", "ep_missing", None)
    assert graph.counts(NS).episodes == 0 and graph.counts(NS).entities == 0


def test_timezone_naive_times_are_utc(graph):
    naive = graph.upsert_fact(NS, fact("s", "p", "o", "2026-03-01T12:00:00"))
    zoned = graph.upsert_fact(NS, fact("t", "p", "o", "2026-03-01T14:00:00+02:00"))
    assert naive.fact.valid_from == zoned.fact.valid_from


def test_python_and_sql_digests_agree_on_awkward_values(graph, tmp_path):
    from datetime import datetime

    from memory_daemon.store.graph import FactRow, row_digest

    repository = GraphRepository(graph._db)
    rows = [
        FactRow(f"fact_{i}", NS, "ent_x", "p", object_id, value, datetime(2026, 1, 2, 3, 4, 5, micro),
                valid_to, datetime(2026, 5, 1, 0, 0, 0, 1), None, None, replaces, singular, confidence, source)
        for i, (object_id, value, micro, valid_to, replaces, singular, confidence, source) in enumerate([
            (None, "naïve café ☕ \u0000-free", 0, None, None, True, 1.0, ""),
            ("ent_y", "x", 999999, datetime(2027, 1, 1), "fact_0", False, 1 / 3, "mem_1"),
            (None, "", 1, None, None, True, 1e-7, "a\u001fb"),  # a separator inside a value
            (None, "0.1", 123, None, None, False, 0.1, "0.85"),
        ])
    ]
    with graph._db.transaction() as cursor:
        repository.insert_facts(cursor, rows)
        repository.retract_facts(cursor, rows[:1], datetime(2026, 6, 1, 12, 0, 0, 42))
    leaves, mismatches = repository.digests([NS])
    assert mismatches == [] and len(leaves) == len(rows)
    assert dict(leaves)["fact_3"] == row_digest(rows[3])


def test_a_failed_write_leaves_no_entity_behind(graph):
    with pytest.raises(NotFound, match="nothing to correct"):
        graph.upsert_fact(NS, fact("ghost_service", "owner", "ghost_service", correction=True, object_kind="entity"))
    with pytest.raises(NotFound):
        graph.find_entity(NS, "ghost_service")
    created = graph.upsert_fact(NS, fact("ghost_service", "owner", "Ana"))
    assert graph.find_entity(NS, "ghost_service").id == created.fact.subject_id


def test_entity_keys_are_resolved_in_one_read_by_key_then_by_alias(tmp_path):
    from memory_daemon.store.graph import EntityRow

    database = Database(tmp_path / "keys.duckdb")
    repository = GraphRepository(database)
    now = utc_now()
    with database.transaction() as cursor:
        for row in (EntityRow("ent_pg", NS, "PostgreSQL", "postgresql", "technology", ("postgres", "pg"), now),
                    EntityRow("ent_pgtool", NS, "pg", "pg", "tool", (), now),
                    EntityRow("ent_other", "elsewhere", "Postgres", "postgres", "technology", (), now)):
            repository.insert_entity(cursor, row)
    found = repository.entities_of_keys([NS], ["postgresql", "postgres", "pg", "mysql"])
    assert [e.id for e in found["postgresql"]] == ["ent_pg"]
    # by alias: another namespace's entity with that key is not visible here
    assert [e.id for e in found["postgres"]] == ["ent_pg"]
    assert [e.id for e in found["pg"]] == ["ent_pgtool"]  # a key match comes before an alias match
    assert found["mysql"] == []
    database.close()


def test_neighbour_keys_of_several_entities_at_once(graph):
    graph.upsert_fact(NS, fact("checkout", "uses", "Redis", "2026-01-01T00:00:00Z"))
    graph.upsert_fact(NS, fact("billing", "uses", "Postgres", "2026-01-01T00:00:00Z"))
    reached = graph.neighbour_keys([NS], ["checkout", "redis", "billing", "no such thing"])
    assert sorted(reached) == ["billing", "checkout", "redis"]
    assert [key for key, _confidence in reached["checkout"]] == ["redis"]
    assert [key for key, _confidence in reached["redis"]] == ["checkout"]
    assert [key for key, _confidence in reached["billing"]] == ["postgresql"]  # entity keys are canonical
    assert graph.neighbour_keys([NS], ["no such thing"]) == {}  # known unknown now: answered without a query
