"""End to end through real proxies: three hosts share one daemon; namespaces isolate; restarts are survived."""

from __future__ import annotations

import json
import signal

import pytest

from conftest import mcp_session, payload

pytestmark = pytest.mark.anyio

TOOLS = {"save_memory", "search_memory", "open_memories", "touch_memory", "analyze_message",
         "upsert_fact", "retire_fact", "record_episode", "query_entity",
         "time_travel", "verify_integrity", "create_relation", "read_graph",
         "compile_context", "log_decision", "record_outcome", "list_decisions", "get_session",
         "observe_memory_usage", "promote_memory", "collect_garbage", "cluster_memories", "consolidate_memories",
         "forget_memory", "edit_memory", "unarchive_memory", "purge_records"}


# The default profile: what a host lists unless the proxy runs with --tools full.
EVERYDAY_TOOLS = {"save_memory", "search_memory", "analyze_message", "compile_context", "forget_memory", "edit_memory",
                  "upsert_fact", "record_episode", "query_entity"}


async def test_three_hosts_share_memories_within_a_namespace(daemon):
    async with (
        mcp_session(daemon.address, "acme") as host_a,
        mcp_session(daemon.address, "acme") as host_b,
        mcp_session(daemon.address, "personal") as host_c,
    ):
        for host in (host_a, host_b, host_c):
            listed = await host.list_tools()
            assert {t.name for t in listed.tools} == EVERYDAY_TOOLS
            assert all(t.description and t.input_schema["type"] == "object" for t in listed.tools)

        saved = payload(await host_a.call_tool("save_memory", {"content": "The staging database is db-stg-2", "tags": ["infra"]}))
        memory_id = saved["memory"]["id"]
        assert saved["memory"]["namespace"] == "acme"

        found = payload(await host_b.call_tool("search_memory", {"query": "staging database"}))
        assert [h["memory"]["id"] for h in found["hits"]] == [memory_id]

        opened = payload(await host_b.call_tool("open_memories", {"ids": [memory_id]}))
        assert opened["memories"][0]["content"] == "The staging database is db-stg-2"

        assert payload(await host_c.call_tool("search_memory", {"query": "staging database"}))["hits"] == []
        hidden = await host_c.call_tool("open_memories", {"ids": [memory_id]})
        assert hidden.is_error and "not found" in hidden.content[0].text


async def test_global_namespace_is_visible_everywhere(daemon):
    async with mcp_session(daemon.address, "global") as shared, mcp_session(daemon.address, "team") as team:
        payload(await shared.call_tool("save_memory", {"content": "Company style guide lives at go/style"}))
        hits = payload(await team.call_tool("search_memory", {"query": "style guide"}))["hits"]
        assert [h["memory"]["namespace"] for h in hits] == ["global"]


async def test_touch_memory_reinforces(daemon):
    async with mcp_session(daemon.address, "acme") as host:
        memory_id = payload(await host.call_tool("save_memory", {"content": "Alice owns billing"}))["memory"]["id"]
        touched = payload(await host.call_tool("touch_memory", {"id": memory_id, "boost_strength": True}))["memory"]
        assert touched["use_count"] == 1
        assert touched["strength"] == pytest.approx(1.1)


async def test_resources_and_prompts_are_forwarded(daemon):
    async with mcp_session(daemon.address, "acme") as host:
        payload(await host.call_tool("save_memory", {"content": "Prefers dark mode"}))
        uris = {str(r.uri) for r in (await host.list_resources()).resources}
        assert {"cortex://status", "cortex://memories/recent"} <= uris
        recent = json.loads((await host.read_resource("cortex://memories/recent")).contents[0].text)
        assert [m["content"] for m in recent] == ["Prefers dark mode"]
        prompts = {p.name for p in (await host.list_prompts()).prompts}
        assert "memory-guidelines" in prompts
        prompt = await host.get_prompt("memory-guidelines", {"focus": "billing"})
        assert "save_memory" in prompt.messages[0].content.text and "billing" in prompt.messages[0].content.text


