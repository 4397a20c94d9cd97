"""`cortexd bench activation`: analyze_message in the daemon, over gRPC and through the proxy; batch rate, saves, RSS."""

from __future__ import annotations

import statistics
import time

import anyio

from memory_daemon.bench.common import BENCH_MESSAGES, long_messages, mcp_round_trips, rss_mb, table_row
from memory_daemon.client.launcher import proxy_parameters, temporary_daemon


def _analysis_samples(client, count: int, distinct: bool = False) -> tuple[list[float], list[float], list[float],
                                                                         list[float]]:
    """Round trips of AnalyzeMessage over gRPC, the daemon's own compute time for each, its intent stage, and its
    dedup stage (the relation model on the neighbours that pass its cosine floor)."""
    round_trips, server, intent, dedup = [], [], [], []
    for i in range(count):
        message = BENCH_MESSAGES[i % len(BENCH_MESSAGES)]
        if distinct:  # a new text each call, so no pair is served from the daemon's memory of pairs read
            message = f"{message} (take {i})"
        started = time.perf_counter()
        reply = client.analyze_message(message=message, session_id=f"bench-{i % 4}")
        round_trips.append((time.perf_counter() - started) * 1000)
        server.append(reply.timings_ms["total"])
        if reply.intent_source == "model" and "intent" in reply.timings_ms:
            intent.append(reply.timings_ms["intent"])
        if "dedup" in reply.timings_ms:
            dedup.append(reply.timings_ms["dedup"])
    return round_trips, server, intent, dedup


NEIGHBOURS = 8  # memories stored close to each bench message, so dedup reads eight pairs with the relation model


def _import_checked(client, records: list[dict]) -> int:
    """Import the records (at most 1,000, one export page) and wait until each is read for updates: a memory still
    queued for that is no dedup candidate. The check links some as versions of others; returns how many stay current."""
    client.import_records(records)
    client.wait_for_update_checks(600)
    return sum(1 for m in client.export_memories(limit=len(records)).memories if not m.superseded_by)


def _store_neighbours(client) -> int:
    """Eight memories a little different from each bench message (another service named), imported so that none is
    merged; returns how many stay current after the import's update check."""
    return _import_checked(client, [{"id": f"near-{i}-{k}", "text": f"{message} (for service-{k})"}
                                    for i, message in enumerate(BENCH_MESSAGES) for k in range(NEIGHBOURS)])


TOPICAL_SUBJECTS = ("billing-api", "search-indexer", "auth-gateway", "payments-worker", "report-builder",
                    "mail-relay", "image-resizer", "ledger-sync", "notify-hub", "export-runner")
TOPICAL_FACTS = ("{s} runs on Python 3.{n}", "{s} deploys go out on {day}s", "{s} is owned by team {team}",
                 "the {s} request timeout is {n}0 seconds", "{s} runs {n} replicas in eu-west",
                 "{s} logs are kept for {n} weeks", "the {s} on-call rotation hands over on {day}s",
                 "{s} alerts go to the #{team}-alerts channel", "{s} reads from the {team} Postgres replica",
                 "{s} backups run nightly at 0{n}:00 UTC")
TOPICAL_CHANGES = ("we moved {s} deploys to {day}s", "raised the {s} request timeout to {n}5 seconds",
                   "{s} now runs {n}2 replicas after the load test", "team {team} handed {s} over to the platform team",
                   "{s} was upgraded to Python 3.1{n}", "{s} backups now run at 1{n}:30 UTC")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
TEAMS = ("falcon", "heron", "osprey", "kestrel")


def topical_namespace(variants: int) -> tuple[list[str], list[str]]:
    """A store on a few subjects, as a team's memory is: every fact of TOPICAL_FACTS about each subject, in `variants`
    wordings (another number, day or team); and the changes saved into it, each close to several stored memories."""
    stored = [fact.format(s=subject, n=v + 1, day=DAYS[v % 5], team=TEAMS[v % 4])
              for v in range(variants) for subject in TOPICAL_SUBJECTS for fact in TOPICAL_FACTS]
    changes = [change.format(s=subject, n=i % 9 + 1, day=DAYS[(i + 2) % 5], team=TEAMS[i % 4])
               for i, (subject, change) in enumerate((s, c) for c in TOPICAL_CHANGES for s in TOPICAL_SUBJECTS)]
    return stored, changes


