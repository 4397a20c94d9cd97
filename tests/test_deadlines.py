"""Write deadlines at the store: a call that cannot be answered in time stores nothing; once it stores, it finishes."""

from __future__ import annotations

import pytest

from memory_daemon.core.config import Limits
from memory_daemon.core.deadlines import COMMIT_RESERVE_SECONDS, Deadline, current_deadline
from memory_daemon.core.errors import DeadlineExceeded
from memory_daemon.memory.service import MemoryService, NewMemory
from memory_daemon.store import Database, MemoryRepository


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def service(tmp_path):
    database = Database(tmp_path / "deadlines.duckdb")
    yield MemoryService(MemoryRepository(database), Limits())
    database.close()


def test_work_whose_caller_has_gone_is_not_started():
    clock = Clock()
    deadline = Deadline("SaveMemory", 0.5, clock)
    clock.now += 1.0
    started = []
    with pytest.raises(DeadlineExceeded, match="before it started"):
        deadline.run(lambda: started.append(True))
    assert not started


def test_a_save_that_runs_out_of_time_before_its_commit_stores_nothing(service):
    clock = Clock()
    deadline = Deadline("SaveMemory", 1.0, clock)

    def slow_save():
        clock.now += 1.0 - COMMIT_RESERVE_SECONDS / 2  # the analysis ate the time the commit and reply need
        return service.save("ns", NewMemory(content="Deploys are on Thursdays."))

    with pytest.raises(DeadlineExceeded, match="nothing was stored"):
        deadline.run(slow_save)
    assert service.count() == 0
    assert current_deadline() is None  # the worker thread serves its next call without it


def test_a_save_in_time_is_stored_and_a_call_without_deadline_is_never_refused(service):
    clock = Clock()
    Deadline("SaveMemory", 1.0, clock).run(lambda: service.save("ns", NewMemory(content="Deploys are on Thursdays.")))
    service.save("ns", NewMemory(content="Standup is at 9:30."))
    assert service.count() == 2


def test_once_a_call_has_stored_something_it_finishes(tmp_path):
    database = Database(tmp_path / "finish.duckdb")
    clock = Clock()
    deadline = Deadline("UpsertFact", 1.0, clock)

    def two_writes():
        with database.transaction() as cursor:
            cursor.execute("CREATE TABLE notes (text VARCHAR)")
        clock.now += 5.0  # late now, but half the call is stored: stopping here would leave it half done
        with database.writing() as cursor:
            cursor.execute("INSERT INTO notes VALUES ('second')")

    deadline.run(two_writes)
    assert database.cursor().execute("SELECT count(*) FROM notes").fetchone() == (1,)
    database.close()


def test_a_late_transaction_is_rolled_back(tmp_path):
    database = Database(tmp_path / "rollback.duckdb")
    with database.writing() as cursor:
        cursor.execute("CREATE TABLE notes (text VARCHAR)")
    clock = Clock()

    def late_transaction():
        with database.transaction() as cursor:
            cursor.execute("INSERT INTO notes VALUES ('late')")
            clock.now += 5.0

    with pytest.raises(DeadlineExceeded):
        Deadline("RecordEpisode", 1.0, clock).run(late_transaction)
    assert database.cursor().execute("SELECT count(*) FROM notes").fetchone() == (0,)
    database.close()
