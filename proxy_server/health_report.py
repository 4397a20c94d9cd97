"""Tells the daemon how this proxy's upstreams are doing, on every change and at least every heartbeat, so that
`cortexd status` can show the upstreams of every proxy (each proxy is its own process, per host)."""

from __future__ import annotations

import os
import socket
import time

import anyio

from cortexd.v1 import cortexd_pb2 as pb
from proxy_server.daemon_link import DaemonLink
from proxy_server.upstreams import Upstreams

DEFAULT_HEARTBEAT_SECONDS = 30.0
BUSY_REFRESH_SECONDS = 5.0  # while calls are flowing, their counts are refreshed this often
REPORT_TIMEOUT_SECONDS = 5.0
COALESCE_SECONDS = 0.2  # a burst of changes (several upstreams connecting) becomes one report


async def report_health_forever(link: DaemonLink, upstreams: Upstreams, namespace: str) -> None:
    proxy_id = f"{socket.gethostname()}:{os.getpid()}"
    heartbeat = DEFAULT_HEARTBEAT_SECONDS
    reported_calls, reported_at = -1, float("-inf")
    while True:
        with anyio.move_on_after(BUSY_REFRESH_SECONDS):
            await upstreams.changed.wait()
        if not (upstreams.changed.is_set() or upstreams.total_calls() != reported_calls
                or time.monotonic() - reported_at >= heartbeat):
            continue
        await anyio.sleep(COALESCE_SECONDS)
        upstreams.changed = anyio.Event()  # changes from here on trigger the next report; earlier ones are in this one
        reported_calls, reported_at = upstreams.total_calls(), time.monotonic()
        report = pb.ReportProxyHealthRequest(proxy=pb.ProxyHealth(
            proxy_id=proxy_id, pid=os.getpid(), namespace=namespace, upstreams=upstreams.health()))
        try:
            reply = await link.memory_call("ReportProxyHealth", report, REPORT_TIMEOUT_SECONDS)
            heartbeat = reply.report_within_seconds or DEFAULT_HEARTBEAT_SECONDS
        except Exception:  # noqa: BLE001 — the daemon may be down or older; health is best effort, serving is not
            heartbeat = DEFAULT_HEARTBEAT_SECONDS
