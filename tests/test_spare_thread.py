"""The spare thread runs one job at a time beside its caller, never queues behind a busy one, and passes errors on."""

import threading

import pytest

from memory_daemon.core.priority import run_in_background
from memory_daemon.retrieval.spare_thread import SpareThread


def test_a_job_runs_on_the_spare_thread_and_returns_its_result() -> None:
    spare = SpareThread("test-spare")
    future = spare.submit(lambda: threading.current_thread().name)
    assert future is not None
    assert future.result(timeout=10) == "test-spare"


def test_a_busy_thread_takes_no_second_job_and_is_free_again_after() -> None:
    spare = SpareThread("test-spare")
    release = threading.Event()
    first = spare.submit(lambda: release.wait(10))
    assert first is not None
    assert spare.submit(lambda: "queued") is None  # the caller runs it itself instead of waiting
    release.set()
    assert first.result(timeout=10) is True
    again = spare.submit(lambda: "taken")
    assert again is not None and again.result(timeout=10) == "taken"


def test_an_error_reaches_the_caller_and_the_thread_keeps_serving() -> None:
    spare = SpareThread("test-spare")
    failing = spare.submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.result(timeout=10)
    assert spare.submit(lambda: 7).result(timeout=10) == 7


def test_background_work_is_not_handed_to_the_readers_thread() -> None:
    spare, answers = SpareThread("test-spare"), []

    def background() -> None:
        run_in_background()
        answers.append(spare.submit(lambda: "ran"))

    worker = threading.Thread(target=background)
    worker.start()
    worker.join(10)
    assert answers == [None]
