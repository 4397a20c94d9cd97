"""Faults: malformed JSON-RPC, a daemon killed mid-call, a proxy killed mid-call, no daemon at all."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import anyio
import pytest

from conftest import mcp_session

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
}


def _read_message(stream, timeout: float = 30.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        if line.strip():
            return json.loads(line)
    raise AssertionError("no reply from the proxy")


def test_malformed_json_rpc_line_gets_an_error_and_the_proxy_keeps_serving(daemon):
    proxy = subprocess.Popen(
        [sys.executable, "-m", "memory_daemon", "proxy", "--daemon", daemon.address, "--no-auto-start"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        def send(obj_or_text) -> None:
            text = obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text)
            proxy.stdin.write(text + "\n")
            proxy.stdin.flush()

        send(INITIALIZE)
        assert _read_message(proxy.stdout)["id"] == 1
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send("{this is not json")
        error = _read_message(proxy.stdout)
        assert error["error"]["code"] == -32700, error
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
        listed = _read_message(proxy.stdout)
        assert listed["id"] == 2 and {t["name"] for t in listed["result"]["tools"]} >= {"save_memory"}
        assert proxy.poll() is None
    finally:
        proxy.kill()
        proxy.wait()


async def test_daemon_killed_mid_call_reports_a_retriable_error(daemon):
    async with mcp_session(daemon.address, "acme") as host:
        await host.call_tool("save_memory", {"content": "warm-up"})
        os.kill(daemon.process.pid, signal.SIGSTOP)  # freeze it so the next call is certainly in flight
        try:
            async with anyio.create_task_group() as group:
                results = []

                async def call() -> None:
                    results.append(await host.call_tool("search_memory", {"query": "warm-up"}))

                group.start_soon(call)
                await anyio.sleep(1.0)
                os.kill(daemon.process.pid, signal.SIGKILL)
        finally:
            daemon.process.wait()
        (result,) = results
        assert result.is_error
        assert "retriable" in result.content[0].text
        assert result.structured_content["retriable"] is True

        daemon.start()
        recovered = await host.call_tool("search_memory", {"query": "warm-up"})
        assert not recovered.is_error


async def test_proxy_killed_mid_call_leaves_the_daemon_unaffected(daemon):
    proxy = subprocess.Popen(
        [sys.executable, "-m", "memory_daemon", "proxy", "--daemon", daemon.address, "--no-auto-start"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    proxy.stdin.write(json.dumps(INITIALIZE) + "\n")
    proxy.stdin.flush()
    _read_message(proxy.stdout)
    proxy.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
    os.kill(daemon.process.pid, signal.SIGSTOP)
    try:
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "save_memory", "arguments": {"content": "written while the proxy died"}}}
        proxy.stdin.write(json.dumps(call) + "\n")
        proxy.stdin.flush()
        time.sleep(1.0)
        proxy.kill()
        proxy.wait()
    finally:
        os.kill(daemon.process.pid, signal.SIGCONT)

    async with mcp_session(daemon.address, "acme") as host:
        saved = await host.call_tool("save_memory", {"content": "the daemon still serves"})
        assert not saved.is_error
        hits = json.loads((await host.call_tool("search_memory", {"query": "daemon still serves"})).content[0].text)
        assert hits["hits"]
    assert daemon.process.poll() is None


async def test_no_daemon_and_no_auto_start_gives_a_clear_error_quickly(workdir):
    address = f"unix:{workdir / 'nothing-here.sock'}"
    async with mcp_session(address, "acme") as host:
        with anyio.fail_after(20):
            result = await host.call_tool("search_memory", {"query": "anything"})
        assert result.is_error
        text = result.content[0].text
        assert "not running" in text and "cortexd serve" in text
