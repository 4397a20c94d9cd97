"""`cortexd bench graph`: knowledge-graph latencies at the cortex-mcp suite's scale and at 10k-1M facts, plus stale-fact leakage."""

from __future__ import annotations

import random
import shutil
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from memory_daemon.bench.common import table_row, percentile
from memory_daemon.client.launcher import DaemonProcess

SUITE_ENTITIES = 60
SUITE_FACTS = 500
SUITE_SUPERSESSIONS = 150
SUITE_EPISODES = 100
PREDICATES = ("owner", "database", "runtime", "deploy_day", "queue", "region", "cache", "auth_scheme")


def _timed(samples: list[float], call, *args, **kwargs):
    started = time.perf_counter()
    result = call(*args, **kwargs)
    samples.append((time.perf_counter() - started) * 1000)
    return result


def _leaks(client, entities: list[str], now_iso: str) -> tuple[int, int]:
    """(stale facts served as current, entities checked): superseded, ended, retracted or doubled singular values."""
    leaks = 0
    for name in entities:
        view = client.query_entity(entity=name, hops=0)
        leaks += sum(f.status != "active" for f in view.active)
        singular = Counter((f.subject_id, f.predicate) for f in view.active if f.singular and f.subject == name)
        leaks += sum(n - 1 for n in singular.values() if n > 1)
        now = client.time_travel(valid_at=now_iso, entity=name, limit=1000)
        current = {f.id for f in view.active}
        leaks += sum(f.id not in current for f in now.facts)
    return leaks, len(entities)


