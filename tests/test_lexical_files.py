"""A namespace's lexical index saved beside the store: loaded instead of rebuilt, caught up with writes, deletes and
edits made since the save, rebuilt when damaged or far behind, and kept whole when written to during a save."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import replace
from datetime import datetime, timezone

import duckdb
import numpy as np

from memory_daemon.retrieval.ann_index import IndexFiles, fingerprint, pair_hash
from memory_daemon.retrieval.lexical import IndexedMemory, LexicalIndex, _NamespaceIndex
from memory_daemon.retrieval.postings import Postings
from memory_daemon.retrieval.row_cache import RowCache
from memory_daemon.store.memories import INDEXED_DIGEST, indexed_digest

WORDS = ["deploy", "replica", "billing", "export", "kafka", "consumer", "backup", "staging", "cluster", "search",
         "mobile", "release", "nightly", "pager", "runbook", "terraform", "redis", "cache", "ttl", "vault"]
QUERIES = ["kafka consumer lag on host-17", "nightly backup runbook", "auth_service 3.12", "w42x", "billing export",
           "redis cache ttl staging", "svc_7 release"]


def memory(i: int, rng: random.Random, text: str = "") -> IndexedMemory:
    text = text or " ".join([*rng.sample(WORDS, 4), f"host-{i % 23}", f"w{i}x", f"svc_{i % 11}",
                             "auth_service 3.12" if i % 9 == 0 else ""])
    keys = (f"component:svc_{i % 11}", f"host:{i % 23}")
    return IndexedMemory(f"m{i}", text, keys, hashlib.md5(f"{text}|{keys}".encode()).hexdigest())


class Store:
    """The lexical index's source, in RAM: counts whole reads, so a test can tell a load from a rebuild."""

    def __init__(self, count: int) -> None:
        rng = random.Random(7)
        self.rows = {m.id: m for m in (memory(i, rng) for i in range(count))}
        self.whole_reads = 0
        self.hash_reads = 0

    def all(self, namespace):
        self.whole_reads += 1
        return list(self.rows.values())

    def hashes(self, namespace):
        self.hash_reads += 1
        return {m.id: pair_hash(m.id, m.digest) for m in self.rows.values()}

    def fingerprint(self, namespace):
        return fingerprint((m.id, m.digest) for m in self.rows.values())

    def some(self, namespace, ids):
        return [self.rows[i] for i in ids if i in self.rows]


def answers(index: LexicalIndex) -> list:
    return ([index.search(["ns"], q, 10) for q in QUERIES] + [index.query_weight(["ns"], q) for q in QUERIES]
            + [index.entities_of(["ns"], ["m1", "m5", "m250"]),
               index.memories_with_entities(["ns"], ["component:svc_3", "host:4"], 40),
               index.known_entity_keys(["ns"], ["component:svc_3", "host:99"])])


def saved_index(tmp_path, store: Store) -> LexicalIndex:
    index = LexicalIndex(store, tmp_path, save_from=10)
    index.search(["ns"], "warm", 1)
    assert index.save_unsaved() == 1
    return index


def test_a_saved_index_answers_as_the_one_built_from_the_store(tmp_path):
    store = Store(300)
    built = saved_index(tmp_path, store)
    loaded = LexicalIndex(store, tmp_path, save_from=10)
    assert answers(loaded) == answers(built)
    assert store.whole_reads == 1  # the second index read no memory from the store
    assert store.hash_reads == 0  # nor compared them one by one: its fingerprint is the store's
    assert answers(built)[0][0][0]  # the queries do find something
    assert LexicalIndex(store, tmp_path, save_from=1_000).save_unsaved() == 0  # below save_from: never saved


