"""`cortexd bench retrieval`: search and compile_context latency at scale, import throughput, budget and staleness checks."""

from __future__ import annotations

import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from memory_daemon.bench.common import rss_mb, percentile
from memory_daemon.client.python_client import CortexdClient
from memory_daemon.client.launcher import DaemonProcess, temporary_daemon
from memory_daemon.retrieval.ann_index import (EXPANSION_SEARCH, INDEX_DIR, LARGE_EXPANSION_SEARCH, LARGE_GRAPH,
                                               IndexFiles, expansion_for)

if TYPE_CHECKING:
    from memory_daemon.store import Database

GRAPH_FACTS, GRAPH_ENTITIES = 5_000, 500  # beside the memories: 1,000 current facts, 4,000 superseded versions
QUERIES = ("which host runs service_{n}?", "who owns service_{n}", "service_{n} Redis", "what uses Kafka on host-{h}",
           "team-{t} PostgreSQL services", "note {i}")
# A question about the user's own alone: search's holder factor needs the reading of whose fact each of its best
# current hits states. The memories of even services carry the reading the daemon keeps when a memory is written;
# those of odd services were never written through the daemon, so the first such search reads them.
OWN_QUERY = "which host runs my service_{n}?"


def _timed(samples: list[float], call, **kwargs):
    started = time.perf_counter()
    result = call(**kwargs)
    samples.append((time.perf_counter() - started) * 1000)
    return result


@contextmanager
def _seeded_daemon(prefix: str, seed: Callable[[Database], None], env: dict[str, str] | None = None
                   ) -> Iterator[DaemonProcess]:
    """A daemon started on a fresh temporary data dir whose store `seed` filled first (memories written behind it),
    stopped and removed afterwards."""
    from memory_daemon.store import Database

    root = Path(tempfile.mkdtemp(prefix=prefix))
    daemon = DaemonProcess(root, [], env=env)
    try:
        daemon.data_dir.mkdir(parents=True, mode=0o700)
        database = Database(daemon.data_dir / "cortexd.duckdb")
        seed(database)
        database.close()
        yield daemon.start()
    finally:
        daemon.stop()
        shutil.rmtree(root, ignore_errors=True)


def _seed_scale(database: Database, count: int) -> None:
    from memory_daemon.store.synthetic import seed_graph, seed_holder_readings, seed_memories

    seed_memories(database, "bench", count)
    seed_holder_readings(database, "bench", *_reading_of_the_seeded(database))
    seed_graph(database, "bench", GRAPH_FACTS, GRAPH_ENTITIES)


