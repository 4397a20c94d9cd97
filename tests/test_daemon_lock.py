"""A daemon that loses the start race names the winner, even when it looked before the winner wrote its name."""

import fcntl
import json
import threading
import time

import pytest

from memory_daemon.api.lock import AlreadyRunning, DaemonLock


def test_the_loser_of_a_start_race_names_the_winner_written_just_after_it_looked(tmp_path):
    path = tmp_path / "daemon.lock"
    winner = open(path, "w", encoding="utf-8")
    fcntl.flock(winner, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held, and nothing written yet

    def write_name_late() -> None:
        time.sleep(0.2)
        winner.write(json.dumps({"pid": 4242, "address": "unix:/run/x.sock"}))
        winner.flush()

    writer = threading.Thread(target=write_name_late)
    writer.start()
    try:
        with pytest.raises(AlreadyRunning, match=r"pid 4242, listening on unix:/run/x\.sock"):
            DaemonLock.acquire(path, "data dir /d", "unix:/run/y.sock")
    finally:
        writer.join()
        winner.close()


def test_a_holder_that_never_writes_its_name_is_still_reported(tmp_path):
    path = tmp_path / "daemon.lock"
    with open(path, "w", encoding="utf-8") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(AlreadyRunning, match=r"pid \?, listening on \?"):
            DaemonLock.acquire(path, "data dir /d", "unix:/run/y.sock")
