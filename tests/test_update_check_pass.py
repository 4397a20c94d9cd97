"""Imported statements are stored and found at once, and read for updates by a background pass whose queue is kept in
the store: `cortexd status` shows it, a SIGKILL loses none of it, and the restarted daemon finishes it."""

from __future__ import annotations

import signal
import subprocess
from dataclasses import replace
from datetime import datetime, timedelta

from conftest import CORTEXD, Daemon
from memory_daemon.client.python_client import as_dict
from memory_daemon.store import MemoryRepository
from memory_daemon.store.database import Database
from memory_daemon.store.memories import MemoryRow
from memory_daemon.memory.update_checks import UpdateCheckPass
from memory_daemon.store.update_checks import UpdateCheckQueue

FILLERS = 300  # enough statements that the pass is still at work when the daemon is killed


def records() -> list[dict]:
    start = datetime(2024, 1, 1)
    fillers = [{"id": f"f{i}", "text": f"Locker {i} in the east hallway holds spare {('cables', 'badges', 'mugs')[i % 3]}"
                f" for desk {i * 7 % 90}", "timestamp": f"{(start + timedelta(hours=i)).isoformat()}Z"}
               for i in range(FILLERS)]
    return fillers + [
        {"id": "old", "text": "The billing service runs on Python 3.11", "timestamp": "2025-03-01T09:00:00Z"},
        {"id": "new", "text": "We moved the billing service to Python 3.12", "timestamp": "2025-09-01T09:00:00Z"},
    ]


def by_external_id(client) -> dict:
    found, offset = {}, 0
    while True:
        page = client.export_memories(offset=offset, limit=500)
        found.update((m.external_id, m) for m in page.memories)
        if not (offset := page.next_offset):
            return found


def test_a_sigkill_keeps_the_queue_and_the_restarted_daemon_finishes_it(workdir):
    daemon = Daemon(workdir).start()
    try:
        with daemon.client("queue") as client:
            reply = client.import_records(records())
            assert (reply.imported, reply.update_checks_pending) == (FILLERS + 2, FILLERS + 2)
            hits = client.search_memory(query="which Python does the billing service run on?", limit=5).hits
            assert {"old", "new"} <= {h.memory.external_id for h in hits}  # stored, and found by their words already
    finally:
        daemon.process.send_signal(signal.SIGKILL)
        daemon.process.wait(timeout=30)

    daemon = Daemon(workdir).start()  # answers before its models load; the pass waits for them
    try:
        with daemon.client("queue") as client:
            pending = {n.namespace: n.pending for n in client.get_status().update_checks}
            assert 0 < pending["queue"] <= FILLERS + 2
            shown = subprocess.run([*CORTEXD, "status", "--daemon", daemon.address], capture_output=True, text=True,
                                   timeout=60)
            assert "namespace queue: " in shown.stdout and "imported statements wait for their update check" \
                in shown.stdout, shown.stdout
            assert client.wait_for_update_checks(300) == 0
            assert as_dict(client.get_status()).get("update_checks", []) == []
            stored = by_external_id(client)
            assert stored["old"].superseded_by == stored["new"].id and not stored["new"].superseded_by
            hits = client.search_memory(query="which Python does the billing service run on?", limit=3).hits
            assert hits[0].memory.external_id == "new"
    finally:
        daemon.stop()


def test_import_wait_returns_once_the_checks_are_done(workdir):
    daemon = Daemon(workdir).start()
    try:
        source = workdir / "chain.jsonl"
        source.write_text(
            '{"id": "a", "text": "Our deploys go out on Tuesdays", "timestamp": "2025-01-10T09:00:00Z"}\n'
            '{"id": "b", "text": "Deploys moved to Thursdays from now on", "timestamp": "2025-06-10T09:00:00Z"}\n')
        done = subprocess.run([*CORTEXD, "import", str(source), "--wait", "120", "--daemon", daemon.address,
                               "--namespace", "waits"], capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "imported 2, skipped 0 already present"
        with daemon.client("waits") as client:
            stored = by_external_id(client)
            assert stored["a"].superseded_by == stored["b"].id
    finally:
        daemon.stop()


def test_the_queue_reads_oldest_first_and_reports_checks_whose_memory_is_gone(tmp_path):
    database = Database(tmp_path / "q.duckdb")
    try:
        repository, queue = MemoryRepository(database), UpdateCheckQueue(database)
        now = datetime(2026, 1, 1)
        rows = [MemoryRow(id=f"m{i}", namespace="ns", content=f"statement {i}", tags=(), entities=(), strength=1.0,
                          created_at=now - timedelta(days=i), last_used_at=now, use_count=0) for i in range(3)]
        repository.insert_many(rows, None, rows, now)
        assert queue.pending() == {"ns": {"m0", "m1", "m2"}}
        with database.writing() as cursor:
            cursor.execute("DELETE FROM memories WHERE id = 'm1'")
        found, gone = queue.next_rows(10)
        assert [r.id for r in found] == ["m2", "m0"] and gone == ["m1"]
        revised = [replace(rows[0], context="about: statement 2")]
        queue.finish(["m0", "m1"], [("m2", "m0")], revised, now)
        assert queue.pending() == {"ns": {"m2"}}
        (m2,) = repository.get_many(["m2"], ["ns"])
        (m0,) = repository.get_many(["m0"], ["ns"])
        assert m2.superseded_by == "m0" and m0.context == "about: statement 2"
    finally:
        database.close()


def test_a_statement_whose_check_keeps_failing_is_left_current_and_the_queue_goes_on(tmp_path):
    """The pass's own failure handling, with a check that fails for one statement (a model fault cannot be caused
    on purpose here): that statement is logged and taken off the queue, unchecked; the others are checked."""
    database = Database(tmp_path / "q.duckdb")
    try:
        repository, queue = MemoryRepository(database), UpdateCheckQueue(database)
        now = datetime(2026, 1, 1)
        rows = [MemoryRow(id=f"m{i}", namespace="ns", content=f"statement {i}", tags=(), entities=(), strength=1.0,
                          created_at=now + timedelta(minutes=i), last_used_at=now, use_count=0) for i in range(5)]
        repository.insert_many(rows, None, rows, now)
        checked: list[str] = []

        def check(batch, gone):
            if any(row.id == "m2" for row in batch):
                raise RuntimeError("the model failed on m2")
            checked.extend(row.id for row in batch)
            queue.finish([row.id for row in batch] + list(gone), [], [], now)

        update_pass = UpdateCheckPass(queue, check, ready=lambda: True).start()
        try:
            assert update_pass.wait_until_done(60)
        finally:
            update_pass.stop()
        assert checked == ["m0", "m1", "m3", "m4"] and queue.pending() == {}
        assert update_pass.counts() == {}
    finally:
        database.close()


def test_statements_whose_insert_failed_leave_the_queue_in_ram_too(tmp_path):
    database = Database(tmp_path / "q.duckdb")
    try:
        update_pass = UpdateCheckPass(UpdateCheckQueue(database), lambda rows, gone: None, ready=lambda: True)
        now = datetime(2026, 1, 1)
        rows = [MemoryRow(id=f"m{i}", namespace=f"ns{i % 2}", content=f"statement {i}", tags=(), entities=(),
                          strength=1.0, created_at=now, last_used_at=now, use_count=0) for i in range(5)]
        update_pass.queue(rows)
        assert update_pass.counts() == {"ns0": 3, "ns1": 2} and update_pass.waiting("ns0", "m2")
        update_pass.unqueue(rows)
        assert update_pass.counts() == {} and not update_pass.waiting("ns0", "m2")
    finally:
        database.close()
