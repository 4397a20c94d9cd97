"""`cortexd bench`: measures speed and memory side by side in one run and prints a table."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio

from memory_daemon.launcher import DaemonProcess, proxy_parameters, temporary_daemon

BARE_SERVER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def hello() -> str:
    """Say hello."""
    return "hello"


server.run()
'''
INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}) + "\n"
SEED_MEMORIES = 1000


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _cold_start_ms(command: list[str]) -> float:
    """Spawn to the `initialize` response, over raw stdio."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        while True:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"{command} exited before answering initialize")
            if '"id":1' in line.replace(" ", ""):
                return (time.perf_counter() - started) * 1000
    finally:
        process.kill()
        process.wait()


async def _mcp_round_trips(params, tool: str | None, arguments: dict | list[dict], count: int) -> list[float]:
    """Latencies of `tools/call tool` (or `tools/list` when tool is None) over one MCP stdio session.

    A list of argument sets is cycled through, call by call."""
    rotation = arguments if isinstance(arguments, list) else [arguments]
    from mcp import ClientSession, stdio_client

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            calls = 0

            async def once() -> None:
                nonlocal calls
                calls += 1
                if tool is None:
                    await session.list_tools()
                    return
                result = await session.call_tool(tool, rotation[calls % len(rotation)])
                if result.is_error:
                    raise RuntimeError(result.content[0].text)

            for _ in range(max(20, count // 10)):
                await once()
            samples = []
            for _ in range(count):
                started = time.perf_counter()
                await once()
                samples.append((time.perf_counter() - started) * 1000)
            return samples


def _grpc_round_trips(daemon: DaemonProcess, query: str, count: int) -> list[float]:
    with daemon.client("bench") as client:
        for _ in range(max(20, count // 10)):
            client.search_memory(query=query)
        samples = []
        for _ in range(count):
            started = time.perf_counter()
            client.search_memory(query=query)
            samples.append((time.perf_counter() - started) * 1000)
        return samples


async def _save_throughput(address: str, clients: int, seconds: float) -> tuple[int, list[str], list[float]]:
    import grpc

    from cortexd.connect import CHANNEL_OPTIONS, call_metadata
    from cortexd.v1 import cortexd_pb2 as pb
    from cortexd.v1 import cortexd_pb2_grpc as pb_grpc

    latencies: list[float] = []
    errors: list[str] = []
    deadline = time.perf_counter() + seconds

    async def client(number: int) -> None:
        async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
            stub = pb_grpc.MemoryServiceStub(channel)
            metadata = call_metadata("bench-load", None)
            sequence = 0
            while time.perf_counter() < deadline:
                sequence += 1
                request = pb.SaveMemoryRequest(content=f"client {number} note {sequence}: deploy window is 14:00 UTC")
                started = time.perf_counter()
                try:
                    await stub.SaveMemory(request, metadata=metadata, timeout=30)
                    latencies.append((time.perf_counter() - started) * 1000)
                except grpc.aio.AioRpcError as error:
                    errors.append(f"{error.code().name}: {error.details()}")

    await asyncio.gather(*(client(n) for n in range(clients)))
    return len(latencies), errors, latencies


def _row(name: str, samples: list[float], note: str = "") -> str:
    return f"| {name} | {statistics.median(samples):.2f} | {percentile(samples, 0.95):.2f} | {len(samples)} | {note} |"


def bench_transport(quick: bool) -> int:
    starts = 3 if quick else 10
    calls = 200 if quick else 1000
    load_seconds = 3.0 if quick else 20.0
    with tempfile.TemporaryDirectory(prefix="cortexd-bench-") as scratch, temporary_daemon() as daemon:
        bare_script = Path(scratch) / "bare_server.py"
        bare_script.write_text(BARE_SERVER)
        bare_command = [sys.executable, str(bare_script)]
        proxy_command = [sys.executable, "-m", "memory_daemon", "proxy", "--daemon", daemon.address, "--no-auto-start"]
        with daemon.client("bench") as client:
            client.import_records({"id": f"seed-{i}", "text": f"note {i}: service {i % 50} runs on host-{i % 7} with python 3.{i % 4 + 10}"}
                                  for i in range(SEED_MEMORIES))
        idle_rss = _rss_mb(daemon.process.pid)

        proxy_starts, bare_starts = [], []
        for _ in range(starts):  # interleaved, so machine noise hits both alike
            bare_starts.append(_cold_start_ms(bare_command))
            proxy_starts.append(_cold_start_ms(proxy_command))

        query = {"query": "which host runs service 7"}
        from mcp import StdioServerParameters

        proxy = proxy_parameters(daemon.address, "bench")
        bare = StdioServerParameters(command=sys.executable, args=[str(bare_script)])
        proxy_lists = anyio.run(_mcp_round_trips, proxy, None, {}, calls)
        bare_lists = anyio.run(_mcp_round_trips, bare, None, {}, calls)
        proxy_calls = anyio.run(_mcp_round_trips, proxy, "search_memory", query, calls)
        bare_calls = anyio.run(_mcp_round_trips, bare, "hello", {}, calls)
        grpc_calls = _grpc_round_trips(daemon, query["query"], calls)

        saved, errors, save_latencies = asyncio.run(_save_throughput(daemon.address, 8, load_seconds))
        loaded_rss = _rss_mb(daemon.process.pid)

    proxy_p50, bare_p50, grpc_p50 = (statistics.median(s) for s in (proxy_calls, bare_calls, grpc_calls))
    cold_ratio = statistics.median(proxy_starts) / statistics.median(bare_starts)
    print(f"cortexd bench transport ({'quick' if quick else 'full'}; store seeded with {SEED_MEMORIES} memories)\n")
    print("| measure | p50 ms | p95 ms | n | note |")
    print("| --- | ---: | ---: | ---: | --- |")
    print(_row("cold start: bare MCPServer, spawn to initialize", bare_starts))
    print(_row("cold start: cortexd proxy, spawn to initialize", proxy_starts, f"ratio {cold_ratio:.2f}x (target <= 1.2x)"))
    list_added = statistics.median(proxy_lists) - statistics.median(bare_lists)
    print(_row("tools/list: bare MCPServer, answered locally", bare_lists))
    print(_row("tools/list: cortexd proxy, forwarded to the daemon", proxy_lists,
               f"+{list_added:.2f} ms for the gRPC hop (target <= 1 ms)"))
    print(_row("round trip: trivial tool on bare MCPServer", bare_calls))
    print(_row("round trip: search_memory over direct gRPC", grpc_calls))
    print(_row("round trip: search_memory via proxy + daemon", proxy_calls,
               f"+{proxy_p50 - bare_p50:.2f} ms over the bare trivial tool (includes the search itself); "
               f"+{proxy_p50 - grpc_p50:.2f} ms over direct gRPC (includes MCP stdio)"))
    print(_row(f"save_memory, 8 concurrent gRPC clients, {load_seconds:g} s", save_latencies,
               f"{saved / load_seconds:.0f} saves/s with enrichment, {len(errors)} errors"
               + (f" (first: {errors[0]})" if errors else "")))
    print(f"\ndaemon RSS: idle {idle_rss:.0f} MB, after load {loaded_rss:.0f} MB")
    return 0 if not errors else 1


BENCH_MESSAGES = (
    "remember that I prefer pnpm over npm for JavaScript projects",
    "we decided to move CI to GitHub Actions next sprint",
    "Priya owns the billing service and the invoices cron job",
    "what did I say about the staging database?",
    "actually the deadline moved to the 14th",
    "can you refactor auth_service.py to use dependency injection?",
    "thanks, that worked!",
    "our Postgres 16 cluster runs on three r6g.xlarge nodes in eu-west-1",
    "I always use Neovim with the LazyVim config",
    "don't forget: the API keys rotate every 90 days, this is critical",
    "how do I set my preferred editor in git?",
    "yes, let's go with Redis for the session cache",
    "the flaky test is in tests/test_payments.py::test_refund_partial",
    "my sister Ana lives in Lisbon and visits in June",
    "let's use Polars instead of pandas for the ETL job",
    "ok ship it — btw we decided to keep the monorepo",
)


def _analysis_samples(client, count: int) -> tuple[list[float], list[float], list[float]]:
    """Round trips of AnalyzeMessage over gRPC, the daemon's own compute time for each, and its intent stage."""
    round_trips, server, intent = [], [], []
    for i in range(count):
        message = BENCH_MESSAGES[i % len(BENCH_MESSAGES)]
        started = time.perf_counter()
        reply = client.analyze_message(message=message, session_id=f"bench-{i % 4}")
        round_trips.append((time.perf_counter() - started) * 1000)
        server.append(reply.timings_ms["total"])
        if reply.intent_source == "model" and "intent" in reply.timings_ms:
            intent.append(reply.timings_ms["intent"])
    return round_trips, server, intent


def bench_activation(quick: bool) -> int:
    calls = 100 if quick else 500
    batch_messages = 128 if quick else 1024
    saves = 50 if quick else 300
    spawned = time.perf_counter()
    with temporary_daemon() as daemon:
        with daemon.client("bench") as client:
            models = client.get_model_status()  # waits for the background load
            ready_s = time.perf_counter() - spawned
            for i in range(20):
                client.analyze_message(message=BENCH_MESSAGES[i % len(BENCH_MESSAGES)])
            grpc_calls, server_ms, intent_ms = _analysis_samples(client, calls)
            mix = [{"message": m, "session_id": f"bench-{i % 4}"} for i, m in enumerate(BENCH_MESSAGES)]
            proxy_calls = anyio.run(_mcp_round_trips, proxy_parameters(daemon.address, "bench"), "analyze_message",
                                    mix, calls)

            started = time.perf_counter()
            for offset in range(0, batch_messages, 64):
                items = [{"id": str(i), "message": f"{BENCH_MESSAGES[i % len(BENCH_MESSAGES)]} ({i})"}
                         for i in range(offset, min(offset + 64, batch_messages))]
                client.analyze_messages(items=items)
            batch_rate = batch_messages / (time.perf_counter() - started)

            save_ms = []
            for i in range(saves):
                started = time.perf_counter()
                client.save_memory(content=f"{BENCH_MESSAGES[i % len(BENCH_MESSAGES)]} — note {i} about service-{i}")
                save_ms.append((time.perf_counter() - started) * 1000)
            rss = _rss_mb(daemon.process.pid)

    print(f"cortexd bench activation ({'quick' if quick else 'full'})\n")
    print("| measure | p50 ms | p95 ms | n | note |")
    print("| --- | ---: | ---: | ---: | --- |")
    print(_row("analyze_message, in-daemon wall time", server_ms, "target p50 <= 10, p95 <= 25"))
    if intent_ms:
        print(_row("of which the intent classifier (int8 ONNX)", intent_ms, "target p50 <= 5 added"))
    print(_row("analyze_message over direct gRPC", grpc_calls, "target p50 <= 10, p95 <= 25"))
    print(_row("analyze_message through the proxy (MCP stdio)", proxy_calls, "target p50 <= 10, p95 <= 25"))
    print(_row("save_memory with full enrichment + dedup, gRPC", save_ms, "target p50 <= 20"))
    print(f"\nbatch analyze (AnalyzeMessages, 64 per call): {batch_rate:.0f} messages/s over {batch_messages} messages")
    print(f"daemon RSS with every model loaded: {rss:.0f} MB (target <= 600)")
    print(f"daemon spawn to models ready: {ready_s:.2f} s; " + "; ".join(
        f"{m.name}: {m.load_ms:.0f} ms{'' if m.ok else ' (FAILED: ' + m.detail + ')'}" for m in models.models))
    return 0


def run_bench(suite: str, quick: bool = False) -> int:
    if suite == "transport":
        return bench_transport(quick)
    if suite == "activation":
        return bench_activation(quick)
    if suite == "retrieval":
        from memory_daemon.bench_retrieval import bench_retrieval

        return bench_retrieval(quick)
    if suite == "graph":
        from memory_daemon.bench_graph import bench_graph

        return bench_graph(quick)
    if suite == "hooks":
        from memory_daemon.bench_hooks import run

        return run(quick)
    if suite == "proxy":
        from memory_daemon.bench_proxy import bench_proxy

        return bench_proxy(quick)
    if suite == "load":
        from memory_daemon.bench_load import bench_load

        return bench_load(quick)
    raise SystemExit(f"unknown bench suite {suite!r}")
