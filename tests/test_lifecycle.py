"""The daemon's life on a real store: a clean stop every time, WAL checkpoints while serving, start-up faults refused."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import duckdb
import pytest

from conftest import CORTEXD, Daemon

ROUNDS = 3  # the failure showed on the first stop after a restart; two more rounds keep it honest
WAIT_SECONDS = 120  # a guard against hanging, not a speed target
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, PR_CAPBSET_DROP = 1, 2, 24


def _as_an_ordinary_user() -> None:
    """In the child, as root: drop the capabilities that ignore file modes, so a read-only dir is read-only there too."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _wait_for(condition, what: str, log) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"{what}\n{log()[-3000:]}"
        time.sleep(0.1)


def _serve_refused(data_dir: Path, listen: str, *extra: str) -> tuple[int, list[str]]:
    """`cortexd serve` that must refuse to start: its exit status and its stderr lines."""
    try:
        done = subprocess.run(CORTEXD + ["serve", "--data-dir", str(data_dir), "--listen", listen, *extra],
                              capture_output=True, text=True, timeout=60, preexec_fn=_as_an_ordinary_user)
    except subprocess.TimeoutExpired:
        pytest.fail("the daemon started serving instead of refusing")
    return done.returncode, [line for line in done.stderr.splitlines() if line.strip()]


def _wal(daemon: Daemon) -> Path:
    return daemon.data_dir / "cortexd.duckdb.wal"


def _wal_bytes(daemon: Daemon) -> int:
    return _wal(daemon).stat().st_size if _wal(daemon).exists() else 0


# -- a clean stop every time ------------------------------------------------------------------------------------------

def test_stop_start_supersede_stop_exits_0_every_time(workdir):
    # The failure needed a restart: the reopened store's migration check left a read open on the base connection,
    # so DuckDB could not clean up the supersede's UPDATE and the stop's CHECKPOINT failed ("other write
    # transactions active"), exit 1.
    daemon = Daemon(workdir).start()
    try:
        with daemon.client("acme") as client:
            client.save_memory(content="The first run stores one memory")
        assert daemon.stop() == 0
        for round_number in range(ROUNDS):
            daemon.start()
            with daemon.client("acme") as client:
                old = client.save_memory(content=f"Round {round_number}: the release train leaves on Tuesday").memory
                new = client.save_memory(content=f"Round {round_number}: the release train leaves on Thursday now",
                                         supersedes=old.id).memory
                assert client.open_memories(ids=[old.id]).memories[0].superseded_by == new.id
            code = daemon.stop()
            assert code == 0, f"round {round_number}: the stop exited {code}\n{daemon.log()[-3000:]}"
            assert not _wal(daemon).exists(), "the stop folded the WAL into the file"
    finally:
        daemon.stop()


def test_the_store_never_leaves_a_result_streaming():
    # A result read with fetchone() or fetchmany() keeps its cursor's transaction open until that cursor's next
    # statement, and an idle worker's cursor may wait for hours: no CHECKPOINT succeeds meanwhile. first_row() reads
    # the result to its end, and so does chunks_to_the_end(), whose fetchmany() is the one allowed.
    store = Path(__file__).resolve().parents[1] / "memory_daemon" / "store"
    streaming = [f"{path.name}: {line.strip()}" for path in sorted(store.glob("*.py"))
                 for line in path.read_text().splitlines() if ".fetchone(" in line or ".fetchmany(" in line]
    assert streaming == ["database.py: while chunk := result.fetchmany(size):  # the one streaming read in the store, "
                         "and it reads to the end"]


