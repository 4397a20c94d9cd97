"""The decision log and sessions on a real DuckDB file (summaries, outcomes, every tier rule on a moved clock,
bad input, working memory, session summaries), then through a real daemon and the MCP proxy."""

from __future__ import annotations

import json
import math
import threading
from datetime import datetime, timedelta

import grpc
import pytest

from conftest import mcp_session
from cortexd.connect import GLOBAL_NAMESPACE
from memory_daemon.journal.decisions import (
    DecisionLog, MAX_SUMMARY_CHARS, NewDecision, TierRules, key_choice_of, summarise_decision,
)
from memory_daemon.core.errors import InvalidArgument, NotFound
from memory_daemon.journal.sessions import SessionMemory
from memory_daemon.store import Database
from memory_daemon.store.decisions import DecisionRepository

NS = "proj"


class Clock:
    """A wall clock (naive UTC) or monotonic clock (seconds) that only moves when told to."""

    def __init__(self, start) -> None:
        self.now = start

    def __call__(self):
        return self.now

    def advance(self, **delta) -> None:
        self.now += timedelta(**delta) if isinstance(self.now, datetime) else timedelta(**delta).total_seconds()


@pytest.fixture
def clock():
    return Clock(datetime(2026, 3, 1, 12, 0))


@pytest.fixture
def database(tmp_path):
    database = Database(tmp_path / "decisions.duckdb")
    yield database
    database.close()


@pytest.fixture
def log(database, clock):
    return DecisionLog(DecisionRepository(database), SessionMemory(), clock=clock)


def decide(log: DecisionLog, question: str = "Which cache should the API use?", chosen: str = "Redis",
           namespace: str = NS, **fields):
    fields.setdefault("type", "architecture")
    return log.log_decision(namespace, NewDecision(question=question, chosen=chosen, **fields))


@pytest.fixture
def stored(log, database):
    def read(decision_id: str):
        """The row as stored, after idle demotion, without counting an access (a list that matches nothing)."""
        log.list_decisions(NS, session_id="no-such-session")
        return DecisionRepository(database).by_id([NS], [decision_id])[0]

    return read


def all_rows(database: Database) -> list:
    return database.cursor().execute("SELECT id FROM decisions").fetchall()


# -- summary and key choice --------------------------------------------------


def test_logging_generates_summary_and_key_choice(log, clock):
    row = decide(log, "Which database should the billing service use?", "PostgreSQL 16 (managed, on RDS)",
                 options=("MySQL 8", "SQLite"), confidence=0.9, session_id="s1",
                 reasoning="Mature JSONB support and the team knows it. It is also cheap to run.")
    assert row.summary == ("Chose PostgreSQL 16 (managed, on RDS) over MySQL 8, SQLite for which database should "
                           "the billing service use: mature JSONB support and the team knows it")
    assert row.key_choice == "PostgreSQL 16"
    assert row.options == ("MySQL 8", "SQLite", "PostgreSQL 16 (managed, on RDS)")  # the choice was an option too
    assert (row.id[:4], row.type, row.confidence, row.session_id) == ("dec_", "architecture", 0.9, "s1")
    assert (row.tier, row.access_count, row.created_at, row.last_accessed_at) == ("hot", 0, clock.now, clock.now)
    assert not row.has_outcome and row.was_successful is None
    (listed,) = log.list_decisions(NS)
    assert (listed.id, listed.summary, listed.key_choice, listed.options) == (row.id, row.summary, row.key_choice,
                                                                              row.options)

    plain = decide(log, "Session storage?", "Redis", type="Tooling")
    assert (plain.summary, plain.key_choice, plain.type, plain.confidence) == (
        "Chose Redis for session storage", "Redis", "tooling", 0.8)


def test_summary_stays_one_bounded_line():
    options = ["Kubernetes on EKS", "Nomad", "ECS Fargate", "Fly.io", "plain VMs", "kubernetes on eks"]
    summary = summarise_decision("How should we\ndeploy the\tworkers?", options, "Kubernetes on EKS", "x" * 500)
    assert summary.startswith("Chose Kubernetes on EKS over Nomad, ECS Fargate and 2 others for how should we deploy "
                              "the workers: xxx")
    assert "\n" not in summary and "\t" not in summary and len(summary) <= MAX_SUMMARY_CHARS
    assert summary.endswith("…")
    long_question = summarise_decision("word " * 200, [], "A", "")
    assert len(long_question) <= MAX_SUMMARY_CHARS and long_question.endswith("…")


