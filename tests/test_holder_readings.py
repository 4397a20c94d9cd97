"""Whose fact each memory states (its parse's holders and the holder model's reading) is read once, in the background
after it is written, and kept in the store: a restarted daemon's search finds it there instead of parsing and running
the model; an edited text or another reader is read again, and forgetting a memory deletes its reading. The real
parser and model read real texts here."""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import datetime

import duckdb
import pytest

from conftest import Daemon
from memory_daemon.memory.holder_readings import HolderReadings
from memory_daemon.store import MemoryRepository
from memory_daemon.store.corrections import CorrectionRepository
from memory_daemon.store.database import Database
from memory_daemon.store.holder_readings import HolderReadingStore, StoredReading, content_digest
from memory_daemon.store.memories import MemoryRow
from preprocessing.entities import EntityExtractor
from preprocessing.holder_model import HolderModel
from preprocessing.holders import RULES_DIGEST, HolderReader
from preprocessing.registry import manifest_digest

THEIRS = "Kofi got taken off the billing approvers last week."
MINE = "I'm on the approvers list for the billing repo."


@pytest.fixture(scope="module")
def reader():
    return HolderReader(EntityExtractor.load().parsed, HolderModel.load().others)


@pytest.fixture()
def store(tmp_path):
    database = Database(tmp_path / "readings.duckdb")
    now = datetime(2026, 1, 1)
    rows = [MemoryRow(id=f"m{i}", namespace="ns", content=text, tags=(), entities=(), strength=1.0, created_at=now,
                      last_used_at=now, use_count=0) for i, text in enumerate((THEIRS, MINE))]
    repository = MemoryRepository(database)
    for row in rows:
        repository.insert(row)
    yield database, rows
    database.close()


def counted(reader: HolderReader, calls: list):
    def read(texts):
        calls.append(list(texts))
        return reader.statements(texts)
    return read


def others(readings: HolderReadings, rows) -> list[bool]:
    return [s.other for s in readings.statements(rows)]


def read_in_background(readings: HolderReadings, rows) -> None:
    readings.start().queue(rows)
    deadline = time.monotonic() + 120
    while readings.pending() and time.monotonic() < deadline:
        time.sleep(0.05)
    readings.stop()  # finishes the chunk in progress and stores it


def test_a_memory_is_read_once_in_the_background_and_a_search_reads_the_kept_reading(reader, store):
    database, (theirs, mine) = store
    calls: list = []
    read_in_background(HolderReadings(HolderReadingStore(database), counted(reader, calls), lambda: "reader-a"),
                       [theirs, mine])
    assert calls == [[THEIRS, MINE]]  # one round for the chunk
    assert HolderReadingStore(database).read(["m0", "m1"], "reader-a") == {
        "m0": StoredReading(content_digest(THEIRS), False, (), True),
        "m1": StoredReading(content_digest(MINE), True, (), False)}

    calls.clear()  # a restarted daemon: nothing in RAM, the readings in the store
    restarted = HolderReadings(HolderReadingStore(database), counted(reader, calls), lambda: "reader-a")
    assert others(restarted, [theirs, mine]) == [True, False] and calls == []
    # An edited text is read again, its parse too; so is every memory for another reader.
    edited = replace(mine, content="Kofi's team moved their approvals to Fridays.")
    (_, statement) = restarted.statements([theirs, edited])
    assert statement.other and statement.holders.others and calls == [[edited.content]]
    calls.clear()
    retrained = HolderReadings(HolderReadingStore(database), counted(reader, calls), lambda: "reader-b")
    assert others(retrained, [theirs, mine]) == [True, False] and calls == [[THEIRS, MINE]]
    assert HolderReadings(HolderReadingStore(database), counted(reader, calls), lambda: None).statements(
        [theirs]) is None  # models still loading


def test_readings_of_another_reader_are_dropped_and_a_search_stores_what_it_read(reader, store):
    database, (theirs, mine) = store
    HolderReadingStore(database).keep({"m0": StoredReading(content_digest(THEIRS), False, (), False)}, "reader-old")
    calls: list = []
    readings = HolderReadings(HolderReadingStore(database), counted(reader, calls), lambda: "reader-a").start()
    assert others(readings, [theirs]) == [True]  # not the old reader's reading
    readings.stop()  # stores what the search read
    assert HolderReadingStore(database).read(["m0"], "reader-old") == {}
    assert HolderReadingStore(database).read(["m0", "m1"], "reader-a") == {
        "m0": StoredReading(content_digest(THEIRS), False, (), True)}


def test_forgetting_a_memory_deletes_its_reading_and_a_late_reading_of_it_is_not_stored(store):
    database, (theirs, mine) = store
    readings = HolderReadingStore(database)
    theirs_read = StoredReading(content_digest(THEIRS), False, (), True)
    mine_read = StoredReading(content_digest(MINE), True, (), False)
    readings.keep({"m0": theirs_read, "m1": mine_read}, "reader-a")
    CorrectionRepository(database).forget(["m0"], "ns", "test", datetime(2026, 1, 2))
    assert readings.read(["m0", "m1"], "reader-a") == {"m1": mine_read}
    readings.keep({"m0": theirs_read}, "reader-a")  # read while it was being forgotten
    assert readings.read(["m0"], "reader-a") == {}


