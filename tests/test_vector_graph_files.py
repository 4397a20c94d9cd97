"""A large namespace's vector graph is saved beside the store, loaded at the next start and caught up with the store;
a damaged or missing one is rebuilt from the store, never trusted over it."""

from __future__ import annotations

import json

import numpy as np

from memory_daemon.retrieval import ann_index
from memory_daemon.retrieval.ann_index import AnnIndex, IndexFiles, fingerprint, pair_hash
from memory_daemon.retrieval.vectors import VectorIndex
from test_scale_indexes import clustered, wait_for_graph


class FakeStore:
    """The five reads VectorIndex makes of the memories table, over a dict; counts the full loads."""

    def __init__(self, n: int) -> None:
        matrix = clustered(n, seed=3)
        self.rows = {f"m{i}": (f"text {i}", matrix[i]) for i in range(n)}
        self.superseded: dict[str, str] = {}
        self.full_loads = 0
        self.fingerprints = 0
        self.row_reads = 0

    def hashes(self, ids):
        return np.array([pair_hash(m, self.rows[m][0]) for m in ids], dtype=np.uint64)

    def everything(self, _namespace):
        self.full_loads += 1
        ids = list(self.rows)
        return ids, self.hashes(ids), np.stack([self.rows[m][1] for m in ids]), dict(self.superseded)

    def embedded_rows(self, _namespace):
        self.row_reads += 1
        ids = list(self.rows)
        return ids, self.hashes(ids), dict(self.superseded)

    def superseded_in(self, _namespace):
        return dict(self.superseded)

    def embeddings_of(self, _namespace, ids):
        return {m: self.rows[m][1] for m in ids if m in self.rows}

    def fingerprint(self, _namespace):
        self.fingerprints += 1
        return fingerprint((m, text) for m, (text, _vector) in self.rows.items())

    def index(self, root) -> VectorIndex:
        return VectorIndex(self.everything, graph_from=500, index_root=root, load_rows=self.embedded_rows,
                           load_vectors=self.embeddings_of, load_fingerprint=self.fingerprint,
                           load_superseded=self.superseded_in)


def started(store: FakeStore, root) -> VectorIndex:
    index = store.index(root)
    index.nearest("ns", store.rows["m0"][1], 1)  # the first use loads the namespace
    return index


def answers(index: VectorIndex, store: FakeStore, probes=(0, 17, 333, 999)) -> list[list[str]]:
    return [[m for m, _s in index.nearest("ns", store.rows[f"m{i}"][1], 5, include_superseded=False)]
            for i in probes]


def test_a_restart_loads_the_saved_graph_and_answers_the_same(tmp_path):
    store = FakeStore(1200)
    first = started(store, tmp_path)
    wait_for_graph(first, "ns")  # saved as soon as it is built
    before = answers(first, store)
    assert store.full_loads == 1 and IndexFiles.of(tmp_path, "ns").graph.is_file()

    again = started(store, tmp_path)
    assert again.graph_ready("ns") and store.full_loads == 1  # no embedding was read back from the store
    assert store.fingerprints == 1 and store.row_reads == 0  # asked once, and it matched: no row read or compared
    assert answers(again, store) == before
    assert [(s.mode, s.rows, s.unsaved) for s in again.states()] == [("graph", 1200, 0)]


def test_a_row_written_twice_counts_once_once_the_graph_serves(tmp_path):
    store = FakeStore(1200)
    index = started(store, tmp_path)
    wait_for_graph(index, "ns")
    index.add("ns", [("m7", "text 7", store.rows["m7"][1])])  # a write that raced the load, which had read it
    assert [(s.mode, s.rows, s.unsaved) for s in index.states()] == [("graph", 1200, 0)]
    assert index.nearest("ns", store.rows["m7"][1], 1)[0][0] == "m7"