@pytest.mark.parametrize("chosen, key", [
    ("Redis", "Redis"),
    ("Use Redis with a five minute TTL for sessions", "Redis with a five minute"),
    ("let's go with the monorepo, because CI gets simpler", "the monorepo"),
    ("gRPC over REST", "gRPC"),
    ("PostgreSQL 16 (managed) - on RDS", "PostgreSQL 16"),
    ("Switch to uv; drop pip-tools", "uv"),
    ("Ship it.", "Ship it"),
])
def test_key_choice_is_the_choice_in_a_few_words(chosen, key):
    assert key_choice_of(chosen) == key


# -- outcomes ----------------------------------------------------------------


def test_outcome_is_recorded_then_revised(log, clock, stored):
    row = decide(log)
    clock.advance(days=2)
    first = log.record_outcome(NS, row.id, True, 0.7, "Hit rate 94% in the first week")
    assert (first.was_successful, first.impact_score, first.learnings) == (True, 0.7, "Hit rate 94% in the first week")
    assert first.outcome_recorded_at == clock.now and first.has_outcome
    assert (first.access_count, first.last_accessed_at) == (1, clock.now)  # recording an outcome is an access
    clock.advance(days=30)
    revised = log.record_outcome(NS, f"  {row.id} ", False, None, "Evictions under load; moved to a bigger node")
    assert (revised.was_successful, revised.impact_score, revised.outcome_recorded_at) == (False, 0.0, clock.now)
    assert stored(row.id) == revised


def test_bad_outcome_input_changes_nothing(log, stored):
    row = decide(log)
    for impact in (1.01, -1.5, math.nan, math.inf):
        with pytest.raises(InvalidArgument, match=r"impact_score must be in \[-1, 1\]"):
            log.record_outcome(NS, row.id, True, impact, "")
    with pytest.raises(InvalidArgument, match="decision_id is empty"):
        log.record_outcome(NS, "  ", True, 0.5, "")
    with pytest.raises(InvalidArgument, match="learnings is 8001 characters"):
        log.record_outcome(NS, row.id, True, 0.5, "x" * 8001)
    with pytest.raises(NotFound, match="no decision 'dec_nope'"):
        log.record_outcome(NS, "dec_nope", True, 0.5, "")
    with pytest.raises(NotFound):
        log.record_outcome("elsewhere", row.id, True, 0.5, "")  # another namespace's decision
    assert stored(row.id) == row


# -- bad input writes nothing ------------------------------------------------


@pytest.mark.parametrize("fields, message", [
    ({"question": ""}, "question is empty"),
    ({"question": " \n "}, "question is empty"),
    ({"chosen": ""}, "chosen is empty"),
    ({"type": ""}, "type"),
    ({"type": "!!!"}, "not a usable name"),
    ({"confidence": 1.2}, r"confidence must be in \[0, 1\]"),
    ({"confidence": -0.1}, r"confidence must be in \[0, 1\]"),
    ({"confidence": math.nan}, r"confidence must be in \[0, 1\]"),
    ({"options": ("a", "  ")}, r"options\[2\] is empty"),
    ({"options": tuple(f"o{i}" for i in range(21))}, "at most 20"),
    ({"options": ("x" * 501,)}, r"options\[1\] is 501 characters"),
    ({"question": "q" * 2001}, "question is 2001 characters; the limit is 2000"),
    ({"chosen": "c" * 501}, "chosen is 501 characters"),
    ({"reasoning": "r" * 8001}, "reasoning is 8001 characters"),
    ({"session_id": "s" * 201}, "session_id is 201 characters"),
])
def test_bad_decision_is_refused_and_nothing_is_written(log, database, fields, message):
    request = {"type": "architecture", "question": "Which cache?", "chosen": "Redis", "session_id": "s1", **fields}
    with pytest.raises(InvalidArgument, match=message):
        log.log_decision(NS, NewDecision(**request))
    assert all_rows(database) == []
    assert log.sessions.working_memory(NS, "s1") == []