LONG_MESSAGE_RUNS = 3
LONG_MESSAGE_TARGET_MS = 200


def _long_message_samples(client) -> dict[str, list[float]]:
    """In-daemon analysis time of 64 KiB messages by shape, a new variant each run."""
    samples: dict[str, list[float]] = {}
    for run in range(LONG_MESSAGE_RUNS):
        for shape, message in long_messages(run).items():
            samples.setdefault(shape, []).append(client.analyze_message(message=message).timings_ms["total"])
    return samples


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
            grpc_calls, server_ms, intent_ms, _ = _analysis_samples(client, calls)
            long_ms = _long_message_samples(client)
            mix = [{"message": m, "session_id": f"bench-{i % 4}"} for i, m in enumerate(BENCH_MESSAGES)]
            proxy_calls = anyio.run(mcp_round_trips, proxy_parameters(daemon.address, "bench"), "analyze_message",
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
            rss = rss_mb(daemon.process.pid)
        with daemon.client("bench-neighbours") as client:
            current_neighbours = _store_neighbours(client)
            _, near_ms, _, relation_ms = _analysis_samples(client, calls // 2, distinct=True)
            rss = max(rss, rss_mb(daemon.process.pid))
        stored, changes = topical_namespace(4)
        with daemon.client("bench-topical") as client:
            topical_current = _import_checked(client, [{"id": f"topic-{i}", "text": t} for i, t in enumerate(stored)])
            topical_ms = []
            for change in changes:
                started = time.perf_counter()
                client.save_memory(content=change)
                topical_ms.append((time.perf_counter() - started) * 1000)
            topical_rss = rss_mb(daemon.process.pid)

    print(f"cortexd bench activation ({'quick' if quick else 'full'})\n")
    print("| measure | p50 ms | p95 ms | n | note |")
    print("| --- | ---: | ---: | ---: | --- |")
    print(table_row("analyze_message, in-daemon wall time, empty namespace", server_ms, "no neighbours to judge"))
    print(table_row(f"analyze_message, in-daemon, {NEIGHBOURS} close neighbours a message", near_ms,
                    f"{current_neighbours} of {NEIGHBOURS * len(BENCH_MESSAGES)} current after the import's update "
                    "check; target p50 <= 12"))
    if relation_ms:
        print(table_row(f"of which dedup: the relation model on up to {NEIGHBOURS} pairs", relation_ms,
                        "target p50 <= 8"))
    if intent_ms:
        print(table_row("of which the intent classifier (int8 ONNX)", intent_ms, "heads included; target p50 <= 5"))
    print(table_row("analyze_message over direct gRPC, empty namespace", grpc_calls, "p95 target <= 25"))
    print(table_row("analyze_message through the proxy (MCP stdio)", proxy_calls, "p95 target <= 25"))
    print(table_row("save_memory with full enrichment + dedup, gRPC", save_ms, "target p50 <= 25"))
    print(table_row(f"save_memory of a change into a topical namespace ({len(stored)} memories on "
                    f"{len(TOPICAL_SUBJECTS)} subjects), gRPC", topical_ms,
                    f"{topical_current} current after the import's update check; target p50 <= 25"))
    slowest = max(max(samples) for samples in long_ms.values())
    print(f"\nanalyze_message of 64 KiB, in-daemon wall time, {LONG_MESSAGE_RUNS} runs a shape (target <= "
          f"{LONG_MESSAGE_TARGET_MS} ms: {'met' if slowest <= LONG_MESSAGE_TARGET_MS else 'missed'}):\n")
    print("| 64 KiB of | p50 ms | max ms |")
    print("| --- | ---: | ---: |")
    for shape, samples in long_ms.items():
        print(f"| {shape} | {statistics.median(samples):.1f} | {max(samples):.1f} |")
    print(f"\nbatch analyze (AnalyzeMessages, 64 per call): {batch_rate:.0f} messages/s over {batch_messages} messages")
    print(f"daemon RSS with every model loaded: {rss:.0f} MB (target <= 650); after the topical namespace's import "
          f"and saves: {topical_rss:.0f} MB")
    print(f"daemon spawn to models ready: {ready_s:.2f} s; " + "; ".join(
        f"{m.name}: {m.load_ms:.0f} ms{'' if m.ok else ' (FAILED: ' + m.detail + ')'}" for m in models.models))
    return 0
