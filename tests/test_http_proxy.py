"""`cortexd proxy --http` serves the same forwarded catalog over streamable HTTP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest
from conftest import free_port
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio


def _wait_listening(port: int, process: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, "the HTTP proxy exited"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError("the HTTP proxy never listened")


async def test_streamable_http_proxy_forwards_tools(daemon):
    port = free_port()
    proxy = subprocess.Popen(
        [sys.executable, "-m", "memory_daemon", "proxy", "--daemon", daemon.address, "--no-auto-start",
         "--namespace", "web", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port, proxy)
        async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                assert "save_memory" in {t.name for t in (await session.list_tools()).tools}
                saved = await session.call_tool("save_memory", {"content": "Served over streamable HTTP"})
                assert json.loads(saved.content[0].text)["memory"]["namespace"] == "web"
                hits = await session.call_tool("search_memory", {"query": "streamable http"})
                assert len(json.loads(hits.content[0].text)["hits"]) == 1
    finally:
        proxy.terminate()
        proxy.wait(timeout=30)