def test_the_daemon_reads_saved_memories_in_the_background_and_keeps_the_readings(workdir):
    daemon = Daemon(workdir).start()
    try:
        with daemon.client("kept") as client:
            client.analyze_message(message="warm-up")  # waits for the model load
            ids = {text: client.save_memory(content=text).memory.id for text in (THEIRS, MINE)}
            deadline = time.monotonic() + 120
            while client.get_status().holder_readings_pending and time.monotonic() < deadline:
                time.sleep(0.1)
            assert client.get_status().holder_readings_pending == 0
            client.forget_memory(ids=[ids[THEIRS]])
    finally:
        daemon.stop()
    with duckdb.connect(str(daemon.data_dir / "cortexd.duckdb"), read_only=True) as db:
        stored = db.execute("SELECT memory_id, reader, digest, first_person, named, other FROM holder_readings").fetchall()
    reader = f"{manifest_digest('holder', 'model_int8.onnx')}@{HolderModel.load().threshold}:{RULES_DIGEST}"
    assert stored == [(ids[MINE], reader, content_digest(MINE), True, [], False)]


def test_the_pass_waits_while_imports_want_the_cores(reader, store):
    database, rows = store
    importing = [True]
    readings = HolderReadings(HolderReadingStore(database), reader.statements, lambda: "reader-a",
                              busy=lambda: importing[0]).start()
    try:
        readings.queue(rows)
        time.sleep(1.5)  # three looks at `busy`
        assert readings.pending() == 2
        importing[0] = False
        deadline = time.monotonic() + 60
        while readings.pending() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert readings.pending() == 0
    finally:
        readings.stop()
    assert set(HolderReadingStore(database).read(["m0", "m1"], "reader-a")) == {"m0", "m1"}


def test_the_sweep_reads_each_unread_current_memory_once_newest_first_page_by_page(reader, store, monkeypatch):
    """Memories written before readings were kept (or queued at the last stop) are found by the sweep once the models
    load: the current ones with no reading of their present text, newest first, a page at a time."""
    database, (theirs, mine) = store
    monkeypatch.setattr("memory_daemon.memory.holder_readings.SWEEP_PAGE", 2)
    repository = MemoryRepository(database)
    later = [replace(mine, id=f"w{i}", content=text, created_at=datetime(2026, 2, i))
             for i, text in enumerate(("Priya's laptop is a ThinkPad X1.", "The staging cluster runs 3 nodes.",
                                       "My flat's lease ends in August."), start=1)]
    retired = replace(mine, id="old", content="My lease ends in June.", created_at=datetime(2025, 6, 1),
                      superseded_by="w3")
    for row in (*later, retired):
        repository.insert(row)
    kept = HolderReadingStore(database)
    kept.keep({"m0": StoredReading(content_digest(THEIRS), False, (), True),  # read as it stands
               "m1": StoredReading(content_digest("an older text of m1"), True, (), False)}, "reader-a")  # edited since
    assert kept.count_unread("reader-a") == 4
    calls: list = []
    readings = HolderReadings(kept, counted(reader, calls), lambda: "reader-a", sweep=True).start()
    try:
        deadline = time.monotonic() + 120
        while (readings.pending() or len(calls) < 2) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        readings.stop()
    assert [text for call in calls for text in call] == [w.content for w in reversed(later)] + [MINE]
    assert set(kept.read(["m0", "m1", "w1", "w2", "w3", "old"], "reader-a")) == {"m0", "m1", "w1", "w2", "w3"}
    assert kept.read(["m1"], "reader-a")["m1"].digest == content_digest(MINE)
    assert kept.count_unread("reader-a") == 0 and readings.pending() == 0


def test_a_daemon_reads_memories_written_before_it_kept_readings(workdir):
    """A store from before readings were kept (memories written behind the daemon here): the sweep reads them at
    start, `holder_readings_pending` counts them down to 0, and each has its reading on disk."""
    (workdir / "data").mkdir(parents=True, mode=0o700)
    database = Database(workdir / "data" / "cortexd.duckdb")
    now = datetime(2026, 1, 1)
    repository = MemoryRepository(database)
    for i, text in enumerate((THEIRS, MINE)):
        repository.insert(MemoryRow(id=f"pre{i}", namespace="old", content=text, tags=(), entities=(), strength=1.0,
                                    created_at=now, last_used_at=now, use_count=0))
    database.close()
    daemon = Daemon(workdir).start()
    try:
        with daemon.client("old") as client:
            client.analyze_message(message="warm-up")  # waits for the model load
            deadline = time.monotonic() + 120
            while client.get_status().holder_readings_pending and time.monotonic() < deadline:
                time.sleep(0.1)
            assert client.get_status().holder_readings_pending == 0
    finally:
        daemon.stop()
    with duckdb.connect(str(daemon.data_dir / "cortexd.duckdb"), read_only=True) as db:
        stored = db.execute("SELECT memory_id, other FROM holder_readings ORDER BY memory_id").fetchall()
    assert stored == [("pre0", True), ("pre1", False)]
