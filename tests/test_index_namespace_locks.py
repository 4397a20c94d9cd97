"""Loading one namespace's indexes holds only that namespace: the others keep answering, and a write that races the
load is indexed once."""

from __future__ import annotations

import threading

import numpy as np

from memory_daemon.retrieval.lexical import IndexedMemory, LexicalIndex
from memory_daemon.retrieval.vectors import VectorIndex

WAIT = 30  # seconds: a generous bound that only a deadlock reaches, not a timing assertion


def unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).standard_normal(384).astype(np.float32)
    return vector / np.linalg.norm(vector)


class GatedLoad:
    """A store read that, for the namespace "big", waits until the test opens the gate."""

    def __init__(self, rows: dict[str, list]) -> None:
        self.rows = rows
        self.started = threading.Event()
        self.gate = threading.Event()

    def __call__(self, namespace: str):
        if namespace == "big":
            self.started.set()
            assert self.gate.wait(WAIT), "the test never opened the gate"
        return self.rows[namespace]


def in_thread(target) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def test_a_slow_lexical_load_does_not_hold_up_another_namespace_and_a_racing_write_counts_once():
    big = [IndexedMemory("b1", "the billing cache TTL is ten minutes", ())]
    small = [IndexedMemory("s1", "the search cluster reindexes nightly", ())]
    load = GatedLoad({"big": big, "small": small})
    index = LexicalIndex(load)
    loading = in_thread(lambda: index.search(["big"], "billing cache", 5))
    assert load.started.wait(WAIT)
    assert [m for m, _ in index.search(["small"], "search cluster", 5)] == ["s1"]  # answered while "big" loads
    # A write to "big" during its load waits for the load, and a row the load already read is not added twice.
    writer = in_thread(lambda: index.add("big", [big[0], IndexedMemory("b2", "billing cache warmed at boot", ())]))
    load.gate.set()
    loading.join(WAIT)
    writer.join(WAIT)
    assert not loading.is_alive() and not writer.is_alive()
    assert sorted(m for m, _ in index.search(["big"], "billing cache", 5)) == ["b1", "b2"]


def test_a_slow_vector_load_does_not_hold_up_another_namespace_and_a_racing_write_counts_once():
    vectors = {"b1": unit(1), "b2": unit(2), "s1": unit(3)}
    rows = {"big": (["b1"], np.zeros(1, dtype=np.uint64), vectors["b1"][None, :], {}),
            "small": (["s1"], np.zeros(1, dtype=np.uint64), vectors["s1"][None, :], {})}
    load = GatedLoad(rows)
    index = VectorIndex(load)
    loading = in_thread(lambda: index.nearest("big", vectors["b1"], 5))
    assert load.started.wait(WAIT)
    assert [m for m, _ in index.nearest("small", vectors["s1"], 5)] == ["s1"]  # answered while "big" loads
    writer = in_thread(lambda: index.add("big", [("b1", "billing", vectors["b1"]), ("b2", "billing 2", vectors["b2"])]))
    superseder = in_thread(lambda: index.mark_superseded("big", "b1", "b2"))
    load.gate.set()
    for thread in (loading, writer, superseder):
        thread.join(WAIT)
        assert not thread.is_alive()
    assert sorted(m for m, _ in index.nearest("big", vectors["b1"], 5)) == ["b1", "b2"]
    assert [m for m, _ in index.nearest("big", vectors["b1"], 5, include_superseded=False)] == ["b2"]


def test_a_failed_load_is_retried_on_next_use():
    calls = []

    def flaky(namespace: str):
        calls.append(namespace)
        if len(calls) == 1:
            raise OSError("store busy")
        return [IndexedMemory("m1", "nightly backups at two", ())]

    index = LexicalIndex(flaky)
    try:
        index.search(["ns"], "backups", 5)
    except OSError:
        pass
    index.add("ns", [IndexedMemory("m2", "backups moved to three", ())])  # not loaded: left to the store
    assert [m for m, _ in index.search(["ns"], "nightly backups", 5)] == ["m1"]
    assert calls == ["ns", "ns"]
