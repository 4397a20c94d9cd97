"""A namespace past `vector_graph_from` and `lexical_save_from` through a real daemon: its graph and lexical index are
saved in the data dir, a restart loads them and answers the same, a SIGKILL loses nothing acknowledged, damaged
files are rebuilt, and `cortexd reindex`."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import grpc
import pytest

from conftest import CORTEXD, Daemon
from memory_daemon.client.python_client import as_dict

GRAPH_FROM = 60
TOPICS = ["the deploy pipeline", "our Postgres replica", "the billing export", "Kafka consumer lag",
          "the nightly backup job", "the staging cluster", "the search service", "the mobile release train"]
FACTS = ["runs on", "is owned by", "alerts in", "was moved to", "is documented in", "pages", "depends on", "ships from"]


def record(i: int) -> dict:
    """A distinct turn each: its own words, so a search for its text finds it first."""
    topic, fact = TOPICS[i % 8], FACTS[i // 8 % 8]
    return {"id": f"t{i}", "text": f"Turn {i}: {topic} {fact} host-{i * 37 % 1000} with code word w{i}x",
            "speaker": "user", "session": f"s{i // 20}"}


def configured(workdir, save_seconds: float = 3600.0) -> dict:
    config = workdir / "config.toml"
    config.write_text(f"[retrieval]\nvector_graph_from = {GRAPH_FROM}\nlexical_save_from = {GRAPH_FROM}\n"
                      f"vector_save_seconds = {save_seconds}\n")
    return {**os.environ, "CORTEXD_CONFIG": str(config)}


def index_mode(daemon, namespace: str = "big") -> str:
    with daemon.client(namespace) as client:
        states = {s["namespace"]: s for s in as_dict(client.get_status()).get("indexes", [])}
    return states.get(namespace, {}).get("mode", "")


def wait_for_mode(daemon, mode: str, namespace: str = "big") -> None:
    deadline = time.monotonic() + 120  # the graph is built in the background; a bound, not a timing check
    while index_mode(daemon, namespace) != mode:
        assert time.monotonic() < deadline, f"never reached {mode}: {index_mode(daemon, namespace)}"
        time.sleep(0.1)


def first_hits(daemon, probes) -> list[str]:
    with daemon.client("big") as client:
        return [client.search_memory(query=record(i)["text"], limit=3, signals=["dense"]).hits[0].memory.external_id
                for i in probes]


def graph_files(daemon) -> list:
    return sorted((daemon.data_dir / "indexes").glob("*/vectors.*"))


def lexical_files(daemon) -> list:
    return sorted((daemon.data_dir / "indexes").glob("*/lexical.*"))


def found_among(daemon, probes, signal: str) -> dict[int, bool]:
    """Whether each probe's memory is among the first five hits of a search for its text by one signal, history
    included: found, whatever the relation model made of the turns (one may have been read as updating another)."""
    with daemon.client("big") as client:
        return {i: f"t{i}" in [hit.memory.external_id for hit in client.search_memory(
            query=record(i)["text"], limit=5, signals=[signal], include_history=True).hits] for i in probes}


def word_hits(daemon, probes) -> list[str]:
    """The first hit of a lexical-only search for each probe's text."""
    with daemon.client("big") as client:
        return [client.search_memory(query=record(i)["text"], limit=3, signals=["lexical"]).hits[0].memory.external_id
                for i in probes]