def test_bad_list_and_session_requests(log):
    decide(log)
    for tier in ("lukewarm", "HOTTER"):
        with pytest.raises(InvalidArgument, match="tier must be one of hot, warm, cold"):
            log.list_decisions(NS, tier=tier)
    for limit in (-1, 201):
        with pytest.raises(InvalidArgument, match="limit must be between 1 and 200"):
            log.list_decisions(NS, limit=limit)
    with pytest.raises(InvalidArgument, match="not a usable name"):
        log.list_decisions(NS, decision_type="??")
    with pytest.raises(InvalidArgument, match="session_id is empty"):
        log.session(NS, " ")
    with pytest.raises(NotFound):
        log.get_decision(NS, "dec_nope")
    assert [r.access_count for r in log.list_decisions(NS)] == [1]  # none of the refused reads counted


def test_listing_filters_and_namespaces(log, clock):
    a = decide(log, "Cache?", "Redis", session_id="s1")
    clock.advance(seconds=1)
    b = decide(log, "Package manager?", "uv", type="tooling", session_id="s1")
    clock.advance(seconds=1)
    c = decide(log, "Queue?", "SQS", session_id="s2")
    clock.advance(seconds=1)
    shared = decide(log, "Licence?", "Apache-2.0", namespace=GLOBAL_NAMESPACE, type="process")
    decide(log, "Hidden?", "yes", namespace="other")
    assert [r.id for r in log.list_decisions(NS)] == [shared.id, c.id, b.id, a.id]  # newest first, global too
    assert [r.id for r in log.list_decisions(NS, session_id="s1")] == [b.id, a.id]
    assert [r.id for r in log.list_decisions(NS, decision_type="Tooling")] == [b.id]
    assert [r.id for r in log.list_decisions(NS, limit=2)] == [shared.id, c.id]
    assert [r.id for r in log.list_decisions(GLOBAL_NAMESPACE)] == [shared.id]
    assert log.get_decision(NS, shared.id).id == shared.id
    with pytest.raises(NotFound):
        log.get_decision("other", a.id)


# -- tier rules ----------------------------------------------------------------


def test_rule_new_is_hot_and_idleness_demotes_hot_warm_cold(log, clock, stored):
    row = decide(log)
    assert row.tier == "hot"
    clock.advance(days=7)
    assert stored(row.id).tier == "hot"  # idle exactly 7 days: not yet
    clock.advance(seconds=1)
    assert stored(row.id).tier == "warm"
    clock.advance(days=23, seconds=-1)
    assert stored(row.id).tier == "warm"  # idle exactly 30 days
    clock.advance(seconds=1)
    assert stored(row.id).tier == "cold"
    clock.advance(days=365)
    assert stored(row.id).tier == "cold"
    assert stored(row.id).access_count == 0  # looking at stored rows is no access


def test_rule_long_idleness_skips_straight_to_cold(log, clock, stored):
    row = decide(log)
    clock.advance(days=40)
    assert [r.id for r in log.list_decisions(NS, tier="hot")] == []  # the filter sees the demoted tier
    assert stored(row.id).tier == "cold"


def test_rule_an_access_promotes_one_tier_and_restarts_idleness(log, clock, stored):
    row = decide(log)
    clock.advance(days=31)
    (found,) = log.list_decisions(NS, tier="cold")  # selected as cold, returned as the read left it
    assert (found.tier, found.access_count, found.last_accessed_at) == ("warm", 1, clock.now)
    assert stored(row.id) == found
    clock.advance(days=29)
    assert stored(row.id).tier == "warm"  # warm until idle past 30 days again, never hot by itself
    clock.advance(days=2)
    assert stored(row.id).tier == "cold"
    assert log.get_decision(NS, row.id).tier == "warm"
    assert log.get_decision(NS, row.id).tier == "hot"
    assert log.list_decisions(NS, tier="hot")[0].tier == "hot"  # hot stays hot


def test_rule_proven_by_use_goes_straight_to_hot_and_cools_slowly(log, clock, stored):
    row = decide(log)
    for _ in range(4):
        log.get_decision(NS, row.id)
    clock.advance(days=8)
    assert stored(row.id).tier == "warm"  # four accesses: not proven yet
    clock.advance(days=30)
    assert stored(row.id).tier == "cold"
    fifth = log.get_decision(NS, row.id)
    assert (fifth.access_count, fifth.tier) == (5, "hot")  # proven: cold -> hot in one access
    clock.advance(days=21)
    assert stored(row.id).tier == "hot"
    clock.advance(seconds=1)
    assert stored(row.id).tier == "warm"
    clock.advance(days=69, seconds=-1)
    assert stored(row.id).tier == "warm"  # idle exactly 90 days
    clock.advance(seconds=1)
    assert stored(row.id).tier == "cold"


