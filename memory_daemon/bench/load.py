"""`cortexd bench load`: 8 gRPC clients run a mixed workload on one daemon, alone and then beside a worst-case client
that saves 64 KiB in a loop in its own namespace; throughput, latency percentiles and errors per call, the WAL's
peak, and a SIGKILL restart after the load."""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from pathlib import Path

from memory_daemon.bench.common import (
    BENCH_MESSAGES, SEED_MEMORIES, WORST_CASE_NAMESPACE, WorstCaseSaver, percentile, rss_mb,
)
from memory_daemon.client.launcher import DaemonProcess, temporary_daemon
from memory_daemon.core.config import DATABASE_FILE
from memory_daemon.store.database import wal_path_of

CLIENTS = 8
# (operation, share of the calls): what hosts mostly do is read; every save runs the full enrichment.
WORKLOAD = (("search_memory", 0.70), ("save_memory", 0.20), ("analyze_message", 0.10))
QUERIES = ("which host runs service {n}", "python version of service {n}", "deploy window", "who owns billing",
           "pnpm or npm", "staging database", "service {n} host")
NAMESPACE = "bench-load"
SEARCH_P95_TARGET_MS = 100.0
WAL_TARGET_MIB = 64.0
RESTART_TARGET_SECONDS = 3.0


async def _client(address: str, number: int, deadline: float, latencies: dict[str, list[float]],
                  errors: dict[str, list[str]]) -> None:
    import grpc

    from cortexd.connect import CHANNEL_OPTIONS, call_metadata
    from cortexd.v1 import cortexd_pb2 as pb
    from cortexd.v1 import cortexd_pb2_grpc as pb_grpc

    chooser = random.Random(number)  # the same mix of calls on every run
    operations = [name for name, _ in WORKLOAD]
    shares = [share for _, share in WORKLOAD]
    metadata = call_metadata(NAMESPACE, None)
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        stub = pb_grpc.MemoryServiceStub(channel)
        sequence = 0
        while time.perf_counter() < deadline:
            sequence += 1
            operation = chooser.choices(operations, shares)[0]
            message = chooser.choice(BENCH_MESSAGES)
            started = time.perf_counter()
            if operation == "search_memory":
                call = stub.SearchMemory(pb.SearchMemoryRequest(
                    query=chooser.choice(QUERIES).format(n=chooser.randrange(50)), limit=10), metadata=metadata, timeout=60)
            elif operation == "save_memory":
                call = stub.SaveMemory(pb.SaveMemoryRequest(
                    content=f"{message} (client {number}, note {sequence})", session_id=f"load-{number}"),
                    metadata=metadata, timeout=60)
            else:
                call = stub.AnalyzeMessage(pb.AnalyzeMessageRequest(message=message, session_id=f"load-{number}"),
                                           metadata=metadata, timeout=60)
            try:
                await call
                latencies[operation].append((time.perf_counter() - started) * 1000)
            except grpc.aio.AioRpcError as error:
                errors[operation].append(f"{error.code().name}: {error.details()}")


async def _run_load(address: str, seconds: float) -> tuple[dict[str, list[float]], dict[str, list[str]], float]:
    latencies: dict[str, list[float]] = {name: [] for name, _ in WORKLOAD}
    errors: dict[str, list[str]] = {name: [] for name, _ in WORKLOAD}
    started = time.perf_counter()
    await asyncio.gather(*(_client(address, n, started + seconds, latencies, errors) for n in range(CLIENTS)))
    return latencies, errors, time.perf_counter() - started


async def _with_peak_size(path: Path, work) -> tuple[object, int]:
    """Await `work` while sampling the size of `path` every 0.25 s: its result and the largest size seen."""
    peak = 0

    async def sample() -> None:
        nonlocal peak
        while True:
            peak = max(peak, path.stat().st_size if path.exists() else 0)
            await asyncio.sleep(0.25)

    sampler = asyncio.create_task(sample())
    try:
        result = await work
    finally:
        sampler.cancel()
    return result, peak


def _sigkill_restart(daemon: DaemonProcess, wal: Path) -> tuple[int, float, float]:
    """Kill the daemon and start it on the same store: the WAL it replays, seconds until it answers, and seconds
    until it serves (the models loaded)."""
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    daemon.process.kill()
    daemon.process.wait()
    started = time.perf_counter()
    daemon.start(wait=False)
    daemon.wait_ready()
    answering = time.perf_counter() - started
    daemon.wait_serving()
    return wal_bytes, answering, time.perf_counter() - started


