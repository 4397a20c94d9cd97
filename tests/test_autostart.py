"""Auto-start: hosts that start at once with no daemon running bring up exactly one daemon between them."""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import anyio
import pytest

from conftest import mcp_session

pytestmark = pytest.mark.anyio


def _daemon_pids(socket_path) -> set[int]:
    """Live `cortexd serve` processes for this socket, read from /proc."""
    pids = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                args = handle.read().split(b"\0")
        except OSError:
            continue
        if b"serve" in args and f"unix:{socket_path}".encode() in args:
            pids.add(int(entry))
    return pids


async def test_three_hosts_racing_bring_up_exactly_one_daemon(workdir):
    socket_path = workdir / "run" / "cortexd.sock"
    address = f"unix:{socket_path}"
    data_dir = str(workdir / "data")
    results: dict[str, dict] = {}

    async def host(name: str) -> None:
        async with mcp_session(address, "race", "--data-dir", data_dir) as session:
            result = await session.call_tool("save_memory", {"content": f"saved by host {name}"})
            assert not result.is_error, result.content[0].text
            results[name] = json.loads(result.content[0].text)

    try:
        async with anyio.create_task_group() as group:
            for name in ("a", "b", "c"):
                group.start_soon(host, name)
        assert set(results) == {"a", "b", "c"}
        time.sleep(1.0)  # let any losing daemon finish exiting
        pids = _daemon_pids(socket_path)
        assert len(pids) == 1, pids
        lock = json.loads((workdir / "data" / "cortexd.lock").read_text())
        assert lock["pid"] in pids
    finally:
        for pid in _daemon_pids(socket_path):
            os.kill(pid, signal.SIGTERM)


async def test_a_failed_auto_start_says_why_instead_of_blaming_a_missing_daemon(daemon, workdir):
    # Another daemon already owns this data dir: the auto-started one exits 3 at once, and the call says so.
    other_socket = workdir / "other" / "cortexd.sock"
    async with mcp_session(f"unix:{other_socket}", "acme", "--data-dir", str(daemon.data_dir)) as host:
        failed = await host.call_tool("search_memory", {"query": "anything"})
        text = failed.content[0].text
        assert failed.is_error and "An automatic start failed" in text and "exited with status 3" in text, text
        assert "holds the store" in text or "already" in text, text
        again = await host.call_tool("search_memory", {"query": "anything"})
        assert again.is_error and "exited with status 3" in again.content[0].text, "the cause is kept, not re-tried"


async def test_a_proxy_started_before_its_daemon_announces_the_tools_once_the_daemon_answers(workdir):
    import mcp_types as types
    from mcp import ClientSession, stdio_client

    from conftest import Daemon
    from memory_daemon.client.launcher import proxy_parameters

    daemon = Daemon(workdir)  # not started yet
    changed = anyio.Event()

    async def on_message(message) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with stdio_client(proxy_parameters(daemon.address, "late"), errlog=sys.stderr) as (read, write), \
            ClientSession(read, write, message_handler=on_message) as host:
        started = await host.initialize()
        assert started.capabilities.tools.list_changed is True
        assert (await host.list_tools()).tools == [], "no daemon yet: an empty list, not an error"
        daemon.start()
        try:
            with anyio.fail_after(60):
                await changed.wait()
            assert "save_memory" in {t.name for t in (await host.list_tools()).tools}
        finally:
            daemon.stop()
