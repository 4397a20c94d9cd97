"""Forget, edit and unarchive through real proxies: a forgotten text is found nowhere, not even in the store's file."""

from __future__ import annotations

import json
import subprocess

import pytest

from conftest import CORTEXD, Daemon, mcp_session, store_cells_holding, payload

pytestmark = pytest.mark.anyio

MARKER = "ZEBRAFINCH42"
SECRET_MEMORY = f"The launch codename for the Kestrel rollout is {MARKER}"


def _export(daemon, namespace: str) -> str:
    done = subprocess.run([*CORTEXD, "export", "--daemon", daemon.address, "--namespace", namespace],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _rows_of(dump: str, kind: str) -> list[dict]:
    return [record["row"] for record in map(json.loads, dump.splitlines()) if record["kind"] == kind]


def _store_bytes(data_dir) -> bytes:
    return b"".join(p.read_bytes() for p in data_dir.glob("cortexd.duckdb*") if p.is_file())


def _cells_holding(database_path, needle: str) -> list[str]:
    return store_cells_holding(database_path, [needle]).get(needle, [])


async def test_a_forgotten_memory_is_gone_from_search_export_tables_and_the_file(workdir):
    daemon = Daemon(workdir).start()
    data_dir = daemon.data_dir
    try:
        async with mcp_session(daemon.address, "acme") as host, mcp_session(daemon.address, "other") as stranger:
            secret_id = payload(await host.call_tool("save_memory", {"content": SECRET_MEMORY}))["memory"]["id"]
            kept_id = payload(await host.call_tool("save_memory", {
                "content": "The Kestrel rollout starts in the Lisbon region",
                "context": f"re: {SECRET_MEMORY}"}))["memory"]["id"]
            assert MARKER.encode() in _store_bytes(data_dir), "the test must see the text before forgetting"

            hidden = await stranger.call_tool("forget_memory", {"ids": [secret_id]})
            assert hidden.is_error and "not found" in hidden.content[0].text

            preview = payload(await host.call_tool("forget_memory", {"query": "launch codename Kestrel"}))
            assert preview["previewed"] is True
            assert secret_id in [m["id"] for m in preview["memories"]]
            assert payload(await host.call_tool("open_memories", {"ids": [secret_id]}))["memories"]

            forgotten = payload(await host.call_tool("forget_memory", {"ids": [secret_id], "purge": True,
                                                                       "reason": "typed a codename"}))
            assert [m["id"] for m in forgotten["memories"]] == [secret_id]
            assert forgotten["purged"] is True and forgotten["contexts_cleared"] == 1
            assert forgotten["replies_removed"] >= 1  # the proxy's idempotency key stored the save's reply

            for query in ("launch codename", MARKER, "Kestrel rollout"):
                hits = payload(await host.call_tool("search_memory", {"query": query}))["hits"]
                assert secret_id not in [h["memory"]["id"] for h in hits]
                assert all(MARKER not in json.dumps(h) for h in hits)
            gone = await host.call_tool("open_memories", {"ids": [secret_id]})
            assert gone.is_error and "not found" in gone.content[0].text
            kept = payload(await host.call_tool("open_memories", {"ids": [kept_id]}))["memories"][0]
            assert kept.get("context", "") == ""  # cleared: an empty field is left out of the reply

        exported = _export(daemon, "acme")
        assert MARKER not in exported
        tombstones = _rows_of(exported, "tombstone")
        assert [t["id"] for t in tombstones] == [secret_id] and tombstones[0]["reason"] == "typed a codename"
        assert MARKER.encode() not in _store_bytes(data_dir)
    finally:
        daemon.stop()
    assert _cells_holding(data_dir / "cortexd.duckdb", MARKER) == []
    # The id (never the text) stays in the tombstone and in the stored reply of the forget call itself.
    assert _cells_holding(data_dir / "cortexd.duckdb", secret_id) == ["idempotency_keys.reply", "memory_tombstones.id"]


async def test_forgetting_by_query_needs_confirm_and_touches_only_the_callers_namespace(module_daemon):
    async with mcp_session(module_daemon.address, "q-acme") as host, \
            mcp_session(module_daemon.address, "q-other") as stranger:
        mine = payload(await host.call_tool("save_memory", {"content": "The cafeteria closes at 3pm on Fridays"}))
        theirs = payload(await stranger.call_tool("save_memory", {"content": "The cafeteria closes at 3pm on Fridays"}))
        done = payload(await host.call_tool("forget_memory", {"query": "cafeteria closes", "confirm": True}))
        assert [m["id"] for m in done["memories"]] == [mine["memory"]["id"]]
        assert done["previewed"] is False and done["purged"] is False
        still = payload(await stranger.call_tool("search_memory", {"query": "cafeteria"}))["hits"]
        assert [h["memory"]["id"] for h in still] == [theirs["memory"]["id"]]
        both = await host.call_tool("forget_memory", {"ids": ["mem_x"], "query": "cafeteria"})
        assert both.is_error and "either ids or a query" in both.content[0].text
        neither = await host.call_tool("forget_memory", {})
        assert neither.is_error and "either ids or a query" in neither.content[0].text


async def test_an_edit_changes_the_text_in_place_and_keeps_the_old_one_in_history(module_daemon):
    async with mcp_session(module_daemon.address, "edit") as host:
        saved = payload(await host.call_tool("save_memory", {"content": "The staging database listens on port 5433"}))
        memory_id = saved["memory"]["id"]
        edited = payload(await host.call_tool("edit_memory", {"id": memory_id, "reason": "wrong port",
                                                              "content": "The staging database listens on port 6543"}))
        assert edited["memory"]["id"] == memory_id and edited["history_versions"] == 1
        hits = payload(await host.call_tool("search_memory", {"query": "staging database port"}))["hits"]
        assert [(h["memory"]["id"], h["memory"]["content"]) for h in hits] == [
            (memory_id, "The staging database listens on port 6543")]
        assert payload(await host.call_tool("search_memory", {"query": "5433"}))["hits"] == []
        empty = await host.call_tool("edit_memory", {"id": memory_id, "content": "   "})
        assert empty.is_error and "content must not be empty" in empty.content[0].text
    exported = _export(module_daemon, "edit")
    versions = _rows_of(exported, "memory_version")
    assert [(v["memory_id"], v["version"], v["content"], v["reason"]) for v in versions] == [
        (memory_id, 1, "The staging database listens on port 5433", "wrong port")]

    with module_daemon.client("edit") as client:
        client.edit_memory(id=memory_id, content="The staging database listens on port 7000", drop_history=True)
    assert "5433" not in _export(module_daemon, "edit")


async def test_unarchive_brings_a_memory_back_and_gc_leaves_it_alone(module_daemon):
    async with mcp_session(module_daemon.address, "arch") as host:
        memory_id = payload(await host.call_tool("save_memory", {"content": "Quarterly taxes are due on the 15th"}))[
            "memory"]["id"]
        archived = payload(await host.call_tool("collect_garbage", {"apply": True, "forget_threshold": 2.0,
                                                        "grace_days": 0}))["archived"]
        assert archived == [memory_id]
        assert payload(await host.call_tool("search_memory", {"query": "quarterly taxes"}))["hits"] == []
        back = payload(await host.call_tool("unarchive_memory", {"ids": [memory_id]}))["unarchived"]
        assert [m["id"] for m in back] == [memory_id] and not back[0].get("archived_at")
        hits = payload(await host.call_tool("search_memory", {"query": "quarterly taxes"}))["hits"]
        assert [h["memory"]["id"] for h in hits] == [memory_id]
        again = payload(await host.call_tool("collect_garbage", {"apply": True, "forget_threshold": 2.0}))
        assert again["archived"] == []


def test_forget_and_edit_verbs_on_the_cli(module_daemon):
    with module_daemon.client("cli-ops") as client:
        memory_id = client.save_memory(content="The on-call pager number is 555-0199").memory.id

    def cortexd(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([*CORTEXD, "memory", *args, "--daemon", module_daemon.address, "--namespace", "cli-ops"],
                              capture_output=True, text=True, timeout=60)

    edited = cortexd("edit-memory", "--id", memory_id, "--content", "The on-call pager number is 555-0142")
    assert edited.returncode == 0, edited.stderr
    assert json.loads(edited.stdout)["memory"]["content"] == "The on-call pager number is 555-0142"
    forgotten = cortexd("forget-memory", "--ids", memory_id)
    assert forgotten.returncode == 0, forgotten.stderr
    assert [m["id"] for m in json.loads(forgotten.stdout)["memories"]] == [memory_id]
    again = cortexd("forget-memory", "--ids", memory_id)
    assert again.returncode == 1 and "no memory with id" in again.stderr


async def test_a_purged_fact_and_episode_are_gone_and_the_integrity_check_says_so(workdir):
    daemon = Daemon(workdir).start()
    try:
        async with mcp_session(daemon.address, "acme", "--tools", "full") as host:
            fact = payload(await host.call_tool("upsert_fact", {"subject": "kestrel rollout", "predicate": "codename",
                                                                "object": MARKER, "create_entities": True}))["fact"]
            episode = payload(await host.call_tool("record_episode", {"kind": "session_note", "title": "Codenames",
                                                                      "body": f"we picked {MARKER}"}))["episode"]
            kept = payload(await host.call_tool("record_episode", {"kind": "session_note", "title": "Lunch",
                                                                   "body": "pizza on Friday"}))["episode"]
            before = payload(await host.call_tool("verify_integrity", {}))
            assert before["rows_checked"] == 3 and before["purges"] == []
            purged = payload(await host.call_tool("purge_records", {"ids": [fact["id"], episode["id"]],
                                                                    "reason": "codename leaked"}))
            assert {(p["id"], p["kind"]) for p in purged["purged"]} == {(fact["id"], "fact"),
                                                                       (episode["id"], "episode")}
            after = purged["integrity"]
            assert after["ok"] is True and after["rows_checked"] == 1 and after["merkle_root"] != before["merkle_root"]
            assert {p["id"] for p in after["purges"]} == {fact["id"], episode["id"]}
            assert all(p["reason"] == "codename leaked" for p in after["purges"])
            again = await host.call_tool("purge_records", {"ids": [fact["id"]]})
            assert again.is_error and "no fact or episode" in again.content[0].text
            hits = payload(await host.call_tool("search_memory", {"query": MARKER, "kinds": ["all"]}))["hits"]
            assert MARKER not in json.dumps(hits) and kept["id"]
        exported = _export(daemon, "acme")
        assert MARKER not in exported and len(_rows_of(exported, "purge")) == 2
    finally:
        daemon.stop()
    assert MARKER.encode() not in _store_bytes(daemon.data_dir)
    assert _cells_holding(daemon.data_dir / "cortexd.duckdb", MARKER) == []