def test_rule_proven_by_a_successful_high_impact_outcome(log, clock, stored):
    winner, loser, small = decide(log, "A?", "a"), decide(log, "B?", "b"), decide(log, "C?", "c")
    clock.advance(days=60)
    assert {stored(r.id).tier for r in (winner, loser, small)} == {"cold"}
    assert log.record_outcome(NS, winner.id, True, 0.5, "").tier == "hot"
    assert log.record_outcome(NS, loser.id, False, 0.9, "").tier == "warm"  # an access: one tier only
    assert log.record_outcome(NS, small.id, True, 0.49, "").tier == "warm"
    clock.advance(days=29)
    assert [stored(r.id).tier for r in (winner, loser, small)] == ["warm", "warm", "warm"]
    clock.advance(days=2)
    assert [stored(r.id).tier for r in (winner, loser, small)] == ["warm", "cold", "cold"]


def test_tier_rules_refuse_inverted_thresholds():
    with pytest.raises(ValueError):
        TierRules(hot_idle=timedelta(days=30), warm_idle=timedelta(days=7))
    assert TierRules().first_demotion == timedelta(days=7)


# -- working memory --------------------------------------------------------------


@pytest.fixture
def ticks():
    return Clock(1000.0)


def test_working_memory_keeps_the_five_newest_newest_first(ticks, clock):
    sessions = SessionMemory(clock=ticks)
    for i in range(4):
        sessions.add_decision(NS, "s1", f"dec_{i}", f"decision {i}", clock.now + timedelta(minutes=i))
        sessions.add_note(NS, "s1", f"mem_{i}", f"note {i}\nsecond line", clock.now + timedelta(minutes=i, seconds=30))
    items = sessions.working_memory(NS, "s1")
    assert [(i.kind, i.id) for i in items] == [("note", "mem_3"), ("decision", "dec_3"), ("note", "mem_2"),
                                               ("decision", "dec_2"), ("note", "mem_1")]
    assert items[0].text == "note 3 second line" and items[0].at == clock.now + timedelta(minutes=3, seconds=30)
    sessions.add_note(NS, "s1", "mem_1", "note 1, merged again", clock.now)  # the same memory again moves up
    assert [i.id for i in sessions.working_memory(NS, "s1")] == ["mem_1", "mem_3", "dec_3", "mem_2", "dec_2"]
    assert sessions.working_memory(NS, "s2") == [] and sessions.working_memory("other", "s1") == []
    sessions.add_note(NS, "", "mem_x", "no session", clock.now)  # nothing to remember it by
    assert sessions.working_memory(NS, "") == [] and len(sessions) == 1
    sessions.add_note(NS, "s1", "mem_long", "y" * 1000, clock.now)
    assert len(sessions.working_memory(NS, "s1")[0].text) == 200


def test_idle_sessions_are_pruned_and_the_oldest_evicted(ticks, clock):
    sessions = SessionMemory(clock=ticks, max_sessions=3)
    sessions.add_note(NS, "old", "m1", "x", clock.now)
    ticks.advance(hours=1)
    sessions.add_note(NS, "fresh", "m2", "y", clock.now)
    ticks.advance(hours=1)
    assert [i.id for i in sessions.working_memory(NS, "old")] == ["m1"]  # idle exactly 2 h: kept, and read now
    ticks.advance(hours=2, seconds=1)
    assert sessions.working_memory(NS, "fresh") == [] and sessions.working_memory(NS, "old") == []
    assert len(sessions) == 0
    for name in ("a", "b", "c", "d"):
        sessions.add_note(NS, name, f"m_{name}", name, clock.now)
    assert sessions.working_memory(NS, "a") == [] and len(sessions) == 3  # bounded: least recently used goes
    custom = SessionMemory(idle_seconds=60, clock=ticks)
    custom.add_note(NS, "s", "m", "z", clock.now)
    ticks.advance(seconds=61)
    assert custom.working_memory(NS, "s") == []