def test_a_restart_answers_from_the_saved_graph_and_a_damaged_one_is_rebuilt(workdir):
    env = configured(workdir)
    daemon = Daemon(workdir, env=env).start()
    probes = [0, 7, 33, 64, 99]
    try:
        with daemon.client("big") as client:
            assert client.import_records([record(i) for i in range(100)]).imported == 100
        wait_for_mode(daemon, "graph")  # built in the background, then saved
        before = first_hits(daemon, probes)
        assert before == [f"t{i}" for i in probes]
        words_before = word_hits(daemon, probes)
        assert found_among(daemon, probes, "lexical") == {i: True for i in probes}
    finally:
        daemon.stop()
    assert [p.name for p in graph_files(daemon)] == ["vectors.json", "vectors.usearch"]
    assert [p.name for p in lexical_files(daemon)] == ["lexical.json", "lexical.npz"]  # saved at stop

    daemon = Daemon(workdir, env=env).start()
    try:
        assert first_hits(daemon, probes) == before
        assert word_hits(daemon, probes) == words_before
        assert index_mode(daemon) == "graph"  # loaded, not rebuilt
        assert "rebuild" not in daemon.log()
    finally:
        daemon.stop()

    for saved in (next(p for p in graph_files(daemon) if p.suffix == ".usearch"),
                  next(p for p in lexical_files(daemon) if p.suffix == ".npz")):
        damaged = bytearray(saved.read_bytes())
        damaged[len(damaged) // 2] ^= 0xFF
        saved.write_bytes(bytes(damaged))
    daemon = Daemon(workdir, env=env).start()
    try:
        assert first_hits(daemon, probes) == before  # exact search while the graph is rebuilt
        assert word_hits(daemon, probes) == words_before  # the lexical index rebuilt from the store
        wait_for_mode(daemon, "graph")
        assert first_hits(daemon, probes) == before
        assert "vector_index_rebuild" in daemon.log() and "lexical_index_rebuild" in daemon.log()
    finally:
        daemon.stop()


def test_memories_acknowledged_before_a_sigkill_are_found_after_the_restart(workdir):
    env = configured(workdir)  # no periodic save before the kill: the saved indexes are behind the store
    daemon = Daemon(workdir, env=env).start()
    try:
        with daemon.client("big") as client:
            assert client.import_records([record(i) for i in range(100)]).imported == 100
        wait_for_mode(daemon, "graph")
    finally:
        daemon.stop()  # both indexes saved
    daemon = Daemon(workdir, env=env).start()
    try:
        with daemon.client("big") as client:
            client.search_memory(query="loads both saved indexes", limit=1)
            hits = client.search_memory(query=record(7)["text"], limit=5, signals=["lexical"]).hits
            (seventh,) = [hit.memory.id for hit in hits if hit.memory.external_id == "t7"]
            assert len(client.forget_memory(ids=[seventh]).memories) == 1
            for start in range(100, 120, 10):  # each call acknowledged on its own, after the save
                assert client.import_records([record(i) for i in range(start, start + 10)]).imported == 10
            assert client.save_memory(content="The on-call handbook lives in the ops wiki under /oncall").memory.id
    finally:
        daemon.process.send_signal(signal.SIGKILL)
        daemon.process.wait(timeout=30)

    daemon = Daemon(workdir, env=env).start()
    try:
        probes = [3, 99, 100, 115, 119]
        assert found_among(daemon, probes, "dense") == {i: True for i in probes}
        assert found_among(daemon, probes, "lexical") == {i: True for i in probes}
        assert index_mode(daemon) == "graph"  # caught up from the store, not rebuilt
        with daemon.client("big") as client:
            found = client.search_memory(query="where is the on-call handbook?", limit=3).hits
            assert any("on-call handbook" in hit.memory.content for hit in found)
        assert found_among(daemon, [7], "lexical") == {7: False}  # forgotten before the kill, still gone
        assert "rebuild" not in daemon.log()
    finally:
        daemon.stop()


def test_reindex_rebuilds_the_graph_and_a_small_namespace_stays_exact(workdir):
    env = configured(workdir)
    daemon = Daemon(workdir, env=env).start()
    try:
        with daemon.client("big") as client:
            assert client.import_records([record(i) for i in range(90)]).imported == 90
        with daemon.client("small") as client:
            assert client.import_records([record(i) for i in range(20)]).imported == 20
        wait_for_mode(daemon, "graph")
        assert index_mode(daemon, "small") == "exact"
        before = first_hits(daemon, [1, 45, 89])
        done = subprocess.run([*CORTEXD, "reindex", "--daemon", daemon.address, "--namespace", "big"],
                              capture_output=True, text=True, timeout=60, env=env)
        assert done.returncode == 0, done.stderr
        assert "namespace big: indexes rebuilt from the store" in done.stdout
        wait_for_mode(daemon, "graph")
        assert first_hits(daemon, [1, 45, 89]) == before
        status = subprocess.run([*CORTEXD, "status", "--daemon", daemon.address], capture_output=True, text=True,
                                timeout=60, env=env)
        assert "namespace big: dense search graph over 90 rows" in status.stdout
        assert "namespace small: dense search exact over 20 rows" in status.stdout
        with daemon.client("big") as client, pytest.raises(grpc.RpcError) as raised:
            client.rebuild_indexes(target_namespace="no such/namespace!")
        assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert raised.value.details().startswith("target_namespace: namespace 'no such/namespace!' is invalid")
    finally:
        daemon.stop()
    assert len(graph_files(daemon)) == 2  # the big namespace's graph and manifest; nothing for the small one
