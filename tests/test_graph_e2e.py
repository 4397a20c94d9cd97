"""The graph through a real daemon: parallel clients, tamper detection across a restart, and the MCP surface via the proxy."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import duckdb
import grpc
import pytest

from conftest import Daemon, mcp_session, payload
from memory_daemon.client.python_client import as_dict

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def daemon(module_daemon):
    """One daemon for the tests that take `daemon`, each in its own namespace (ops, proj, shop, cli, chat); the
    restart test starts its own."""
    return module_daemon


def test_concurrent_upserts_leave_exactly_one_active_fact(daemon):
    def upsert(worker: int) -> list[str]:
        with daemon.client("ops") as client:
            return [client.upsert_fact(subject="deploy_pipeline", predicate="deploy_day", object=f"day-{worker}-{i}",
                                       create_entities=True).status for i in range(10)]

    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = [s for batch in pool.map(upsert, range(6)) for s in batch]
    assert statuses.count("created") == 60
    with daemon.client("ops") as client:
        view = client.query_entity(entity="deploy_pipeline", hops=0)
        assert len([f for f in view.active if f.predicate == "deploy_day"]) == 1
        assert len(view.history) == 59
        # The believed timeline has no overlaps: each version ends where the next begins.
        timeline = sorted([*view.history, *view.active], key=lambda f: f.valid_from)
        broken = [(a.id, a.valid_from, a.valid_to, a.superseded_by, b.id, b.valid_from)
                  for a, b in zip(timeline, timeline[1:]) if a.valid_to != b.valid_from or a.superseded_by != b.id]
        assert not broken
        assert client.query_entity(entity="deploy_pipeline").entity.name == "deploy_pipeline"
        summary = client.list_tools()
        assert any(t.name == "upsert_fact" for t in summary)


def test_tampered_row_is_named_after_a_restart(workdir):
    daemon = Daemon(workdir).start()
    try:
        with daemon.client("proj") as client:
            kept = client.upsert_fact(subject="auth_service", predicate="token_format", object="PASETO v4",
                                      create_entities=True).fact
            episode = client.record_episode(kind="invariant", title="tokens expire within 15 minutes").episode
            clean = client.verify_integrity()
            assert clean.ok and clean.rows_checked == 2
    finally:
        daemon.stop()

    with duckdb.connect(str(daemon.data_dir / "cortexd.duckdb")) as con:
        con.execute("UPDATE facts SET object_value = 'JWT_HS256' WHERE id = ?", [kept.id])

    daemon = Daemon(workdir).start()
    try:
        with daemon.client("proj") as client:
            report = client.verify_integrity()
            assert not report.ok
            assert [(p.table, p.id) for p in report.problems] == [("facts", kept.id)]
            assert report.problems[0].stored_sha256 == kept.sha256
            assert report.merkle_root != clean.merkle_root
            assert episode.id not in {p.id for p in report.problems}
    finally:
        daemon.stop()


def test_bad_graph_input_is_a_clear_error_over_grpc(daemon):
    with daemon.client("proj") as client:
        with pytest.raises(grpc.RpcError) as raised:
            client.upsert_fact(subject="a", predicate="b", object="c", valid_from="2026-05-01",
                               valid_to="2026-04-01", create_entities=True)
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "must be later than valid_from" in raised.value.details()
        with pytest.raises(grpc.RpcError) as raised:
            client.time_travel(valid_at="last tuesday")
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as raised:
            client.query_entity(entity="nobody")
        assert raised.value.code() == grpc.StatusCode.NOT_FOUND
        assert as_dict(client.read_graph())["facts"] == []


async def test_graph_tools_resources_and_prompts_through_the_proxy(daemon):
    async with mcp_session(daemon.address, "shop", "--tools", "full") as host:
        names = {t.name for t in (await host.list_tools()).tools}
        assert {"upsert_fact", "record_episode", "query_entity", "time_travel",
                "verify_integrity", "create_relation", "read_graph"} <= names

        old = payload(await host.call_tool("upsert_fact", {
            "subject": "auth_service", "predicate": "token format", "object": "JWT_HS256",
            "valid_from": "2026-01-01T00:00:00Z", "create_entities": True}))
        new = payload(await host.call_tool("upsert_fact", {
            "subject": "auth_service", "predicate": "token_format", "object": "PASETO v4",
            "valid_from": "2026-06-01T00:00:00Z"}))
        assert new["status"] == "created" and new["superseded"][0]["object"] == "JWT_HS256"
        assert new["superseded"][0]["valid_to"] == "2026-06-01T00:00:00Z"
        assert old["fact"]["id"] in new["retracted_ids"]

        adr = payload(await host.call_tool("record_episode", {
            "kind": "adr", "title": "ADR-12: auth_service tokens move to PASETO v4",
            "entities": ["auth_service"], "occurred_at": "2026-05-20T00:00:00Z"}))["episode"]
        payload(await host.call_tool("record_episode", {
            "kind": "invariant", "title": "auth_service never accepts unsigned tokens", "entities": ["auth_service"]}))
        relation = payload(await host.call_tool("create_relation", {
            "from_id": new["fact"]["id"], "relation": "decided in", "to_id": adr["id"]}))["relation"]
        assert relation["relation"] == "decided_in"
        graph = payload(await host.call_tool("read_graph", {}))
        assert {e["name"] for e in graph["entities"]} == {"auth_service"}
        assert [f["object"] for f in graph["facts"]] == ["PASETO v4"]  # active facts only
        assert [(r["from_id"], r["to_id"]) for r in graph["relations"]] == [(new["fact"]["id"], adr["id"])]
        missing = await host.call_tool("create_relation", {"from_id": "ep_nope", "relation": "x", "to_id": adr["id"]})
        assert missing.is_error and "no memory, entity, episode or fact" in missing.content[0].text

        then = payload(await host.call_tool("time_travel", {"valid_at": "2026-03-01T00:00:00Z",
                                                                   "entity": "auth_service"}))
        assert [f["object"] for f in then["facts"]] == ["JWT_HS256"]
        entity = payload(await host.call_tool("query_entity", {"entity": "auth_service"}))
        assert [f["object"] for f in entity["active"]] == ["PASETO v4"]
        assert {e["kind"] for e in entity["episodes"]} == {"adr", "invariant"}

        summary = json.loads((await host.read_resource("cortex://graph/summary")).contents[0].text)
        assert (summary["active_facts"], summary["superseded_facts"], summary["episodes"]) == (1, 1, 2)
        assert summary["integrity_ok"] and len(summary["merkle_root"]) == 64
        integrity = json.loads((await host.read_resource("cortex://graph/integrity")).contents[0].text)
        assert integrity["ok"] and integrity["merkle_root"] == summary["merkle_root"]
        recent = json.loads((await host.read_resource("cortex://episodes/recent")).contents[0].text)
        assert {e["title"] for e in recent} >= {adr["title"]}

        briefing = (await host.get_prompt("architecture-briefing", {"component": "auth_service"})).messages[0].content.text
        assert "PASETO v4" in briefing and "JWT_HS256" not in briefing
        assert "never accepts unsigned tokens" in briefing and f"[FACT:{new['fact']['id']}]" in briefing
        bug = (await host.get_prompt("bug-investigation-context", {"symptom": "auth_service rejects tokens"}))
        assert "PASETO v4" in bug.messages[0].content.text

        bad = await host.call_tool("time_travel", {"valid_at": "soon"})
        assert bad.is_error and "not an ISO-8601 time" in bad.content[0].text


def test_graph_verbs_on_the_cli(daemon):
    import subprocess

    from conftest import CORTEXD

    def cortexd(*args: str) -> dict:
        done = subprocess.run([*CORTEXD, "graph", *args, "--daemon", daemon.address, "--namespace", "cli"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    cortexd("upsert-fact", "--subject", "web", "--predicate", "uses", "--object", "Redis", "--create-entities")
    cortexd("upsert-fact", "--subject", "web", "--predicate", "region", "--object", "eu-west-1", "--no-singular")
    view = cortexd("query-entity", "--entity", "web", "--hops", "1")
    assert sorted((f["predicate"], f["object"], f["singular"]) for f in view["active"]) == [
        ("region", "eu-west-1", False), ("uses", "Redis", False)]
    assert [n["entity"]["name"] for n in view["neighbourhood"]] == ["web", "Redis"]
    assert cortexd("verify-integrity")["ok"] is True
    failed = subprocess.run([*CORTEXD, "graph", "time-travel", "--valid-at", "never", "--daemon", daemon.address],
                            capture_output=True, text=True, timeout=60)
    assert failed.returncode == 1 and "not an ISO-8601 time" in failed.stderr


def test_saved_messages_record_and_supersede_facts(daemon):
    with daemon.client("chat") as client:
        analysis = client.analyze_message(message="The billing service's database is PostgreSQL 15")
        assert [(f.subject, f.predicate, f.object) for f in analysis.suggested_facts] == [
            ("billing service", "database", "PostgreSQL 15")]
        first = client.save_memory(content="The billing service's database is PostgreSQL 15")
        assert [(f.predicate, f.object, f.source) for f in first.facts] == [
            ("database", "PostgreSQL 15", first.memory.id)]

        update = client.save_memory(content="actually the billing service's database is MySQL 8 now")
        assert [(f.predicate, f.object) for f in update.facts] == [("database", "MySQL 8")]
        assert [(f.object, f.status) for f in update.superseded_facts] == [("PostgreSQL 15", "superseded")]
        view = client.query_entity(entity="billing service", hops=0)
        assert [f.object for f in view.active] == ["MySQL 8"]

        client.save_memory(content="billing depends on Redis")
        ended = client.save_memory(content="billing doesn't depend on Redis anymore")
        assert [(f.object, f.status) for f in ended.superseded_facts] == [("Redis", "ended")]
        assert client.query_entity(entity="billing", hops=0).active == []

        quiet = client.save_memory(content="The staging host is db-stg-2", extract_facts=False)
        assert quiet.facts == [] and client.analyze_message(message="how do I rotate the staging keys?").suggested_facts == []
