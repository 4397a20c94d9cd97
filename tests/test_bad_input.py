"""Bad input through the real proxy gets a clear tool error naming the problem, and nothing is stored."""

from __future__ import annotations

import json

import pytest

from conftest import Daemon, mcp_session

pytestmark = pytest.mark.anyio


def stored_count(daemon: Daemon) -> int:
    with daemon.client() as client:
        return client.get_status().memory_count


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("save_memory", {"content": ""}, "missing required argument 'content'"),
        ("save_memory", {"content": "   \n\t "}, "content must not be empty"),
        ("save_memory", {"content": "x" * (64 * 1024 + 1)}, "the limit is 65536 bytes"),
        ("save_memory", {"content": 42}, "'content' must be of type string"),
        ("save_memory", {"content": "ok", "tags": "not-a-list"}, "'tags' must be of type array"),
        ("save_memory", {"content": "ok", "tags": [1, 2]}, "'tags' items must be of type string"),
        ("save_memory", {"content": "ok", "strength": "high"}, "'strength' must be of type number"),
        ("save_memory", {"content": "ok", "strength": 7}, "strength must be between 0.0 and 2.0"),
        ("save_memory", {"content": "ok", "colour": "red"}, "unknown argument 'colour'"),
        ("search_memory", {"query": "x", "limit": 0.5}, "'limit' must be of type integer"),
        ("search_memory", {"query": "x", "limit": 1000}, "limit must be between 1 and 100"),
        ("search_memory", {"query": "x", "since": "last tuesday"}, "since: 'last tuesday' is not an ISO-8601 time"),
        ("open_memories", {"ids": ["mem_doesnotexist"]}, "not found: no memory with id mem_doesnotexist"),
        ("touch_memory", {"id": "mem_doesnotexist"}, "not found: no memory with id mem_doesnotexist"),
        ("analyze_message", {"message": " "}, "message must not be empty"),
        ("analyze_message", {"message": "z" * (64 * 1024 + 1)}, "message is 65537 bytes; the limit is 65536 bytes"),
        ("analyze_message", {"message": "hi", "namespace": "../etc"}, "namespace '../etc' is invalid"),
        ("analyze_message", {"message": "hi", "session_id": 7}, "'session_id' must be of type string"),
        ("no_such_tool", {}, "no tool 'no_such_tool'"),
    ],
)
async def test_rejected_with_a_clear_error_and_nothing_stored(module_daemon, tool, arguments, expected):
    # One daemon for every case (a fresh one each cost ≈ 3 s): what is checked is that this call stored nothing.
    before = stored_count(module_daemon)
    async with mcp_session(module_daemon.address, "acme") as host:
        result = await host.call_tool(tool, arguments)
        assert result.is_error
        assert expected in result.content[0].text
    assert stored_count(module_daemon) == before


async def test_content_limit_is_configurable(workdir):
    daemon = Daemon(workdir, extra_args=["--max-content-bytes", "100"]).start()
    try:
        async with mcp_session(daemon.address, "acme") as host:
            result = await host.call_tool("save_memory", {"content": "y" * 101})
            assert result.is_error and "101 bytes; the limit is 100 bytes" in result.content[0].text
            accepted = await host.call_tool("save_memory", {"content": "y" * 100})
            assert not accepted.is_error
    finally:
        daemon.stop()


async def test_sql_metacharacters_are_stored_verbatim(daemon):
    nasty = "Robert'); DROP TABLE memories;-- \" \\ % _ [a-z]* (x|y) $1 ?"
    async with mcp_session(daemon.address, "acme") as host:
        saved = json.loads((await host.call_tool("save_memory", {"content": nasty, "tags": ["a'b"]})).content[0].text)
        hits = json.loads((await host.call_tool("search_memory", {"query": "DROP TABLE (x|y) [a-z]*"})).content[0].text)
        assert [h["memory"]["content"] for h in hits["hits"]] == [nasty]
        opened = json.loads((await host.call_tool("open_memories", {"ids": [saved["memory"]["id"]]})).content[0].text)
        assert opened["memories"][0]["tags"] == ["a'b"]
    assert stored_count(daemon) == 1