async def test_proxies_survive_a_daemon_restart(daemon):
    async with mcp_session(daemon.address, "acme") as host_a, mcp_session(daemon.address, "acme") as host_b:
        payload(await host_a.call_tool("save_memory", {"content": "Deploys happen on Tuesdays"}))
        assert daemon.stop(signal.SIGTERM) == 0
        assert not daemon.socket.exists(), "graceful shutdown removes the socket"

        down = await host_a.call_tool("search_memory", {"query": "deploys"})
        assert down.is_error and "not running" in down.content[0].text and "cortexd serve" in down.content[0].text

        daemon.start()
        for host in (host_a, host_b):
            hits = payload(await host.call_tool("search_memory", {"query": "deploys"}))["hits"]
            assert [h["memory"]["content"] for h in hits] == ["Deploys happen on Tuesdays"]


async def test_default_namespace_is_the_git_repository_name(daemon, workdir):
    repo = workdir / "billing-service"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    async with mcp_session(daemon.address, None, cwd=repo / "src") as host:
        saved = payload(await host.call_tool("save_memory", {"content": "Invoices are generated nightly"}))
        assert saved["memory"]["namespace"] == "billing-service"


async def test_the_full_profile_lists_every_tool_with_title_annotations_and_described_parameters(daemon):
    from memory_daemon.bench.catalog_size import DEFAULT_PROFILE_TOKEN_TARGET, catalog_size, listed_tools

    async with mcp_session(daemon.address, "acme", "--tools", "full") as host:
        listed = {t.name: t for t in (await host.list_tools()).tools}
        assert set(listed) == TOOLS
        for tool in listed.values():
            assert tool.title and tool.annotations is not None, tool.name
            assert all(p.get("description") for p in tool.input_schema["properties"].values()), tool.name
        assert listed["search_memory"].annotations.read_only_hint is True
        assert listed["forget_memory"].annotations.destructive_hint is not False  # destructive: the spec's default
        assert listed["save_memory"].annotations.destructive_hint is False
        assert listed["record_episode"].input_schema["properties"]["kind"]["enum"][0] == "adr"
        assert listed["search_memory"].input_schema["properties"]["kinds"]["items"]["enum"] == [
            "memory", "fact", "episode", "decision", "all"]
        assert "strength" in listed["save_memory"].input_schema["properties"]
    # A parameter the default profile leaves out of the schema (an advanced one) is still accepted there.
    async with mcp_session(daemon.address, "acme") as everyday:
        schema = {t.name: t for t in (await everyday.list_tools()).tools}["save_memory"].input_schema
        assert "strength" not in schema["properties"] and "content" in schema["properties"]
        saved = payload(await everyday.call_tool("save_memory", {"content": "Ship the beta on Monday", "strength": 1.5}))
        assert saved["memory"]["strength"] == 1.5 and list(saved["memory"])[0] == "content", "text first"
    sizes = {p: catalog_size(p, await listed_tools(daemon.address, p)) for p in ("default", "full")}
    assert sizes["default"].tools == len(EVERYDAY_TOOLS) and sizes["full"].tools == len(TOOLS)
    assert sizes["default"].estimated_tokens <= DEFAULT_PROFILE_TOKEN_TARGET


def test_closed_choices_in_the_catalog_are_the_sets_the_daemon_checks():
    from memory_daemon.api.catalog import PROFILES, tool_catalog
    from memory_daemon.context.unified_search import KINDS
    from memory_daemon.graph.service import EPISODE_KINDS
    from memory_daemon.journal.decisions import TIERS
    from memory_daemon.retrieval.hybrid import SIGNALS

    catalog = tool_catalog()

    def enum(tool: str, field: str) -> list[str]:
        schema = catalog[tool].input_schema["properties"][field]
        return schema.get("enum") or schema["items"]["enum"]

    assert enum("record_episode", "kind") == list(EPISODE_KINDS)
    assert enum("search_memory", "signals") == list(SIGNALS)
    assert enum("search_memory", "kinds") == [*KINDS, "all"]
    assert enum("list_decisions", "tier") == list(TIERS)
    assert enum("upsert_fact", "object_kind") == ["entity", "literal"]
    assert PROFILES == ("default", "full")