def test_a_stop_with_the_data_dir_made_read_only_says_so_in_one_line_and_loses_nothing(workdir):
    daemon = Daemon(workdir, env={**os.environ, "CORTEXD_STORE_CHECKPOINT_IDLE_SECONDS": "1"},
                    preexec_fn=_as_an_ordinary_user).start()
    acknowledged: dict[str, str] = {}

    def save(client, text: str) -> None:
        memory = client.save_memory(content=f"{text} ({uuid.uuid4().hex[:8]})").memory
        acknowledged[memory.id] = memory.content

    try:
        with daemon.client("acme") as client:
            for n in range(3):
                save(client, f"Before the chmod, note {n}: the staging database moved to host db-{n}")
            os.chmod(daemon.data_dir, 0o500)
            for n in range(3):  # they go to the WAL, which is open already
                save(client, f"After the chmod, note {n}: the canary deploy needs approval from team {n}")
            # An idle checkpoint now would fail midway and invalidate the store: it waits for a writable dir instead.
            _wait_for(lambda: '"event": "checkpoints_paused"' in daemon.log(), "checkpoints never paused", daemon.log)
            save(client, "Still serving: writes after the pause are acknowledged too")
        code = daemon.stop()
    finally:
        os.chmod(daemon.data_dir, 0o700)
        daemon.stop()  # (when an assertion above failed)
    last_line = daemon.log().splitlines()[-1]
    assert code == 1, daemon.log()[-3000:]
    assert "Traceback" not in daemon.log()
    assert last_line.startswith("cortexd: ") and f"the data dir {daemon.data_dir} is not writable" in last_line
    assert "keeps every acknowledged write and is replayed at the next start" in last_line

    daemon.start()
    try:
        with daemon.client("acme") as client:
            stored = {m.id: m.content for m in client.open_memories(ids=list(acknowledged)).memories}
    finally:
        code = daemon.stop()
    assert stored == acknowledged and code == 0


# -- WAL checkpoints while serving ------------------------------------------------------------------------------------

@pytest.mark.parametrize("trigger, settings", [
    ("writes", {"CORTEXD_STORE_CHECKPOINT_WRITES": "20", "CORTEXD_STORE_CHECKPOINT_IDLE_SECONDS": "3600"}),
    ("wal_bytes", {"CORTEXD_STORE_CHECKPOINT_WAL_MIB": "0.25", "CORTEXD_STORE_CHECKPOINT_IDLE_SECONDS": "3600"}),
    ("idle", {"CORTEXD_STORE_CHECKPOINT_IDLE_SECONDS": "1"}),
])
def test_the_wal_is_checkpointed_while_serving(workdir, trigger, settings):
    # Before, nothing checkpointed while serving: reads left open on worker cursors kept DuckDB's own checkpoint
    # (at 16 MiB of WAL) from ever running, and the WAL grew until the stop.
    daemon = Daemon(workdir, env={**os.environ, **settings}).start()
    saved: list[str] = []
    try:
        with daemon.client("acme") as client:
            while f'"trigger": "{trigger}"' not in daemon.log():
                assert len(saved) < 2000, f"no {trigger} checkpoint while serving\n{daemon.log()[-3000:]}"
                if trigger == "idle" and len(saved) >= 3:  # (the store's creation may have had its own already)
                    _wait_for(lambda: _wal_bytes(daemon) == 0, "no idle checkpoint after the writes", daemon.log)
                    break
                saved.append(client.save_memory(content=f"Build {uuid.uuid4().hex} of the billing service passed "
                                                        f"on runner {len(saved) % 7}").memory.id)
                client.search_memory(query="billing service build")  # reads on the worker cursors between writes
            # The status reports the WAL file's size (after a checkpoint the file stays, empty), once the background
            # pass has stored its readings of the memories just saved: they are writes too.
            _wait_for(lambda: client.get_status().holder_readings_pending == 0
                      and client.get_status().wal_bytes == _wal_bytes(daemon), "status and WAL file disagree", daemon.log)
            assert {m.id for m in client.open_memories(ids=saved[-100:]).memories} == set(saved[-100:])
    finally:
        code = daemon.stop()
    assert code == 0


def test_a_store_invalidated_while_serving_stops_the_daemon_with_one_line(tmp_path, monkeypatch):
    from memory_daemon.core.config import StoreSettings
    from memory_daemon.store.checkpoints import WalCheckpointer
    from memory_daemon.store.database import Database

    database = Database(tmp_path / "cortexd.duckdb")
    with database.writing() as cursor:
        cursor.execute("INSERT INTO schema_version VALUES (0, now())")

    def checkpoint_failing_midway() -> None:
        raise duckdb.FatalException("FATAL Error: Failed to create checkpoint because of error: disk I/O error")

    monkeypatch.setattr(database, "checkpoint", checkpoint_failing_midway)
    lost: list[str] = []
    checkpointer = WalCheckpointer(database, StoreSettings(checkpoint_idle_seconds=0.1), on_store_lost=lost.append)
    checkpointer.start()
    _wait_for(lambda: lost, "the lost store was never reported", lambda: "")
    checkpointer.stop()
    assert "was invalidated by a failed checkpoint" in lost[0] and "replayed at the next start" in lost[0]