def test_rows_written_or_deleted_after_the_save_are_caught_up_from_the_store(tmp_path):
    store = FakeStore(1200)
    first = started(store, tmp_path)
    wait_for_graph(first, "ns")
    extra = clustered(1300, seed=9)[1200:]
    for i, vector in enumerate(extra[:40]):  # written after the save, then the daemon was killed before the next
        store.rows[f"late{i}"] = (f"late {i}", vector)
        first.add("ns", [(f"late{i}", f"late {i}", vector)])
    del store.rows["m17"]  # forgotten after the save
    store.superseded["m333"] = "m0"

    again = started(store, tmp_path)
    assert again.graph_ready("ns") and store.full_loads == 1
    assert again.nearest("ns", extra[5], 1)[0][0] == "late5"
    assert "m17" not in [m for m, _s in again.nearest("ns", store.rows["m18"][1], 50)]
    assert again.vectors_of("ns", ["m17"]) == {}
    assert "m333" not in [m for m, _s in again.nearest("ns", store.rows["m333"][1], 5, include_superseded=False)]
    assert again.states()[0].unsaved == 41
    assert again.save_unsaved() == 1 and again.states()[0].unsaved == 0


def test_a_damaged_graph_is_rebuilt_from_the_store_with_exact_search_meanwhile(tmp_path):
    store = FakeStore(1200)
    first = started(store, tmp_path)
    wait_for_graph(first, "ns")
    before = answers(first, store)
    files = IndexFiles.of(tmp_path, "ns")
    damaged = bytearray(files.graph.read_bytes())
    damaged[len(damaged) // 2] ^= 0xFF
    files.graph.write_bytes(bytes(damaged))

    again = started(store, tmp_path)
    assert store.full_loads == 2  # refused, so read from the store and searched exactly
    # The graph is approximate and built by several threads, so a rebuilt one can differ from the first by a
    # neighbour; each answer is held to the exact one instead.
    for answer in (before, answers(again, store)):
        assert_close_to_exact(answer, store)
    wait_for_graph(again, "ns")
    assert_close_to_exact(answers(again, store), store)


def assert_close_to_exact(answer: list[list[str]], store: FakeStore, probes=(0, 17, 333, 999)) -> None:
    """Each probe's five nearest: itself first, and at least four of the exact five (brute force over the store)."""
    ids = list(store.rows)
    matrix = np.stack([store.rows[m][1] for m in ids])
    for found, probe in zip(answer, probes, strict=True):
        exact = [ids[j] for j in np.argsort(-(matrix @ store.rows[f"m{probe}"][1]), kind="stable")[:5]]
        assert found[0] == f"m{probe}" and len(set(found) & set(exact)) >= 4, (found, exact)


def test_a_manifest_cut_short_or_missing_is_refused(tmp_path):
    store = FakeStore(1200)
    wait_for_graph(started(store, tmp_path), "ns")
    files = IndexFiles.of(tmp_path, "ns")
    files.manifest.write_text(files.manifest.read_text()[:100])
    second = started(store, tmp_path)
    assert store.full_loads == 2
    wait_for_graph(second, "ns")  # rebuilt and saved again
    files.manifest.unlink()
    third = started(store, tmp_path)
    assert store.full_loads == 3
    wait_for_graph(third, "ns")
    manifest = json.loads(files.manifest.read_text())
    manifest["ids"][5] = 5  # valid JSON, but not an id
    files.manifest.write_text(json.dumps(manifest))
    started(store, tmp_path)
    assert store.full_loads == 4


def test_rebuild_throws_the_saved_graph_away(tmp_path):
    store = FakeStore(1200)
    index = started(store, tmp_path)
    wait_for_graph(index, "ns")
    assert index.rebuild("ns") == "building" and store.full_loads == 2
    wait_for_graph(index, "ns")
    assert index.states()[0].mode == "graph" and IndexFiles.of(tmp_path, "ns").graph.is_file()


def test_a_small_namespace_is_searched_exactly_and_never_saved(tmp_path):
    store = FakeStore(300)
    index = started(store, tmp_path)
    assert index.states()[0].mode == "exact" and index.save_unsaved() == 0
    assert not any(tmp_path.iterdir())


def test_a_row_edited_behind_a_saved_graph_is_embedded_again_from_the_store(tmp_path):
    store = FakeStore(1200)
    wait_for_graph(started(store, tmp_path), "ns")
    old_vector = store.rows["m5"][1]
    new_vector = clustered(1201, seed=11)[1200]
    store.rows["m5"] = ("an edited text", new_vector)  # an edit while the namespace was not loaded

    again = started(store, tmp_path)
    assert store.full_loads == 1
    assert again.nearest("ns", new_vector, 1)[0][0] == "m5"
    assert again.nearest("ns", old_vector, 1)[0][0] != "m5"


def test_forgotten_and_edited_rows_leave_a_loaded_graph_in_place_and_stay_so_after_a_restart(tmp_path):
    store = FakeStore(1200)
    index = started(store, tmp_path)
    wait_for_graph(index, "ns")
    new_vector = clustered(1201, seed=12)[1200]
    index.drop("ns", ["m3", "m8"])  # m3 forgotten, m8 edited: its new vector follows
    del store.rows["m3"]
    store.rows["m8"] = ("m8 edited", new_vector)
    index.add("ns", [("m8", "m8 edited", new_vector)])
    assert store.full_loads == 1  # in place: not reloaded from the store
    assert "m3" not in [m for m, _s in index.nearest("ns", store.rows["m4"][1], 1200)]
    assert index.nearest("ns", new_vector, 1)[0][0] == "m8"
    assert index.states()[0].unsaved == 3 and index.save_unsaved() == 1

    again = started(store, tmp_path)
    assert store.full_loads == 1 and again.states()[0].unsaved == 0
    assert "m3" not in [m for m, _s in again.nearest("ns", store.rows["m4"][1], 1200)]
    assert again.nearest("ns", new_vector, 1)[0][0] == "m8"


def test_a_small_namespace_is_reloaded_from_the_store_after_a_forget(tmp_path):
    store = FakeStore(300)
    index = started(store, tmp_path)
    index.drop("ns", ["m3"])
    del store.rows["m3"]
    assert "m3" not in [m for m, _s in index.nearest("ns", store.rows["m4"][1], 300)]
    assert store.full_loads == 2


def test_other_namespaces_and_the_building_one_answer_while_a_graph_is_built(tmp_path, monkeypatch):
    import threading

    from memory_daemon.retrieval import ann_index

    gate, building = threading.Event(), threading.Event()
    real_build = ann_index.AnnIndex.build.__func__

    def gated_build(cls, positions, vectors):
        building.set()
        assert gate.wait(60), "the test never opened the gate"
        return real_build(cls, positions, vectors)

    monkeypatch.setattr(ann_index.AnnIndex, "build", classmethod(gated_build))
    store = FakeStore(1200)
    index = started(store, tmp_path)  # both namespaces read the same fake rows
    assert building.wait(60)
    try:
        other = clustered(5, seed=21)
        index.add("other", [(f"o{i}", f"o {i}", v) for i, v in enumerate(other)], load=True)
        assert index.nearest("other", other[2], 1)[0][0] == "o2"
        assert index.nearest("ns", store.rows["m9"][1], 1)[0][0] == "m9"  # exact meanwhile
        index.add("ns", [("late", "late", other[3])])  # a write during the build joins the graph when it is done
        assert [s.mode for s in index.states() if s.namespace == "ns"] == ["building"]
    finally:
        gate.set()
    wait_for_graph(index, "ns")
    assert index.nearest("ns", other[3], 1)[0][0] == "late"


def test_onnxruntime_imported_after_the_graph_library_does_not_crash_the_process():
    """usearch's numkong extension, imported first, made onnxruntime's own import segfault; the daemon loads a saved
    graph and the encoder on two threads, so the graph's import brings onnxruntime in first."""
    import subprocess
    import sys

    code = ("from memory_daemon.retrieval.ann_index import AnnIndex; AnnIndex.empty(); "
            "import onnxruntime; print('loaded')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "loaded", done.stderr[-2000:]


def test_a_large_graph_keeps_more_candidates_per_search_and_a_set_expansion_wins(monkeypatch):
    vectors = np.random.default_rng(3).standard_normal((200, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    graph = AnnIndex.build(np.arange(200), vectors)
    positions, _cosines = graph.search(vectors[7], 5)
    assert positions[0] == 7 and graph._index.expansion_search == ann_index.EXPANSION_SEARCH
    monkeypatch.setattr(ann_index, "LARGE_GRAPH", 100)  # this graph now counts as large
    assert graph.search(vectors[9], 5)[0][0] == 9
    assert graph._index.expansion_search == ann_index.LARGE_EXPANSION_SEARCH
    graph.set_expansion(128)
    graph.search(vectors[9], 5)
    assert graph._index.expansion_search == 128