def _scale(count: int, calls: int, rng: random.Random) -> dict:
    # Without the start-up sweep, which would read the unread half in the background while the phases are timed.
    without_sweep = {**os.environ, "CORTEXD_HOLDER_READINGS_SWEEP": "false"}
    with _seeded_daemon("cortexd-bench-retrieval-", lambda database: _seed_scale(database, count),
                        without_sweep) as daemon:
        search, context, first = [], [], []
        # Loading a million memories' indexes on the first search takes minutes on a busy machine.
        with CortexdClient(daemon.address, "warm-up", timeout=900) as other:
            other.analyze_message(message="warm-up")  # waits for the model load, in a namespace of its own
        with CortexdClient(daemon.address, "bench", timeout=900) as client:
            _timed(first, client.search_memory, query="warm-up: loads the in-memory indexes", limit=10)
            mode, graph_seconds = _wait_for_graph(client)
            for i in range(calls):
                query = rng.choice(QUERIES).format(n=rng.randrange(997), h=rng.randrange(53), t=rng.randrange(31),
                                                   i=rng.randrange(count))
                _timed(search, client.search_memory, query=query, limit=10)
            own, own_read = [], []  # over unread hits (odd services), and over hits read when written (even ones)
            for i in range(max(calls // 3, 10)):
                _timed(own, client.search_memory, query=OWN_QUERY.format(n=2 * rng.randrange(498) + 1), limit=10)
                _timed(own_read, client.search_memory, query=OWN_QUERY.format(n=2 * rng.randrange(499)), limit=10)
            kinds, kinds_first = [], []
            # The first search over every kind loads (and embeds) the namespace's facts, episodes and decisions.
            _timed(kinds_first, client.search_memory, query="warm-up: loads the item index", limit=10, kinds=["all"])
            for i in range(max(calls // 3, 10)):
                _timed(kinds, client.search_memory, query=f"component_{rng.randrange(GRAPH_ENTITIES)} attribute_0",
                       limit=10, kinds=["all"])
            for i in range(max(calls // 4, 10)):
                _timed(context, client.compile_context, task=f"change how service_{rng.randrange(997)} uses Redis")
        rss = rss_mb(daemon.process.pid)
        daemon.stop()  # saves the graph if anything changed since it was built
        disk_mb = IndexFiles.of(daemon.data_dir / INDEX_DIR, "bench").size_bytes() / 2**20
        started = time.perf_counter()
        daemon.start()
        with CortexdClient(daemon.address, "bench", timeout=900) as client:
            client.search_memory(query="which host runs service_7?", limit=10)
        restart_ms = (time.perf_counter() - started) * 1000
        restart_rss = _settled_rss(daemon.process.pid)  # once the row cache has been filled after that search
        import_rate = _import_into(daemon, count, rng)
        daemon.stop()
        recall = _graph_recall(daemon.data_dir, rng) if mode == "graph" else None
        return {"count": count, "search": search, "own": own, "own_read": own_read, "context": context,
                "load_ms": first[0], "rss": rss,
                "recall": recall, "kinds": kinds, "kinds_load_ms": kinds_first[0], "mode": mode, "graph_s": graph_seconds,
                "disk_mb": disk_mb, "restart_ms": restart_ms, "restart_rss": restart_rss, "import_rate": import_rate}


SWEPT, SWEPT_QUICK = 2_000, 300  # memories the start-up sweep is timed over
IMPORT_AT_SCALE, IMPORT_CALLS = 5_000, 5  # records imported into the filled namespace, in this many calls


def _sweep_rate(count: int) -> float:
    """The start-up sweep of a fresh daemon over `count` memories seeded behind it, as in a store written before
    readings were kept: the memories a second it read, from the first status after the models loaded (what was
    pending then) until holder_readings_pending came down to 0."""
    from memory_daemon.store.synthetic import seed_memories

    with (_seeded_daemon("cortexd-bench-sweep-", lambda database: seed_memories(database, "sweep", count)) as daemon,
          CortexdClient(daemon.address, "sweep", timeout=900) as client):
        client.analyze_message(message="warm-up")  # waits for the model load
        started = time.perf_counter()
        pending = client.get_status().holder_readings_pending
        while client.get_status().holder_readings_pending:
            time.sleep(0.2)
        return pending / (time.perf_counter() - started)


def _reading_of_the_seeded(database) -> tuple[str, bool, tuple[str, ...], bool | None]:
    """The daemon's reader (the parse and the holder model, loaded here) over seeded memories of every technology,
    team and host: the reading they share, and the reader's tag."""
    from preprocessing.entities import EntityExtractor
    from preprocessing.holder_model import HolderModel
    from preprocessing.holders import HolderReader, readings_tag

    texts = [text for (text,) in database.cursor().execute(
        "SELECT content FROM memories WHERE source = 'synthetic' ORDER BY id LIMIT 64").fetchall()]
    model = HolderModel.load()
    read = {(s.holders.first_person, tuple(sorted(s.holders.others)), s.other)
            for s in HolderReader(EntityExtractor.load().parsed, model.others).statements(texts)}
    assert len(read) == 1, f"the seeded memories read differently: {read}"
    return (readings_tag(model.version), *read.pop())


def _import_into(daemon: DaemonProcess, count: int, rng: random.Random) -> float:
    """items/s of a bulk import through ImportMemories into the namespace already holding `count` memories (each
    call returns once its records are stored and searchable; their update checks run in the background after)."""
    records = [{"id": f"late{i}", "text": f"Session {i // 20} turn {i}: service_{rng.randrange(997)} moved its "
                                          f"{rng.choice(['Redis', 'Kafka', 'PostgreSQL'])} cache to host-{i % 53}",
                "timestamp": "2026-06-01T10:00:00Z", "session": f"late{i // 20}"} for i in range(IMPORT_AT_SCALE)]
    chunk = IMPORT_AT_SCALE // IMPORT_CALLS
    with CortexdClient(daemon.address, "bench", timeout=900) as client:
        started = time.perf_counter()
        imported = sum(client.import_records(records[start:start + chunk]).imported
                       for start in range(0, IMPORT_AT_SCALE, chunk))
    assert imported == IMPORT_AT_SCALE, f"imported {imported} of {IMPORT_AT_SCALE} into a store of {count:,}"
    return imported / (time.perf_counter() - started)


def _settled_rss(pid: int, quiet_seconds: int = 5, timeout: float = 300.0) -> float:
    """The process's RSS once it has stopped growing: the same to within 1% over `quiet_seconds` one-second
    samples (a restarted daemon reads a large namespace's rows into its row cache after the first search)."""
    samples = [rss_mb(pid)]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        time.sleep(1.0)
        samples.append(rss_mb(pid))
        recent = samples[-quiet_seconds:]
        if len(recent) == quiet_seconds and max(recent) - min(recent) <= 0.01 * max(recent):
            break
    return samples[-1]


def _wait_for_graph(client, timeout: float = 7200.0) -> tuple[str, float]:
    """The namespace's dense search mode once any background graph build is done, and how long the wait was."""
    started = time.perf_counter()
    while True:
        modes = {s.namespace: s.mode for s in client.get_status().indexes}
        mode = modes.get("bench", "exact")
        if mode != "building" or time.perf_counter() - started > timeout:
            return mode, time.perf_counter() - started
        time.sleep(0.5)


IMPORT_CHUNKS = 10  # the import is timed per tenth, so a rate that falls as the store grows shows
UPDATE_CHECK_WAIT_SECONDS = 7200.0  # how long the bench waits for the background update checks of its import


def _import_and_budget(quick: bool, rng: random.Random) -> dict:
    """A bulk import of look-alike records (the worst case for update detection: every record has near neighbours),
    timed per tenth; then compile_context's budget and staleness checks on the filled store."""
    total = 10_000 if quick else 100_000
    records = [{"id": f"r{i}", "text": f"Session {i // 20} turn {i}: we talked about service_{i % 97} and its "
                                      f"{rng.choice(['Redis', 'Kafka', 'PostgreSQL'])} cache on host-{i % 11}",
                "timestamp": f"2025-0{1 + i % 9}-1{i % 10}T10:00:00Z", "session": f"s{i // 20}"}
               for i in range(total)]
    chunk = total // IMPORT_CHUNKS
    with temporary_daemon() as daemon, daemon.client("import") as client:
        client.analyze_message(message="warm-up")
        imported, rates = 0, []
        for start in range(0, total, chunk):
            started = time.perf_counter()
            imported += client.import_records(records[start:start + chunk]).imported
            rates.append(chunk / (time.perf_counter() - started))
        # The statements' update checks run in the background once the import is quiet; timed until all are done.
        started = time.perf_counter()
        unchecked = client.wait_for_update_checks(UPDATE_CHECK_WAIT_SECONDS)
        checks_seconds = time.perf_counter() - started
        over, stale, checked = 0, 0, 0
        old = client.save_memory(content="The billing cache TTL is 10 minutes").memory
        client.save_memory(content="The billing cache TTL is 2 minutes now", supersedes=old.id)
        client.upsert_fact(subject="billing", predicate="cache_ttl", object="10 minutes", create_entities=True,
                           valid_from="2025-01-01T00:00:00Z")
        client.upsert_fact(subject="billing", predicate="cache_ttl", object="2 minutes", valid_from="2025-06-01T00:00:00Z")
        for _ in range(200 if quick else 1000):
            budget = rng.randrange(50, 2000)
            reply_context = client.compile_context(task=rng.choice(["billing cache TTL", "service_12 Redis cache",
                                                                    "what runs on host-3?"]), max_tokens=budget)
            checked += 1
            over += reply_context.tokens_used > budget
            stale += "10 minutes" in reply_context.markdown or old.id in reply_context.markdown
    return {"imported": imported, "rates": rates, "over": over, "stale": stale, "checked": checked,
            "checks_seconds": checks_seconds, "unchecked": unchecked}


RECALL_EXPANSIONS = tuple(sorted({128, 256, 384, 512, EXPANSION_SEARCH, LARGE_EXPANSION_SEARCH}))  # measured


def _graph_recall(data_dir: Path, rng: random.Random, queries: int = 100) -> dict[int, tuple[float, float]]:
    """recall@10 of the daemon's saved HNSW graph against exact search over the stored embeddings, for queries
    near stored memories, and the graph search's p50 ms, at each of RECALL_EXPANSIONS (the daemon searches with
    expansion_for() the graph's size)."""
    import numpy as np

    from memory_daemon.retrieval.ann_index import AnnIndex
    from memory_daemon.store import Database, MemoryRepository

    database = Database(data_dir / "cortexd.duckdb")
    try:
        ids, _hashes, matrix, _superseded = MemoryRepository(database).embeddings("bench")
    finally:
        database.close()
    graph, saved_ids, _saved_hashes = AnnIndex.load(IndexFiles.of(data_dir / INDEX_DIR, "bench"), "bench")
    row_of = {memory_id: i for i, memory_id in enumerate(ids)}
    noise = np.random.default_rng(rng.randrange(1 << 30))
    asked = []
    for _ in range(queries):
        query = matrix[noise.integers(len(matrix))] + 0.05 * noise.standard_normal(matrix.shape[1]).astype(np.float32)
        query /= np.linalg.norm(query)
        asked.append((query, set(np.argpartition(-(matrix @ query), 9)[:10].tolist())))
    measured = {}
    for expansion in RECALL_EXPANSIONS:
        graph.set_expansion(expansion)
        found, took = 0, []
        for query, exact in asked:
            positions, _cosines = _timed(took, graph.search, vector=query, count=10)
            found += len(exact & {row_of.get(saved_ids[p], -1) for p in positions})
        measured[expansion] = (found / (10 * queries), statistics.median(took))
    return measured


def bench_retrieval(quick: bool, sizes: Sequence[int] = ()) -> int:
    """The scale rows, then the import and budget run; given `sizes`, only the scale rows at those store sizes."""
    if any(n < 1 for n in sizes):
        raise SystemExit(f"--memories takes a store size of at least 1, not {min(sizes)}")
    rng = random.Random(11)
    scales = [_scale(n, 100 if quick else 300, rng)
              for n in (sizes or ((10_000, 100_000) if quick else (10_000, 100_000, 1_000_000)))]
    imports = None if sizes else _import_and_budget(quick, rng)
    swept = SWEPT_QUICK if quick else SWEPT
    sweep_rate = _sweep_rate(swept)
    print(f"cortexd bench retrieval ({'quick' if quick else 'full'}; search over gRPC to a real daemon; "
          "synthetic memories with clustered synthetic embeddings for the scale rows)\n")
    print("| memories | search p50 / p95 ms | compile_context p50 / p95 ms | first search, fresh store ms "
          "| daemon RSS MB | dense search | graph built in s | graph recall@10 vs exact | graph on disk MB "
          "| restart to first search ms | RSS after restart, settled MB | import into it, items/s |")
    print("| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in scales:
        recall = "-" if s["recall"] is None else f"{s['recall'][expansion_for(s['count'])][0]:.3f}"
        built = f"{s['graph_s']:.0f}" if s["mode"] == "graph" else "-"
        print(f"| {s['count']:,} | {statistics.median(s['search']):.1f} / {percentile(s['search'], 0.95):.1f} "
              f"| {statistics.median(s['context']):.1f} / {percentile(s['context'], 0.95):.1f} | {s['load_ms']:.0f} "
              f"| {s['rss']:.0f} | {s['mode']} | {built} | {recall} | {s['disk_mb']:.0f} | {s['restart_ms']:.0f} "
              f"| {s['restart_rss']:.0f} | {s['import_rate']:.0f} |")
    graphs = [s for s in scales if s["recall"] is not None]
    if graphs:
        print(f"\ngraph recall@10 vs exact and graph search p50 (in-process, no gRPC) by candidates kept per search "
              f"(the daemon keeps {EXPANSION_SEARCH}, and {LARGE_EXPANSION_SEARCH} in a graph of {LARGE_GRAPH:,} "
              "or more):")
        for s in graphs:
            print(f"- {s['count']:,} memories: " + "; ".join(f"{expansion}: {recall:.3f}, {ms:.2f} ms"
                                                           for expansion, (recall, ms) in s["recall"].items()))
    print(f"\nsearch for a question about the user's own (\"{OWN_QUERY}\": whose fact each of the best five current "
          "hits states, by the parse and the holder model), p50 / p95 ms, over hits read when they were written (as "
          "the daemon reads every memory saved or imported, in the background) and over hits not read yet (memories "
          "seeded behind the daemon, or written before it kept readings), which the search reads:")
    for s in scales:
        print(f"- {s['count']:,} memories: read when written {statistics.median(s['own_read']):.1f} / "
              f"{percentile(s['own_read'], 0.95):.1f} ms; unread {statistics.median(s['own']):.1f} / "
              f"{percentile(s['own'], 0.95):.1f} ms")
    print(f"\nsearch over every kind (kinds=all: the memories plus {GRAPH_FACTS:,} facts, {GRAPH_FACTS // 5:,} of them "
          "current), p50 / p95 ms, and the first such search, which loads and embeds the item index:")
    for s in scales:
        print(f"- {s['count']:,} memories: {statistics.median(s['kinds']):.1f} / {percentile(s['kinds'], 0.95):.1f} ms; "
              f"first {s['kinds_load_ms']:.0f} ms")
    print(f"\nstart-up sweep of whose fact each memory states, in a fresh daemon over {swept:,} memories written "
          f"before it kept readings (each names a team, so each is parsed too): {sweep_rate:.0f} memories/s, at "
          "background priority")
    if imports is not None:
        _print_import_and_budget(imports)
    print("\ntargets: search p50 <= 20 ms at 100k and <= 60 ms at 1M; compile_context p50 <= 30 ms at 100k")
    return 0


def _print_import_and_budget(imports: dict) -> None:
    rates = imports["rates"]
    overall = len(rates) / sum(1 / r for r in rates)  # the whole run's items/s: equal chunks, so a harmonic mean
    print(f"\nbulk import through ImportMemories, {imports['imported']:,} look-alike records with embeddings, stored "
          f"and found by words when each call answers, in {len(rates)} chunks: {overall:.0f} items/s over the whole run "
          f"(target >= 500); first tenth {rates[0]:.0f}, last tenth {rates[-1]:.0f} items/s, last/first "
          f"{rates[-1] / rates[0]:.2f} (target >= 0.80)")
    checks = imports["checks_seconds"]
    done = "all done" if not imports["unchecked"] else f"{imports['unchecked']:,} still queued"
    print(f"background update checks of those statements (the relation model against each one's nearest memories), "
          f"after the import: {checks:.0f} s, {imports['imported'] / checks if checks else 0:.0f} statements/s; {done}")
    print(f"budget compliance: {imports['checked'] - imports['over']}/{imports['checked']} compile_context calls within "
          f"random budgets 50-2000 (target 100%)")
    print(f"stale leakage: {imports['stale']} of {imports['checked']} contexts carried a superseded fact or memory "
          "(target 0)")