def test_writes_deletes_and_edits_since_the_save_are_caught_up(tmp_path):
    store = Store(300)
    saved_index(tmp_path, store)
    rng = random.Random(11)
    for i in range(300, 310):
        store.rows[f"m{i}"] = memory(i, rng)
    for i in (3, 4, 5):
        del store.rows[f"m{i}"]
    store.rows["m6"] = memory(6, rng, "the quokka migration moved to friday")
    loaded = LexicalIndex(store, tmp_path, save_from=10)
    assert loaded.search(["ns"], "w305x", 1)[0][0] == "m305"
    assert store.whole_reads == 1 and store.hash_reads == 1  # the fingerprints differ: compared row by row
    assert {m for q in ("w3x", "w4x", "w5x", "w6x") for m, _ in loaded.search(["ns"], q, 50)} \
        & {"m3", "m4", "m5", "m6"} == set()
    assert loaded.search(["ns"], "quokka migration", 1)[0][0] == "m6"
    fresh = LexicalIndex(Store(0), tmp_path / "none", save_from=10)
    fresh._source = store  # the same rows, indexed from scratch
    assert [m for m, _ in loaded.search(["ns"], "kafka consumer w305x", 10)] == \
        [m for m, _ in fresh.search(["ns"], "kafka consumer w305x", 10)]


