"""Measures the search-index libraries issue 19 names (usearch, hnswlib, faiss, bm25s) on this machine, side by side.

Usage (a scratch venv, not the project's: these are candidates, not dependencies yet):
    python3.11 -m venv /tmp/libvenv
    /tmp/libvenv/bin/pip install "usearch==2.26.*" "hnswlib==0.8.*" "faiss-cpu==1.15.*" "bm25s==0.3.*" numpy
    /tmp/libvenv/bin/python docs/measurements/engine_choice.py --rows 100000

Vectors are 384-d unit vectors drawn from 2,000 topics with 20 subtopics each (clustered at two scales, like sentence
embeddings, which random Gaussian vectors are not); queries are held-out draws from the same mixture. Recall@10 is against exact search.
Texts for BM25 are 12-word draws from a 20,000-word Zipf vocabulary.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

DIMS = 384
QUERIES = 500
K = 10


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def clustered(rows: int, seed: int) -> np.ndarray:
    """Topics, subtopics within them, then each point: neighbours form a gradient, as sentence embeddings do."""
    topics = np.random.default_rng(0).standard_normal((2000, DIMS)).astype(np.float32)
    subtopics = np.random.default_rng(1).standard_normal((2000, 20, DIMS)).astype(np.float32)
    rng = np.random.default_rng(seed)
    topic, sub = rng.integers(0, 2000, rows), rng.integers(0, 20, rows)
    vectors = topics[topic] + 0.7 * subtopics[topic, sub] + 0.35 * rng.standard_normal((rows, DIMS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def exact_top(data: np.ndarray, queries: np.ndarray) -> np.ndarray:
    found = []
    for start in range(0, len(queries), 50):
        scores = queries[start:start + 50] @ data.T
        found.append(np.argpartition(-scores, K, axis=1)[:, :K])
    return np.vstack(found)


def recall(found: list[set], truth: np.ndarray) -> float:
    return float(np.mean([len(f & set(t)) / K for f, t in zip(found, truth)]))


def timed_queries(search, queries: np.ndarray) -> tuple[list[set], float, float]:
    found, times = [], []
    for query in queries:
        t0 = time.perf_counter()
        ids = search(query)
        times.append((time.perf_counter() - t0) * 1000)
        found.append(set(int(i) for i in ids))
    times.sort()
    return found, statistics.median(times), times[int(0.95 * len(times))]


def row(name: str, **figures) -> None:
    print(f"| {name} | " + " | ".join(str(v) for v in figures.values()) + " |")


def bench_usearch(data, queries, truth, work: Path, dtype: str) -> None:
    from usearch.index import Index
    before = rss_mb()
    t0 = time.perf_counter()
    index = Index(ndim=DIMS, metric="cos", dtype=dtype, connectivity=16, expansion_add=128, expansion_search=64)
    index.add(np.arange(len(data)), data, threads=2)
    build = time.perf_counter() - t0
    held = rss_mb() - before
    found, p50, p95 = timed_queries(lambda q: index.search(q, K, threads=1).keys, queries)
    path = work / f"usearch-{dtype}.usearch"
    index.save(str(path))
    index = None
    gc.collect()
    t0 = time.perf_counter(); loaded = Index.restore(str(path)); load = time.perf_counter() - t0
    t0 = time.perf_counter(); viewed = Index.restore(str(path), view=True); view = time.perf_counter() - t0
    viewed.search(queries[0], K)
    t0 = time.perf_counter()
    loaded.add(np.arange(len(data), len(data) + 500), clustered(500, 99), threads=1)
    add500 = (time.perf_counter() - t0) * 1000
    row(f"usearch HNSW {dtype}", build=f"{build:.1f} s", rss=f"{held:.0f} MB", disk=f"{path.stat().st_size / 2**20:.0f} MB",
        p50=f"{p50:.2f}", p95=f"{p95:.2f}", recall=f"{recall(found, truth):.3f}", load=f"{load:.2f} s",
        view=f"{view * 1000:.0f} ms", add=f"{add500:.0f} ms")


def bench_hnswlib(data, queries, truth, work: Path) -> None:
    import hnswlib
    before = rss_mb()
    t0 = time.perf_counter()
    index = hnswlib.Index(space="cosine", dim=DIMS)
    index.init_index(max_elements=len(data) + 1000, ef_construction=128, M=16)
    index.set_num_threads(2)
    index.add_items(data, np.arange(len(data)))
    build = time.perf_counter() - t0
    held = rss_mb() - before
    index.set_ef(64)
    index.set_num_threads(1)
    found, p50, p95 = timed_queries(lambda q: index.knn_query(q, k=K)[0][0], queries)
    path = work / "hnswlib.bin"
    index.save_index(str(path))
    t0 = time.perf_counter()
    loaded = hnswlib.Index(space="cosine", dim=DIMS); loaded.load_index(str(path), max_elements=len(data) + 1000)
    load = time.perf_counter() - t0
    t0 = time.perf_counter(); loaded.add_items(clustered(500, 99), np.arange(len(data), len(data) + 500))
    add500 = (time.perf_counter() - t0) * 1000
    row("hnswlib HNSW f32", build=f"{build:.1f} s", rss=f"{held:.0f} MB", disk=f"{path.stat().st_size / 2**20:.0f} MB",
        p50=f"{p50:.2f}", p95=f"{p95:.2f}", recall=f"{recall(found, truth):.3f}", load=f"{load:.2f} s", view="–",
        add=f"{add500:.0f} ms")


def bench_faiss(data, queries, truth, work: Path) -> None:
    import faiss
    faiss.omp_set_num_threads(2)
    before = rss_mb()
    t0 = time.perf_counter()
    index = faiss.IndexHNSWFlat(DIMS, 16, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = 128
    index.add(data)
    build = time.perf_counter() - t0
    held = rss_mb() - before
    index.hnsw.efSearch = 64
    faiss.omp_set_num_threads(1)
    found, p50, p95 = timed_queries(lambda q: index.search(q[None, :], K)[1][0], queries)
    path = work / "faiss.index"
    faiss.write_index(index, str(path))
    t0 = time.perf_counter(); faiss.read_index(str(path)); load = time.perf_counter() - t0
    t0 = time.perf_counter(); faiss.read_index(str(path), faiss.IO_FLAG_MMAP); view = time.perf_counter() - t0
    row("faiss HNSWFlat f32", build=f"{build:.1f} s", rss=f"{held:.0f} MB", disk=f"{path.stat().st_size / 2**20:.0f} MB",
        p50=f"{p50:.2f}", p95=f"{p95:.2f}", recall=f"{recall(found, truth):.3f}", load=f"{load:.2f} s",
        view=f"{view * 1000:.0f} ms", add="–")


def bench_exact(data, queries, truth) -> None:
    found, p50, p95 = timed_queries(lambda q: np.argpartition(-(data @ q), K)[:K], queries)
    row("exact numpy f32 (today's in-RAM matrix)", build="–", rss=f"{data.nbytes / 2**20:.0f} MB", disk="–",
        p50=f"{p50:.2f}", p95=f"{p95:.2f}", recall=f"{recall(found, truth):.3f}", load="–", view="–", add="–")


def bench_bm25s(rows: int, work: Path) -> None:
    import bm25s
    rng = np.random.default_rng(3)
    vocabulary = [f"w{i}" for i in range(20000)]
    weights = 1 / np.arange(1, len(vocabulary) + 1) ** 1.05
    weights /= weights.sum()
    docs = [[vocabulary[j] for j in rng.choice(len(vocabulary), 12, p=weights)] for _ in range(rows)]
    queries = [[vocabulary[j] for j in rng.choice(len(vocabulary), 5, p=weights)] for _ in range(QUERIES)]
    before = rss_mb()
    t0 = time.perf_counter()
    retriever = bm25s.BM25(k1=1.2, b=0.75)
    retriever.index(docs, show_progress=False)  # lists of tokens: our own tokenizer stays
    build = time.perf_counter() - t0
    held = rss_mb() - before
    times = []
    for query in queries:
        t0 = time.perf_counter()
        retriever.retrieve([query], k=K, show_progress=False, n_threads=1)
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    path = work / "bm25s"
    retriever.save(str(path))
    t0 = time.perf_counter(); bm25s.BM25.load(str(path)); load = time.perf_counter() - t0
    t0 = time.perf_counter(); bm25s.BM25.load(str(path), mmap=True); view = time.perf_counter() - t0
    disk = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20
    row("bm25s (token lists)", build=f"{build:.1f} s", rss=f"{held:.0f} MB", disk=f"{disk:.0f} MB",
        p50=f"{statistics.median(times):.2f}", p95=f"{times[int(0.95 * len(times))]:.2f}", recall="exact",
        load=f"{load:.2f} s", view=f"{view * 1000:.0f} ms", add="rebuild")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--only", default="exact,usearch-f16,usearch-i8,hnswlib,faiss,bm25s")
    args = parser.parse_args()
    only = set(args.only.split(","))
    data, queries = clustered(args.rows, 1), clustered(QUERIES, 2)
    truth = exact_top(data, queries)
    print(f"{args.rows:,} rows, {QUERIES} queries, k={K}, {os.cpu_count()} cores; build on 2 threads, queries on 1\n")
    print("| engine | build | RSS held | on disk | query p50 ms | p95 ms | recall@10 | load | mmap view | add 500 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if "exact" in only:
            bench_exact(data, queries, truth)
        for dtype in ("f16", "i8"):
            if f"usearch-{dtype}" in only:
                bench_usearch(data, queries, truth, work, dtype)
        if "hnswlib" in only:
            bench_hnswlib(data, queries, truth, work)
        if "faiss" in only:
            bench_faiss(data, queries, truth, work)
        if "bm25s" in only:
            bench_bm25s(args.rows, work)


if __name__ == "__main__":
    main()
