"""The holder model reads each memory once, in the background after it is written, and the reading is kept in the
store: a restarted daemon's search reads it there instead of running the model; an edited text or another model is
read again, and forgetting a memory deletes its reading. The real model reads real texts here."""

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
from memory_daemon.store.holder_readings import HolderReadingStore, content_digest
from memory_daemon.store.memories import MemoryRow
from preprocessing.holder_model import HolderModel
from preprocessing.registry import manifest_digest

THEIRS = "Kofi got taken off the billing approvers last week."
MINE = "I'm on the approvers list for the billing repo."


@pytest.fixture(scope="module")
def model():
    return HolderModel.load()


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


def counted(model, calls: list):
    def read(texts):
        calls.append(list(texts))
        return model.others(texts)
    return read


def read_in_background(readings: HolderReadings, rows) -> None:
    readings.start().queue(rows)
    deadline = time.monotonic() + 120
    while readings.pending() and time.monotonic() < deadline:
        time.sleep(0.05)
    readings.stop()  # finishes the chunk in progress and stores it


def test_a_memory_is_read_once_in_the_background_and_a_search_reads_the_kept_reading(model, store):
    database, (theirs, mine) = store
    calls: list = []
    read_in_background(HolderReadings(HolderReadingStore(database), counted(model, calls), lambda: "model-a",
                                      lambda: True), [theirs, mine])
    assert calls == [[THEIRS, MINE]]  # one model call for the chunk
    assert HolderReadingStore(database).read(["m0", "m1"], "model-a") == {
        "m0": (content_digest(THEIRS), True), "m1": (content_digest(MINE), False)}

    calls.clear()  # a restarted daemon: nothing in RAM, the readings in the store
    restarted = HolderReadings(HolderReadingStore(database), counted(model, calls), lambda: "model-a", lambda: True)
    assert restarted.others([theirs, mine]) == [True, False] and calls == []
    # An edited text is read again; so is every memory for another model.
    edited = replace(mine, content="Kofi's team moved their approvals to Fridays.")
    assert restarted.others([theirs, edited]) == [True, True] and calls == [[edited.content]]
    calls.clear()
    retrained = HolderReadings(HolderReadingStore(database), counted(model, calls), lambda: "model-b", lambda: True)
    assert retrained.others([theirs, mine]) == [True, False] and calls == [[THEIRS, MINE]]


def test_readings_of_another_model_are_dropped_and_a_search_stores_what_it_read(model, store):
    database, (theirs, mine) = store
    HolderReadingStore(database).keep({"m0": (content_digest(THEIRS), False)}, "model-old")
    calls: list = []
    readings = HolderReadings(HolderReadingStore(database), counted(model, calls), lambda: "model-a", lambda: True)
    assert readings.others([theirs]) == [True]  # not the old model's reading
    read_in_background(readings, [])
    assert HolderReadingStore(database).read(["m0"], "model-old") == {}
    assert HolderReadingStore(database).read(["m0", "m1"], "model-a") == {"m0": (content_digest(THEIRS), True)}


def test_forgetting_a_memory_deletes_its_reading_and_a_late_reading_of_it_is_not_stored(store):
    database, (theirs, mine) = store
    readings = HolderReadingStore(database)
    readings.keep({"m0": (content_digest(THEIRS), True), "m1": (content_digest(MINE), False)}, "model-a")
    CorrectionRepository(database).forget(["m0"], "ns", "test", datetime(2026, 1, 2))
    assert readings.read(["m0", "m1"], "model-a") == {"m1": (content_digest(MINE), False)}
    readings.keep({"m0": (content_digest(THEIRS), True)}, "model-a")  # read while it was being forgotten
    assert readings.read(["m0"], "model-a") == {}


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
        stored = db.execute("SELECT memory_id, model, digest, other FROM holder_readings").fetchall()
    assert stored == [(ids[MINE], manifest_digest("holder", "model_int8.onnx"), content_digest(MINE), False)]
