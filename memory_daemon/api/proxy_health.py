"""What each proxy last reported about its upstream MCP servers, kept in RAM until the report goes stale."""

from __future__ import annotations

import threading
import time

from cortexd.v1 import cortexd_pb2 as pb
from memory_daemon.core.errors import InvalidArgument
from memory_daemon.core.timefmt import format_iso, utc_now

# A proxy reports on every change and at least every HEARTBEAT_SECONDS; one that missed three heartbeats is gone.
HEARTBEAT_SECONDS = 30.0
STALE_AFTER_SECONDS = 3 * HEARTBEAT_SECONDS
MAX_PROXIES = 256
MAX_UPSTREAMS = 64
MAX_ERROR_CHARS = 500
# Room for MAX_UPSTREAMS upstreams, each with a full last_error; every live report goes out again in GetStatus.
MAX_REPORT_BYTES = 64 * 1024


class ProxyHealthBoard:
    """The latest report of each live proxy, by proxy id; proxies run in other processes, so they push, we keep."""

    def __init__(self, stale_after: float = STALE_AFTER_SECONDS) -> None:
        self._stale_after = stale_after
        self._reports: dict[str, tuple[float, pb.ProxyHealth]] = {}
        self._lock = threading.Lock()

    def report(self, proxy: pb.ProxyHealth) -> float:
        """Keep this report (stamped with its arrival time); returns the seconds within which to report again."""
        proxy_id = proxy.proxy_id.strip()
        if not proxy_id or len(proxy_id) > 200:
            raise InvalidArgument("proxy.proxy_id: expected 1-200 characters")
        if len(proxy.upstreams) > MAX_UPSTREAMS:
            raise InvalidArgument(f"proxy.upstreams: at most {MAX_UPSTREAMS}, got {len(proxy.upstreams)}")
        kept = pb.ProxyHealth()
        kept.CopyFrom(proxy)
        kept.proxy_id = proxy_id
        kept.reported_at = format_iso(utc_now())
        for upstream in kept.upstreams:
            upstream.last_error = upstream.last_error[:MAX_ERROR_CHARS]
        if kept.ByteSize() > MAX_REPORT_BYTES:
            raise InvalidArgument(f"proxy: the report is {kept.ByteSize()} bytes; the limit is {MAX_REPORT_BYTES}")
        now = time.monotonic()
        with self._lock:
            self._drop_stale(now)
            if proxy_id not in self._reports and len(self._reports) >= MAX_PROXIES:
                raise InvalidArgument(f"more than {MAX_PROXIES} proxies are reporting; the oldest must go stale first")
            self._reports[proxy_id] = (now, kept)
        return HEARTBEAT_SECONDS

    def live(self) -> list[pb.ProxyHealth]:
        """Reports younger than the stale limit, by proxy id."""
        with self._lock:
            self._drop_stale(time.monotonic())
            return [report for _, report in sorted(self._reports.values(), key=lambda entry: entry[1].proxy_id)]

    def _drop_stale(self, now: float) -> None:
        for proxy_id in [p for p, (received, _) in self._reports.items() if now - received > self._stale_after]:
            del self._reports[proxy_id]
