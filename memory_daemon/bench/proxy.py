"""`cortexd bench proxy`: what fronting another MCP server costs, per call and at start-up, beside calling it directly."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from memory_daemon.bench.common import BARE_SERVER, INITIALIZE, table_row, percentile
from memory_daemon.client.launcher import proxy_parameters, temporary_daemon

TARGET_ADDED_P50_MS = 2.0


async def _interleaved_round_trips(direct_parameters, proxied_parameters, calls: int) -> dict[str, list[float]]:
    """`hello` on the bare server directly, then `up__hello` through the proxy (capture off), then `cap__hello` (capture
    on), call after call over three live sessions, so that machine noise hits all three alike."""
    from mcp import ClientSession, stdio_client

    async with stdio_client(direct_parameters) as (read_direct, write_direct), \
            ClientSession(read_direct, write_direct) as direct, \
            stdio_client(proxied_parameters) as (read_proxy, write_proxy), \
            ClientSession(read_proxy, write_proxy) as proxy:
        await direct.initialize()
        await proxy.initialize()
        names = {t.name for t in (await proxy.list_tools()).tools}
        if not {"up__hello", "cap__hello"} <= names:
            raise RuntimeError(f"the proxy did not mount the upstream's tool; it lists {sorted(names)}")
        routes = {"direct": (direct, "hello"), "proxy": (proxy, "up__hello"), "proxy, capture on": (proxy, "cap__hello")}
        samples: dict[str, list[float]] = {label: [] for label in routes}
        for round_number in range(max(20, calls // 10) + calls):
            for label, (session, tool) in routes.items():
                started = time.perf_counter()
                result = await session.call_tool(tool, {})
                elapsed = (time.perf_counter() - started) * 1000
                if result.is_error:
                    raise RuntimeError(f"{tool}: {result.content[0].text}")
                if round_number >= max(20, calls // 10):  # the first rounds warm both paths up
                    samples[label].append(elapsed)
        return samples


INITIALIZED = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n"
LIST_TOOLS = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}) + "\n"


def _cold_start_ms(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Spawn to the `initialize` response, and spawn to the first tools/list answer, over raw stdio. Then the proxy is
    closed as a host closes it (stdin ends), so its upstreams stop too and do not slow the next start down."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True, env=env)

    def answer_to(request_id: int) -> str:
        while True:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"{command} exited before answering request {request_id}")
            if f'"id":{request_id}' in line.replace(" ", ""):
                return line

    try:
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        answer_to(1)
        initialized = (time.perf_counter() - started) * 1000
        process.stdin.write(INITIALIZED + LIST_TOOLS)
        process.stdin.flush()
        answer_to(2)
        listed = (time.perf_counter() - started) * 1000
        process.stdin.close()
        process.wait(timeout=60)
        return initialized, listed
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _config(directory: Path, bare_script: Path, upstreams: int) -> Path:
    lines = ["[proxy]"]
    for number in range(upstreams):
        name = ("up", "cap")[number] if number < 2 else f"extra{number}"
        lines += ["[[proxy.upstreams]]", f'name = "{name}"', f"command = {json.dumps([sys.executable, str(bare_script)])}",
                  f"capture = {'true' if name == 'cap' else 'false'}"]
    path = directory / f"config-{upstreams}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def bench_proxy(quick: bool) -> int:
    starts = 3 if quick else 10
    calls = 200 if quick else 1000
    with tempfile.TemporaryDirectory(prefix="cortexd-bench-") as scratch, temporary_daemon() as daemon:
        scratch = Path(scratch)
        bare_script = scratch / "bare_server.py"
        bare_script.write_text(BARE_SERVER)
        configs = {count: _config(scratch, bare_script, count) for count in (0, 2)}
        proxy_command = [sys.executable, "-m", "memory_daemon", "proxy", "--daemon", daemon.address, "--no-auto-start"]

        cold: dict[int, list[float]] = {0: [], 2: []}
        first_list: dict[int, list[float]] = {0: [], 2: []}
        for _ in range(starts):  # interleaved, so machine noise hits both alike
            for count, config in configs.items():
                initialized, listed = _cold_start_ms(proxy_command, {**os.environ, "CORTEXD_CONFIG": str(config)})
                cold[count].append(initialized)
                first_list[count].append(listed)

        from mcp import StdioServerParameters

        direct = StdioServerParameters(command=sys.executable, args=[str(bare_script)])
        proxied = proxy_parameters(daemon.address, "bench")
        proxied.env = {**proxied.env, "CORTEXD_CONFIG": str(configs[2])}
        samples = anyio.run(_interleaved_round_trips, direct, proxied, calls)
        with daemon.client("bench") as client:
            proxies = client.get_status().proxies

    direct_p50 = statistics.median(samples["direct"])
    added = statistics.median(samples["proxy"]) - direct_p50
    added_capture = statistics.median(samples["proxy, capture on"]) - direct_p50
    cold_ratio = statistics.median(cold[2]) / statistics.median(cold[0])
    print(f"cortexd bench proxy ({'quick' if quick else 'full'}; upstream: a bare MCPServer over stdio)\n")
    print("| measure | p50 ms | p95 ms | n | note |")
    print("| --- | ---: | ---: | ---: | --- |")
    print(table_row("round trip: upstream tool called directly", samples["direct"]))
    print(table_row("round trip: the same tool mounted in the proxy", samples["proxy"],
               f"{added:+.2f} ms p50, {percentile(samples['proxy'], 0.95) - percentile(samples['direct'], 0.95):+.2f} "
               f"ms p95 (target p50 <= {TARGET_ADDED_P50_MS:g} ms added)"))
    print(table_row("round trip: mounted, passive capture on", samples["proxy, capture on"],
               f"{added_capture:+.2f} ms p50 (the observation is sent after the reply, in the background)"))
    print(table_row("cold start: proxy, no upstreams, spawn to initialize", cold[0]))
    print(table_row("cold start: proxy, 2 stdio upstreams, spawn to initialize", cold[2],
               f"ratio {cold_ratio:.2f}x (upstreams start in the background)"))
    print(table_row("spawn to first tools/list: proxy, no upstreams", first_list[0], "cortexd's tools, from the daemon"))
    print(table_row("spawn to first tools/list: proxy, 2 stdio upstreams", first_list[2],
               "waits for the upstreams' first start (at most list_wait_seconds, 5 s)"))
    states = [f"{u.name} {u.state} ({u.tool_count} tools)" for p in proxies for u in p.upstreams]
    print(f"\nupstream health as `cortexd status` showed it: {'; '.join(states) or 'no report yet'}")
    return 0 if added <= TARGET_ADDED_P50_MS else 1