def table_row(name: str, share: str, samples: list[float], errors: int, elapsed: float) -> str:
    if not samples:
        return f"| {name} | {share} | 0 | 0.0 | - | - | - | {errors} |"
    return (f"| {name} | {share} | {len(samples)} | {len(samples) / elapsed:.1f} | {statistics.median(samples):.2f} | "
            f"{percentile(samples, 0.95):.2f} | {percentile(samples, 0.99):.2f} | {errors} |")


def _print_phase(title: str, latencies: dict[str, list[float]], errors: dict[str, list[str]], elapsed: float,
                 saver: WorstCaseSaver | None = None) -> int:
    mix = [ms for name, _ in WORKLOAD for ms in latencies[name]]
    print(f"{title}\n")
    print("| operation | share | n | calls/s | p50 ms | p95 ms | p99 ms | errors |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, share in WORKLOAD:
        label = "save_memory (full enrichment)" if name == "save_memory" else name
        print(table_row(label, f"{share:.0%}", latencies[name], len(errors[name]), elapsed))
    print(table_row("all of the mix", "100%", mix, sum(len(e) for e in errors.values()), elapsed))
    if saver is not None:
        print(table_row(f"worst-case client: save_memory 64 KiB in namespace {WORST_CASE_NAMESPACE}", "-",
                        saver.latencies_ms, len(saver.errors), elapsed))
    print(f"\nthe mix: {len(mix) / elapsed:.1f} calls/s over {elapsed:.1f} s")
    for name, messages in (*errors.items(), ("worst-case save_memory", saver.errors if saver else [])):
        if messages:
            print(f"first {name} error: {messages[0]}")
    print()
    return sum(len(e) for e in errors.values()) + (len(saver.errors) if saver else 0)


def bench_load(quick: bool) -> int:
    seconds = 10.0 if quick else 60.0
    with temporary_daemon() as daemon:
        with daemon.client(NAMESPACE) as client:
            client.import_records({"id": f"seed-{i}", "text": f"note {i}: service {i % 50} runs on host-{i % 7} "
                                                              f"with python 3.{i % 4 + 10}"} for i in range(SEED_MEMORIES))
            client.get_model_status()  # waits for the model load
            for message in BENCH_MESSAGES:  # warm-up
                client.analyze_message(message=message)
                client.search_memory(query=message)
        idle_rss = rss_mb(daemon.process.pid)
        wal = wal_path_of(daemon.data_dir / DATABASE_FILE)
        alone, peak_alone = asyncio.run(_with_peak_size(wal, _run_load(daemon.address, seconds)))
        with WorstCaseSaver(daemon.address) as saver:
            beside, peak_beside = asyncio.run(_with_peak_size(wal, _run_load(daemon.address, seconds)))
        loaded_rss = rss_mb(daemon.process.pid)
        replayed, answering, serving = _sigkill_restart(daemon, wal)

    print(f"cortexd bench load ({'quick' if quick else 'full'}; {CLIENTS} concurrent gRPC clients in namespace "
          f"{NAMESPACE}, {seconds:g} s per phase, store seeded with {SEED_MEMORIES} memories)\n")
    total_errors = _print_phase("the mix alone:", *alone)
    total_errors += _print_phase("the mix beside a worst-case client (64 KiB saves in a loop, in its own namespace):",
                                 *beside, saver)
    p95_alone, p95_beside = (percentile(phase[0]["search_memory"], 0.95) for phase in (alone, beside))
    met = "met" if p95_beside <= SEARCH_P95_TARGET_MS else "missed"
    print(f"search_memory p95 in the mix's namespace: {p95_alone:.1f} ms alone, {p95_beside:.1f} ms beside the "
          f"worst-case client (target <= {SEARCH_P95_TARGET_MS:.0f} ms: {met}); worst-case saves stored: "
          f"{len(saver.latencies_ms)}")
    print(f"errors {total_errors} (target 0); daemon RSS: idle {idle_rss:.0f} MB, after load {loaded_rss:.0f} MB")
    mib = 1024 * 1024
    wal_peak = max(peak_alone, peak_beside)
    print(f"WAL peak during the load {wal_peak / mib:.1f} MiB (target <= {WAL_TARGET_MIB:.0f} MiB: "
          f"{'met' if wal_peak <= WAL_TARGET_MIB * mib else 'missed'}); SIGKILL restart over the {replayed / mib:.1f} MiB "
          f"left: answers after {answering:.2f} s, serves (models loaded) after {serving:.2f} s (target <= "
          f"{RESTART_TARGET_SECONDS:.0f} s: {'met' if serving <= RESTART_TARGET_SECONDS else 'missed'})")
    return 0 if total_errors == 0 else 1