def test_working_memory_is_thread_safe(clock):
    sessions = SessionMemory()
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(300):
                sessions.add_note(NS, f"s{i % 3}", f"m{n}-{i}", "text", clock.now)
                assert len(sessions.working_memory(NS, f"s{(i + n) % 3}")) <= 5
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert [len(sessions.working_memory(NS, f"s{k}")) for k in range(3)] == [5, 5, 5]


def test_logged_decisions_enter_their_session_working_memory(log, clock):
    row = decide(log, session_id="s1")
    decide(log, "Unattached?", "yes")
    (item,) = log.session(NS, "s1").working_memory
    assert (item.kind, item.id, item.text, item.at) == ("decision", row.id, row.summary, clock.now)


# -- session summaries -----------------------------------------------------------


def test_session_summary_counts_types_outcomes_and_success_rate(log, database, clock):
    def later(*args, **fields):
        clock.advance(seconds=1)
        return decide(log, *args, **fields)

    arch = [later(f"Architecture {i}?", f"choice {i}", session_id="s1") for i in range(3)]
    tools = [later(f"Tool {i}?", f"tool {i}", type="tooling", session_id="s1") for i in range(2)]
    decide(log, "Elsewhere?", "no", session_id="s2")
    decide(log, "Other namespace?", "no", session_id="s1", namespace="other")
    log.record_outcome(NS, arch[0].id, True, 0.8, "")
    log.record_outcome(NS, arch[1].id, False, -0.3, "")
    log.record_outcome(NS, tools[0].id, True, 0.2, "")

    view = log.session(NS, "s1")
    summary = view.summary
    assert (summary.decisions, summary.decisions_by_type) == (5, {"architecture": 3, "tooling": 2})
    assert (summary.outcomes_recorded, summary.successes) == (3, 2)
    assert summary.success_rate == pytest.approx(2 / 3)
    assert summary.text.splitlines() == [
        "5 decisions (architecture 3, tooling 2); 3 outcomes recorded, 67% successful.",
        "- architecture: 3 decisions, 1 of 2 outcomes successful (50%)",
        "- tooling: 2 decisions, 1 of 1 outcomes successful (100%)",
        "Latest choices: tool 1, tool 0, choice 2, choice 1, choice 0.",
    ]
    assert [i.id for i in view.working_memory] == [r.id for r in (*reversed(tools), *reversed(arch))]

    # After a restart the working memory is gone, but the summary comes from the store.
    restarted = DecisionLog(DecisionRepository(database), SessionMemory(), clock=clock)
    again = restarted.session(NS, "s1")
    assert again.working_memory == () and again.summary == summary

    single = restarted.session(NS, "s2").summary
    assert single.text.splitlines() == ["1 decision (architecture 1); no outcomes recorded yet.",
                                        "Latest choices: no."]
    empty = restarted.session(NS, "never")
    assert (empty.summary.decisions, empty.summary.success_rate, empty.summary.text, empty.working_memory) == (
        0, 0.0, "", ())


def test_migration_creates_the_decisions_table(database):
    assert database.schema_version() >= 5
    columns = [r[0] for r in database.cursor().execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'decisions' ORDER BY ordinal_position"
    ).fetchall()]
    assert columns[:3] == ["id", "namespace", "type"] and "outcome_recorded_at" in columns


# -- end to end: needs DecisionService wired into services.py, rpc.py (RpcTable), server.py and client.py --


