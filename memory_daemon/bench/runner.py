"""`cortexd bench SUITE`: picks the suite; each lives in its own module and imports only `bench.common`."""

from __future__ import annotations


def run_bench(suite: str, quick: bool = False, beside_worst_case: bool = False, sizes: tuple[int, ...] = ()) -> int:
    if suite == "transport":
        from memory_daemon.bench.transport import bench_transport

        return bench_transport(quick)
    if suite == "activation":
        from memory_daemon.bench.activation import bench_activation

        return bench_activation(quick)
    if suite == "retrieval":
        from memory_daemon.bench.retrieval import bench_retrieval

        return bench_retrieval(quick, sizes)
    if suite == "graph":
        from memory_daemon.bench.graph import bench_graph

        return bench_graph(quick)
    if suite == "hooks":
        from memory_daemon.bench.hooks import run

        return run(quick, beside_worst_case)
    if suite == "proxy":
        from memory_daemon.bench.proxy import bench_proxy

        return bench_proxy(quick)
    if suite == "load":
        from memory_daemon.bench.load import bench_load

        return bench_load(quick)
    raise SystemExit(f"unknown bench suite {suite!r}")
