"""`cortexd bench transport`: proxy cold start, MCP and gRPC round trips, and concurrent save throughput."""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

from memory_daemon.bench.catalog_size import DEFAULT_PROFILE_TOKEN_TARGET, catalog_size, listed_tools
from memory_daemon.bench.common import BARE_SERVER, SEED_MEMORIES, cold_start_ms, mcp_round_trips, rss_mb, table_row
from memory_daemon.client.launcher import DaemonProcess, proxy_parameters, temporary_daemon

PROFILES = ("default", "full")


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
        idle_rss = rss_mb(daemon.process.pid)

        proxy_starts, bare_starts = [], []
        for _ in range(starts):  # interleaved, so machine noise hits both alike
            bare_starts.append(cold_start_ms(bare_command))
            proxy_starts.append(cold_start_ms(proxy_command))

        query = {"query": "which host runs service 7"}
        from mcp import StdioServerParameters

        proxy = proxy_parameters(daemon.address, "bench")
        bare = StdioServerParameters(command=sys.executable, args=[str(bare_script)])
        proxy_lists = anyio.run(mcp_round_trips, proxy, None, {}, calls)
        bare_lists = anyio.run(mcp_round_trips, bare, None, {}, calls)
        proxy_calls = anyio.run(mcp_round_trips, proxy, "search_memory", query, calls)
        bare_calls = anyio.run(mcp_round_trips, bare, "hello", {}, calls)
        grpc_calls = _grpc_round_trips(daemon, query["query"], calls)

        sizes = [catalog_size(profile, anyio.run(listed_tools, daemon.address, profile)) for profile in PROFILES]
        saved, errors, save_latencies = asyncio.run(_save_throughput(daemon.address, 8, load_seconds))
        loaded_rss = rss_mb(daemon.process.pid)

    proxy_p50, bare_p50, grpc_p50 = (statistics.median(s) for s in (proxy_calls, bare_calls, grpc_calls))
    cold_ratio = statistics.median(proxy_starts) / statistics.median(bare_starts)
    print(f"cortexd bench transport ({'quick' if quick else 'full'}; store seeded with {SEED_MEMORIES} memories)\n")
    print("| measure | p50 ms | p95 ms | n | note |")
    print("| --- | ---: | ---: | ---: | --- |")
    print(table_row("cold start: bare MCPServer, spawn to initialize", bare_starts))
    print(table_row("cold start: cortexd proxy, spawn to initialize", proxy_starts, f"ratio {cold_ratio:.2f}x (target <= 1.2x)"))
    list_added = statistics.median(proxy_lists) - statistics.median(bare_lists)
    print(table_row("tools/list: bare MCPServer, answered locally", bare_lists))
    print(table_row("tools/list: cortexd proxy, forwarded to the daemon", proxy_lists,
               f"+{list_added:.2f} ms for the gRPC hop (target <= 1 ms)"))
    print(table_row("round trip: trivial tool on bare MCPServer", bare_calls))
    print(table_row("round trip: search_memory over direct gRPC", grpc_calls))
    print(table_row("round trip: search_memory via proxy + daemon", proxy_calls,
               f"+{proxy_p50 - bare_p50:.2f} ms over the bare trivial tool (includes the search itself); "
               f"+{proxy_p50 - grpc_p50:.2f} ms over direct gRPC (includes MCP stdio)"))
    print(table_row(f"save_memory, 8 concurrent gRPC clients, {load_seconds:g} s", save_latencies,
               f"{saved / load_seconds:.0f} saves/s with enrichment, {len(errors)} errors"
               + (f" (first: {errors[0]})" if errors else "")))
    print(f"\ndaemon RSS: idle {idle_rss:.0f} MB, after load {loaded_rss:.0f} MB")
    print("\ntool catalog a host loads (tools/list through `cortexd proxy --tools <profile>`)\n")
    print("| profile | tools | JSON bytes | tokens, est. (bytes / 4) | MiniLM WordPiece tokens | target |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for size in sizes:
        target = "" if size.profile != "default" else (
            f"<= {DEFAULT_PROFILE_TOKEN_TARGET}: " + ("met" if size.estimated_tokens <= DEFAULT_PROFILE_TOKEN_TARGET
                                                       else "MISSED"))
        print(f"| {size.profile} | {size.tools} | {size.json_bytes} | {size.estimated_tokens} | {size.wordpieces} | "
              f"{target} |")
    return 0 if not errors else 1