def test_decisions_and_sessions_through_the_daemon(daemon):
    with daemon.client("proj") as client:
        logged = client.log_decision(type="architecture", question="Which queue for billing events?",
                                     options=["SQS", "Kafka"], chosen="SQS", reasoning="Managed and cheap.",
                                     confidence=0.7, session_id="s1").decision
        assert logged.summary == "Chose SQS over Kafka for which queue for billing events: managed and cheap"
        assert (logged.key_choice, logged.tier, logged.access_count, logged.confidence) == ("SQS", "hot", 0, 0.7)
        assert not logged.outcome.recorded and logged.namespace == "proj"
        default = client.log_decision(type="tooling", question="Formatter?", chosen="ruff", session_id="s1").decision
        assert default.confidence == pytest.approx(0.8)

        outcome = client.record_outcome(decision_id=logged.id, was_successful=True, impact_score=0.6,
                                        learnings="No lost events in a month").decision
        assert outcome.outcome.recorded and outcome.outcome.was_successful and outcome.outcome.impact_score == 0.6
        assert outcome.outcome.recorded_at and outcome.access_count == 1

        listed = client.list_decisions(session_id="s1").decisions
        assert [d.id for d in listed] == [default.id, logged.id]
        assert [d.access_count for d in listed] == [1, 2]
        assert [d.id for d in client.list_decisions(type="tooling", tier="hot", limit=5).decisions] == [default.id]

        session = client.get_session(session_id="s1")
        assert [(i.kind, i.id) for i in session.working_memory] == [("decision", default.id), ("decision", logged.id)]
        assert session.working_memory[0].text == default.summary and session.working_memory[0].at
        assert session.summary.decisions == 2 and dict(session.summary.decisions_by_type) == {
            "architecture": 1, "tooling": 1}
        assert (session.summary.outcomes_recorded, session.summary.success_rate) == (1, 1.0)
        assert session.summary.text.startswith("2 decisions (architecture 1, tooling 1); 1 outcome recorded")

        for call, code, words in [
            (lambda: client.log_decision(type="architecture", question="Q?", chosen="A", confidence=1.5),
             grpc.StatusCode.INVALID_ARGUMENT, "confidence must be in [0, 1]"),
            (lambda: client.log_decision(type="architecture", question="", chosen="A"),
             grpc.StatusCode.INVALID_ARGUMENT, "question is empty"),
            (lambda: client.record_outcome(decision_id=logged.id, impact_score=2),
             grpc.StatusCode.INVALID_ARGUMENT, "impact_score must be in [-1, 1]"),
            (lambda: client.record_outcome(decision_id="dec_nope"), grpc.StatusCode.NOT_FOUND, "no decision"),
            (lambda: client.list_decisions(tier="tepid"), grpc.StatusCode.INVALID_ARGUMENT, "tier must be one of"),
            (lambda: client.get_session(session_id=""), grpc.StatusCode.INVALID_ARGUMENT, "session_id is empty"),
        ]:
            with pytest.raises(grpc.RpcError) as raised:
                call()
            assert raised.value.code() == code and words in raised.value.details()
        assert len(client.list_decisions().decisions) == 2  # the refused calls wrote nothing

    with daemon.client("elsewhere") as other:
        assert other.list_decisions().decisions == []
        assert other.get_session(session_id="s1").summary.decisions == 0


@pytest.mark.anyio
async def test_decision_tools_through_the_proxy(daemon):
    async with mcp_session(daemon.address, "mcp", "--tools", "full") as host:
        names = {t.name for t in (await host.list_tools()).tools}
        assert {"log_decision", "record_outcome", "list_decisions", "get_session"} <= names

        def payload(result) -> dict:
            assert not result.is_error, result.content[0].text
            return json.loads(result.content[0].text)

        decision = payload(await host.call_tool("log_decision", {
            "type": "process", "question": "How do we review code?", "options": ["pairing", "pull requests"],
            "chosen": "pull requests", "reasoning": "Async across time zones", "session_id": "m1"}))["decision"]
        assert decision["summary"] == ("Chose pull requests over pairing for how do we review code: "
                                       "async across time zones")
        assert decision["outcome"].get("recorded", False) is False  # a nested false is left out
        payload(await host.call_tool("record_outcome", {"decision_id": decision["id"], "was_successful": False,
                                                        "impact_score": -0.4, "learnings": "Reviews wait a day"}))
        session = payload(await host.call_tool("get_session", {"session_id": "m1"}))
        assert [i["id"] for i in session["working_memory"]] == [decision["id"]]
        assert session["summary"]["outcomes_recorded"] == 1 and session["summary"].get("success_rate", 0) == 0
        listed = payload(await host.call_tool("list_decisions", {"tier": "hot"}))["decisions"]
        assert [d["outcome"]["learnings"] for d in listed] == ["Reviews wait a day"]
        bad = await host.call_tool("log_decision", {"type": "process", "question": "Q?", "chosen": "A",
                                                    "confidence": 2})
        assert bad.is_error and "confidence must be in [0, 1]" in bad.content[0].text
