"""ConversationContext: window, per-session isolation, idle pruning, LRU eviction and concurrent use."""

from __future__ import annotations

import sys
import threading

import pytest

from preprocessing.context import ConversationContext


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock():
    return FakeClock()


def test_keeps_the_last_window_messages_oldest_first(clock):
    context = ConversationContext(window=3, clock=clock)
    for i in range(5):
        context.add("s", f"m{i}")
    assert context.recent("s") == ("m2", "m3", "m4")


def test_sessions_are_isolated_and_unknown_is_empty(clock):
    context = ConversationContext(clock=clock)
    context.add("a", "hello from a")
    context.add("b", "hello from b")
    assert context.recent("a") == ("hello from a",)
    assert context.recent("b") == ("hello from b",)
    assert context.recent("nobody") == ()
    assert len(context) == 2


def test_clear_forgets_one_session(clock):
    context = ConversationContext(clock=clock)
    context.add("a", "x")
    context.add("b", "y")
    context.clear("a")
    context.clear("never-existed")
    assert context.recent("a") == () and context.recent("b") == ("y",)


def test_idle_sessions_are_pruned(clock):
    context = ConversationContext(idle_seconds=60, clock=clock)
    context.add("old", "x")
    clock.advance(30)
    context.add("fresh", "y")
    clock.advance(31)  # "old" idle 61 s, "fresh" 31 s
    assert context.recent("old") == ()
    assert context.recent("fresh") == ("y",)
    assert len(context) == 1


def test_activity_keeps_a_session_alive(clock):
    context = ConversationContext(idle_seconds=60, clock=clock)
    context.add("s", "one")
    for _ in range(5):
        clock.advance(50)
        context.add("s", "more")
    assert context.recent("s")[0] == "one"


def test_reading_counts_as_activity(clock):
    context = ConversationContext(idle_seconds=60, clock=clock)
    context.add("s", "one")
    clock.advance(50)
    assert context.recent("s") == ("one",)
    clock.advance(50)
    assert context.recent("s") == ("one",)


def test_expired_session_starts_over(clock):
    context = ConversationContext(idle_seconds=60, clock=clock)
    context.add("s", "before")
    clock.advance(61)
    context.add("s", "after")
    assert context.recent("s") == ("after",)


def test_least_recently_used_session_is_evicted(clock):
    context = ConversationContext(max_sessions=2, clock=clock)
    context.add("a", "1")
    clock.advance(1)
    context.add("b", "2")
    clock.advance(1)
    context.recent("a")  # "b" is now the least recently used
    clock.advance(1)
    context.add("c", "3")
    assert context.recent("b") == ()
    assert context.recent("a") == ("1",) and context.recent("c") == ("3",)
    assert len(context) == 2


@pytest.mark.parametrize("kwargs", [{"window": 0}, {"max_sessions": 0}, {"idle_seconds": 0}])
def test_invalid_settings_are_rejected(kwargs):
    with pytest.raises(ValueError):
        ConversationContext(**kwargs)


def test_default_clock_is_real_time():
    context = ConversationContext()
    context.add("s", "hi")
    assert context.recent("s") == ("hi",)


@pytest.fixture
def frequent_thread_switches():
    # At the default 5 ms switch interval threads rarely interleave inside one call,
    # so a missing lock would go unnoticed.
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def test_concurrent_writers_and_readers(clock, frequent_thread_switches):
    context = ConversationContext(window=50, max_sessions=8, clock=clock)
    sessions = [f"s{i}" for i in range(16)]
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def worker(index: int) -> None:
        try:
            start.wait()
            for n in range(2000):
                session = sessions[(index + n) % len(sessions)]
                context.add(session, f"{index}:{n}")
                turns = context.recent(session)
                assert len(turns) <= 50
                if n % 97 == 0:
                    context.clear(sessions[n % len(sessions)])
        except BaseException as error:  # surfaced in the main thread below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(context) <= 8


def test_single_session_under_concurrency_keeps_exactly_window(clock, frequent_thread_switches):
    context = ConversationContext(window=10, clock=clock)
    threads = [threading.Thread(target=lambda i=i: [context.add("s", f"{i}-{n}") for n in range(500)]) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    turns = context.recent("s")
    assert len(turns) == 10
    for writer in range(4):
        mine = [int(t.split("-")[1]) for t in turns if t.startswith(f"{writer}-")]
        assert mine == sorted(mine)  # each writer's messages stay in its own order


def test_changes_unnamed_subject_and_shares_topic():
    from preprocessing.context import changes_unnamed_subject
    from preprocessing.dedup import shares_topic

    for text in ("They pushed it to 10 June", "we'll move it to Postgres 16", "so it becomes 14 days",
                 "We raised it to 32,000 because of the appliances"):
        assert changes_unnamed_subject(text), text
    for text in ("It is raining", "move fast and break things", "I pushed the branch to origin"):
        assert not changes_unnamed_subject(text), text
    assert shares_topic("pushed it to 10 June", "Dentist appointment on 3 June at 8:00")  # dates
    assert shares_topic("it belongs to the discovery team instead", "The search service is owned by the platform team")
    assert shares_topic("so we moved it to Landhaus Himmelpfort", "The team offsite is at Gut Schwante")  # names
    assert not shares_topic("The dog ate a sock again, the vet says it'll pass", "Theo is allergic to tree nuts")


def test_asks_about_the_past():
    from preprocessing.terms import asks_about_the_past

    assert asks_about_the_past("Which Python did we use before the upgrade?")
    assert asks_about_the_past("what was the original plan? previously we said")
    assert not asks_about_the_past("Which Python do we use?")


def test_that_introducing_a_clause_points_at_nothing():
    from preprocessing.context import leans_on_context, points_back

    for text in ("remember that the staging DB is db-stg-2", "note that prod runs in eu-west-1",
                 "keep in mind that I'm vegetarian"):
        assert not leans_on_context(text) and not points_back(text), text
    assert leans_on_context("yes, let's go with that")
    assert leans_on_context("remember that one for later")