def _suite(daemon: DaemonProcess, rng: random.Random) -> dict:
    entities = [f"service_{i}" for i in range(SUITE_ENTITIES)]
    record, upsert, traverse, verify = [], [], [], []
    with daemon.client("suite") as client:
        client.analyze_message(message="warm-up")  # waits for the model load, which would compete for the CPU
        # 350 first values, then 150 changes of an existing (subject, predicate): 500 facts, 150 supersessions.
        keys = [(entities[i % SUITE_ENTITIES], PREDICATES[i // SUITE_ENTITIES % len(PREDICATES)])
                for i in range(SUITE_FACTS - SUITE_SUPERSESSIONS)]
        superseded = 0
        for i, (subject, predicate) in enumerate(keys):
            other = entities[(i * 7 + 3) % SUITE_ENTITIES]
            _timed(upsert, client.upsert_fact, subject=subject, predicate=predicate, object=other,
                   object_kind="entity", valid_from="2026-01-01T00:00:00Z", create_entities=True)
        for i in range(SUITE_SUPERSESSIONS):
            subject, predicate = keys[rng.randrange(len(keys))]
            reply = _timed(upsert, client.upsert_fact, subject=subject, predicate=predicate, object=f"v{i}",
                           valid_from=f"2026-02-01T00:00:{i % 60:02d}.{i:06d}Z")
            superseded += len(reply.superseded)
        for i in range(SUITE_EPISODES):
            _timed(record, client.record_episode, kind=("adr", "bug_root_cause", "invariant", "migration")[i % 4],
                   title=f"episode {i} about {entities[i % SUITE_ENTITIES]}",
                   entities=[entities[i % SUITE_ENTITIES], entities[(i + 1) % SUITE_ENTITIES]])
        for i in range(200):
            _timed(traverse, client.query_entity, entity=entities[i % SUITE_ENTITIES], hops=2)
        for _ in range(20):
            report = _timed(verify, client.verify_integrity)
        leaks, checked = _leaks(client, entities, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    return {"record": record, "upsert": upsert, "traverse": traverse, "verify": verify, "superseded": superseded,
            "rows": report.rows_checked, "ok": report.ok, "leaks": leaks, "checked": checked}


def _at_scale(facts: int, rng: random.Random, calls: int) -> dict:
    from memory_daemon.store import Database
    from memory_daemon.store.synthetic import seed_graph

    root = Path(tempfile.mkdtemp(prefix="cortexd-bench-graph-"))
    daemon = DaemonProcess(root, [])
    entities = facts // 10
    try:
        daemon.data_dir.mkdir(parents=True, mode=0o700)
        database = Database(daemon.data_dir / "cortexd.duckdb")
        started = time.perf_counter()
        seed_graph(database, "bench", facts, entities)
        seed_s = time.perf_counter() - started
        database.close()
        daemon.start()
        upsert, traverse, travel = [], [], []
        with daemon.client("bench") as client:
            client.analyze_message(message="warm-up")  # waits for the model load, which would compete for the CPU
            client.query_entity(entity="component_0", hops=2)  # loads the edge index once
            for i in range(calls):
                _timed(upsert, client.upsert_fact, subject=f"component_{rng.randrange(entities)}",
                       predicate="attribute_0", object=f"bench-{i}")
            for _ in range(calls):
                _timed(traverse, client.query_entity, entity=f"component_{rng.randrange(entities)}", hops=2)
            for _ in range(calls):
                _timed(travel, client.time_travel, valid_at="2020-03-15T00:00:00Z",
                       entity=f"component_{rng.randrange(entities)}")
            verify_report = client.verify_integrity()
            sample = [f"component_{rng.randrange(entities)}" for _ in range(50)]
            leaks, checked = _leaks(client, sample, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        return {"facts": facts, "seed_s": seed_s, "upsert": upsert, "traverse": traverse, "travel": travel,
                "verify_ms": verify_report.elapsed_ms, "rows": verify_report.rows_checked, "ok": verify_report.ok,
                "leaks": leaks, "checked": checked}
    finally:
        daemon.stop()
        shutil.rmtree(root, ignore_errors=True)


def bench_graph(quick: bool) -> int:
    rng = random.Random(7)
    root = Path(tempfile.mkdtemp(prefix="cortexd-bench-graph-"))
    daemon = DaemonProcess(root, []).start()
    try:
        suite = _suite(daemon, rng)
    finally:
        daemon.stop()
        shutil.rmtree(root, ignore_errors=True)
    scales = [_at_scale(n, rng, 50 if quick else 200) for n in ((10_000, 100_000) if quick else (10_000, 100_000, 1_000_000))]

    print(f"cortexd bench graph ({'quick' if quick else 'full'}; all calls over gRPC to a real daemon)\n")
    print(f"cortex-mcp suite scale: {SUITE_FACTS} facts ({suite['superseded']} supersessions), "
          f"{SUITE_EPISODES} episodes, {SUITE_ENTITIES} entities\n")
    print("| measure | p50 ms | p95 ms | n | note |")
    print("| --- | ---: | ---: | ---: | --- |")
    print(table_row("record_episode", suite["record"]))
    print(table_row("upsert_fact", suite["upsert"]))
    print(table_row("query_entity, 2-hop traverse", suite["traverse"]))
    print(table_row("verify_integrity", suite["verify"], f"{suite['rows']} rows, ok={suite['ok']}"))
    print(f"\nstale-fact leakage: {suite['leaks']} stale facts served as current over {suite['checked']} entities "
          "(target 0)\n")
    print("| facts | upsert_fact p50 / p95 ms | 2-hop traverse p50 / p95 ms | time_travel one entity p50 / p95 ms "
          "| verify_integrity ms | stale leaks | seed s |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in scales:
        cells = [f"{statistics.median(s[k]):.2f} / {percentile(s[k], 0.95):.2f}" for k in ("upsert", "traverse", "travel")]
        print(f"| {s['facts']:,} | {' | '.join(cells)} | {s['verify_ms']:.0f} ({s['rows']:,} rows, ok={s['ok']}) "
              f"| {s['leaks']} of {s['checked']} entities | {s['seed_s']:.1f} |")
    print("\ntargets: upsert_fact p50 <= 3 ms and 2-hop traverse <= 15 ms at 100k facts; "
          "time_travel for one entity <= 50 ms at 1M facts; stale-fact leakage 0")
    return 0