# -- start-up faults: one line, the right exit status, nothing destroyed ----------------------------------------------

def test_a_regular_file_at_the_socket_path_is_never_deleted(workdir):
    notes = workdir / "notes.txt"
    notes.write_text("my notes\n")
    code, lines = _serve_refused(workdir / "data", f"unix:{notes}")
    assert notes.read_text() == "my notes\n"
    assert code == 2 and len(lines) == 1, lines
    assert lines[0].startswith("cortexd: ") and f"{notes} is a regular file, not a socket" in lines[0]


def test_a_directory_at_the_socket_path_is_refused(workdir):
    taken = workdir / "cortexd.sock"
    (taken / "inside").mkdir(parents=True)
    code, lines = _serve_refused(workdir / "data", f"unix:{taken}")
    assert code == 2 and len(lines) == 1, lines
    assert f"{taken} is a directory, not a socket" in lines[0] and (taken / "inside").is_dir()


@pytest.mark.parametrize("with_a_store", [False, True])
def test_a_read_only_data_dir_is_refused(workdir, with_a_store):
    data = workdir / "data"
    if with_a_store:  # the lock file and the store are there from an earlier run, and still writable themselves
        daemon = Daemon(workdir).start()
        with daemon.client("acme") as client:
            saved = client.save_memory(content="Kept while the data dir is read-only").memory.id
        assert daemon.stop() == 0
    else:
        data.mkdir()
    data.chmod(0o500)
    try:
        code, lines = _serve_refused(data, f"unix:{workdir / 'other.sock'}")
    finally:
        data.chmod(0o700)
    assert code == 2 and len(lines) == 1, lines
    assert f"data dir {data} is not writable (Permission denied)" in lines[0]
    if with_a_store:
        daemon.start()
        try:
            with daemon.client("acme") as client:
                kept = client.open_memories(ids=[saved]).memories[0].content
        finally:
            code = daemon.stop()
        assert kept == "Kept while the data dir is read-only" and code == 0


def test_a_store_held_by_another_process_is_refused_naming_it(workdir):
    data = workdir / "data"
    data.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time\n"
                               f"connection = duckdb.connect({str(data / 'cortexd.duckdb')!r})\n"
                               "print('holding', flush=True)\ntime.sleep(120)\n"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        code, lines = _serve_refused(data, f"unix:{workdir / 's.sock'}")
    finally:
        holder.kill()
        holder.wait()
    assert code == 3 and len(lines) == 1, lines
    assert f"another process (pid {holder.pid}," in lines[0] and f"holds the store {data / 'cortexd.duckdb'}" in lines[0]


def test_under_launchd_a_fault_a_restart_cannot_fix_exits_0(workdir):
    # launchd restarts every non-zero exit; the agent passes --supervisor launchd, so this one stays stopped.
    notes = workdir / "notes.txt"
    notes.write_text("my notes\n")
    code, lines = _serve_refused(workdir / "data", f"unix:{notes}", "--supervisor", "launchd")
    assert code == 0 and len(lines) == 1 and "not a socket" in lines[0]
    assert notes.read_text() == "my notes\n"


def test_a_read_in_chunks_is_read_to_its_end_even_when_its_reader_stops_early(tmp_path):
    import duckdb

    from memory_daemon.store.database import chunks_to_the_end

    con = duckdb.connect(str(tmp_path / "chunks.duckdb"))
    con.execute("CREATE TABLE t AS SELECT range AS i FROM range(50000)")
    reader, writer = con.cursor(), con.cursor()
    writer.execute("INSERT INTO t VALUES (-1)")
    with pytest.raises(ZeroDivisionError):
        for chunk in chunks_to_the_end(reader.execute("SELECT i FROM t ORDER BY i"), 1000):
            assert len(chunk) == 1000
            1 / 0  # the reader fails after its first chunk
    writer.execute("UPDATE t SET i = -2 WHERE i = -1")
    writer.execute("CHECKPOINT")  # "other write transactions active" if the result were still streaming
    assert [len(c) for c in chunks_to_the_end(reader.execute("SELECT i FROM t"), 20000)] == [20000, 20000, 10001]
    con.close()
