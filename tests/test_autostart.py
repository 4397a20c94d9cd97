"""Auto-start: hosts that start at once with no daemon running bring up exactly one daemon between them."""

from __future__ import annotations

import json
import os
import signal
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