def test_a_damaged_foreign_or_far_behind_save_is_rebuilt_from_the_store(tmp_path):
    store = Store(300)
    expected = answers(saved_index(tmp_path, store))
    files = IndexFiles.of(tmp_path, "ns")
    arrays = bytearray(files.lexical_arrays.read_bytes())
    arrays[len(arrays) // 2] ^= 0xFF
    files.lexical_arrays.write_bytes(bytes(arrays))
    rebuilt = LexicalIndex(store, tmp_path, save_from=10)
    assert answers(rebuilt) == expected and store.whole_reads == 2
    assert not files.lexical_exist()  # thrown away; the next save writes a good one
    assert rebuilt.save_unsaved() == 1

    manifest = json.loads(files.lexical_manifest.read_text())
    files.lexical_manifest.write_text(json.dumps({**manifest, "tokenizer": "older"}))
    assert answers(LexicalIndex(store, tmp_path, save_from=10)) == expected and store.whole_reads == 3

    saved_index(tmp_path, store)
    manifest = json.loads(files.lexical_manifest.read_text())
    manifest["ids"][3] = 3  # valid JSON, but not an id
    files.lexical_manifest.write_text(json.dumps(manifest))
    reads = store.whole_reads
    assert answers(LexicalIndex(store, tmp_path, save_from=10)) == expected and store.whole_reads == reads + 1

    saved_index(tmp_path, store)
    reads = store.whole_reads
    rng = random.Random(3)
    for i in range(300, 420):  # more than a quarter of the namespace written since the save
        store.rows[f"m{i}"] = memory(i, rng)
    LexicalIndex(store, tmp_path, save_from=10).search(["ns"], "x", 1)
    assert store.whole_reads == reads + 1


def test_writes_during_a_save_are_kept_and_the_next_save_has_them(tmp_path):
    rng = random.Random(5)
    index = _NamespaceIndex()
    for i in range(50):
        index.add(memory(i, rng))
    snapshot = index.snapshot()
    for i in range(50, 60):  # written while the snapshot is merged and saved
        index.add(memory(i, rng))
    index.drop(["m2"])
    index.use_merged(index.merged(snapshot), snapshot[-1])
    assert index.base_size == 50 and index.unsaved == 11  # ten adds and one drop since the snapshot
    whole = _NamespaceIndex()
    rng = random.Random(5)
    for i in range(60):
        whole.add(memory(i, rng))
    whole.drop(["m2"])
    for query in QUERIES + ["w55x", "w2x"]:
        assert index.bm25(query, 10) == whole.bm25(query, 10), query
    assert index.entity_keys_of(55) == whole.entity_keys_of(55) and index.entity_keys_of(7) == whole.entity_keys_of(7)
    again = index.snapshot()
    index.use_merged(index.merged(again), again[-1])
    assert index.base_size == 60 and not index.postings and index.unsaved == 0
    assert index.bm25("w55x", 1) == whole.bm25("w55x", 1)


def test_forgotten_memories_leave_search_without_a_reload(tmp_path):
    store = Store(100)
    index = LexicalIndex(store, tmp_path, save_from=10)
    assert index.search(["ns"], "w42x", 1)[0][0] == "m42"
    index.drop("ns", ["m42"])
    assert "m42" not in dict(index.search(["ns"], "w42x", 100)) and store.whole_reads == 1
    index.add("ns", [replace(memory(42, random.Random(1), "the pager moved to the quokka team"), digest="new")])
    assert index.search(["ns"], "quokka pager", 1)[0][0] == "m42"


def test_merged_postings_match_postings_built_in_one_go():
    rng = random.Random(9)
    first = {f"k{k}": sorted(rng.sample(range(100), rng.randrange(1, 20))) for k in range(30)}
    later = {f"k{k}": sorted(rng.sample(range(100, 150), rng.randrange(1, 10))) for k in range(20, 40)}
    base = Postings.empty(False).merged(first)
    both = base.merged(later)
    for key in {*first, *later}:
        assert both.docs_of(key).tolist() == first.get(key, []) + later.get(key, [])
    offsets, numbers = both.by_document(150)
    doc = later["k25"][0]
    assert "k25" in [both.keys[n] for n in numbers[offsets[doc]: offsets[doc + 1]]]
    assert both.docs_of("absent").tolist() == [] and both.count("k3") == len(first["k3"])
    valued = Postings.empty(True).merged({"a": [1, 4]}, {"a": [2.0, 3.0]})
    assert valued.values_of("a").tolist() == [2.0, 3.0] and valued.values.dtype == np.float32


def test_the_store_computes_the_same_digest_as_the_daemon():
    con = duckdb.connect()
    con.execute("CREATE TABLE memories (content VARCHAR, context VARCHAR, tags VARCHAR[], entities VARCHAR[])")
    rows = [("Python 3.12 on host-7 ✓ naïve", "", [], []), ("a", "from the standup", ["ops", "db"], ["person:ana"]),
            ("two\nlines", "", ["only"], [])]
    con.executemany("INSERT INTO memories VALUES (?, ?, ?, ?)", rows)
    stored = [d for (d,) in con.execute(f"SELECT {INDEXED_DIGEST} FROM memories").fetchall()]
    assert stored == [indexed_digest(*row) for row in rows]
    assert len(set(stored)) == 3


def test_the_store_computes_the_same_fingerprint_as_a_save(tmp_path):
    from memory_daemon.store import Database, MemoryRepository
    from memory_daemon.store.memories import MemoryRow

    repository = MemoryRepository(Database(tmp_path / "cortexd.duckdb"))
    now = datetime(2026, 1, 1, tzinfo=timezone.utc)
    rows = [MemoryRow(f"m{i}", "ns", text, tags, (), 1.0, now, now, 0, context=context)
            for i, (text, context, tags) in enumerate([("Python 3.12 on host-7 ✓ naïve", "", ()),
                                                        ("a", "from the standup", ("ops", "db")),
                                                        ("two\nlines", "", ("only",))])]
    repository.insert_many(rows, [np.ones(384, dtype=np.float32)] * 3)
    repository.insert_many([replace(rows[0], id="other", namespace="elsewhere")])
    assert repository.indexed_fingerprint("ns") == fingerprint(
        (r.id, indexed_digest(r.content, r.context, r.tags, r.entities)) for r in rows)
    assert repository.embedded_fingerprint("ns") == fingerprint((r.id, r.content) for r in rows)
    assert repository.indexed_fingerprint("ns") != repository.embedded_fingerprint("ns")
    assert repository.indexed_fingerprint("empty") == (0, 0)
    # Each row's hash, as the vector index keeps it, is the same in SQL and in Python.
    ids, hashes, _superseded = repository.embedded_rows("ns")
    assert ids == [r.id for r in rows] and hashes.tolist() == [pair_hash(r.id, r.content) for r in rows]
    repository.database.close()


def test_a_bulk_read_of_rows_never_brings_back_an_older_version():
    class Row:
        def __init__(self, memory_id, version):
            self.id, self.version, self.namespace = memory_id, version, "ns"

    cache = RowCache(lambda ids, namespaces: [])
    written_meanwhile = Row("a", 2)

    def read():
        cache.put([written_meanwhile])  # a write lands while the bulk read runs
        cache.drop(["b"])  # and a forget
        return [Row("a", 1), Row("b", 1), Row("c", 1)]

    cache.fill(read)
    held = {row.id: row.version for row in cache.get_many(["a", "b", "c"], ["ns"])}
    assert held == {"a": 2, "c": 1}
