"""The daemon's life on a real store: a clean stop every time, WAL checkpoints while serving, start-up faults refused."""

from __future__ import annotations

from conftest import Daemon

ROUNDS = 20


def test_stop_start_supersede_stop_exits_0_every_time(workdir):
    # The failure needed a restart: the reopened store's migration check left a read open on the base connection,
    # so DuckDB could not clean up the supersede's UPDATE and the stop's CHECKPOINT failed ("other write
    # transactions active"), exit 1.
    daemon = Daemon(workdir).start()
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
        assert not (daemon.data_dir / "cortexd.duckdb.wal").exists(), "the stop folded the WAL into the file"


def test_the_store_never_leaves_a_result_streaming():
    # A result read with fetchone() or fetchmany() keeps its cursor's transaction open until that cursor's next
    # statement, and an idle worker's cursor may wait for hours: no CHECKPOINT succeeds meanwhile. first_row() reads
    # the result to its end.
    from pathlib import Path

    store = Path(__file__).resolve().parents[1] / "memory_daemon" / "store"
    streaming = [f"{path.name}: {line.strip()}" for path in sorted(store.glob("*.py"))
                 for line in path.read_text().splitlines() if ".fetchone(" in line or ".fetchmany(" in line]
    assert not streaming
