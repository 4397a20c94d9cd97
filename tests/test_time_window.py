"""Questions that name a span of time: the parser's spans, and search ranking the matches from that span first."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from preprocessing.time_window import named_window

NOW = datetime(2026, 12, 1, 15, 30, tzinfo=timezone.utc)  # a Tuesday


def _day(text: str) -> tuple[str, str]:
    window = named_window(text, NOW)
    assert window is not None, text
    return window.start.date().isoformat(), window.end.date().isoformat()


@pytest.mark.parametrize("text, span", [
    ("what did we decide yesterday?", ("2026-11-30", "2026-12-01")),
    ("anything new today", ("2026-12-01", "2026-12-02")),
    ("what did I save last week about caching", ("2026-11-23", "2026-11-30")),
    ("notes from this week", ("2026-11-30", "2026-12-07")),
    ("what changed last month", ("2026-11-01", "2026-12-01")),
    ("what did we ship last year", ("2025-01-01", "2026-01-01")),
    ("where did we go last summer?", ("2026-06-01", "2026-09-01")),
    ("the trip in May", ("2026-05-01", "2026-06-01")),
    ("the trip in December 2025", ("2025-12-01", "2026-01-01")),
    ("what happened in 2024", ("2024-01-01", "2025-01-01")),
    ("the call last Friday", ("2026-11-27", "2026-11-28")),
    ("what did Sam say on Monday", ("2026-11-30", "2026-12-01")),
])
def test_named_spans(text, span):
    assert _day(text) == span


def test_a_span_some_time_ago_is_centred_on_it():
    window = named_window("the incident three weeks ago", NOW)
    assert window.start < NOW - timedelta(weeks=3) < window.end
    assert window.end - window.start == timedelta(days=7)


def test_last_winter_is_the_one_before_the_running_winter():
    window = named_window("how cold was it last winter", datetime(2027, 1, 10, tzinfo=timezone.utc))
    assert (window.start.date().isoformat(), window.end.date().isoformat()) == ("2025-12-01", "2026-03-01")


@pytest.mark.parametrize("text", ["may I ask what our deploy day is?", "which database do we use?",
                                  "remember the last step", "the 2024 roadmap file"])
def test_no_span(text):
    assert named_window(text, NOW) is None


def test_closeness_is_one_inside_and_halves_per_window_length_away():
    window = named_window("last week", NOW)
    assert window.closeness(window.start + timedelta(days=2)) == 1.0
    assert window.closeness(window.start - timedelta(days=7)) == pytest.approx(0.5)
    assert window.closeness(window.end + timedelta(days=14)) == pytest.approx(0.25)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_search_ranks_the_match_from_the_named_span_first(module_daemon):
    now = datetime.now(timezone.utc).replace(hour=12, minute=0, second=0, microsecond=0)
    week_start = now - timedelta(days=now.weekday())
    turns = {  # transcript turns: kept as said, never superseded by one another
        "last-week": (week_start - timedelta(days=5), "We reviewed the search dashboard with Dana"),
        "last-quarter": (now - timedelta(days=91), "We reviewed the billing dashboard with Dana"),
        "recent": (now - timedelta(hours=1), "We reviewed the payments dashboard with Dana"),
    }
    records = [{"id": key, "text": text, "timestamp": _stamp(when), "speaker": "user", "session": key}
               for key, (when, text) in turns.items()]
    with module_daemon.client("when") as client:
        assert client.import_records(records).imported == 3
        first = lambda query: client.search_memory(query=query, limit=3).hits[0].memory.external_id  # noqa: E731
        assert first("which dashboard did we review with Dana last week?") == "last-week"
        assert first("which dashboard did we review with Dana three months ago?") == "last-quarter"
        assert first("which dashboard did we review with Dana today?") == "recent"
        # An explicit window filters; the span in the words then ranks nothing.
        assert [h.memory.external_id for h in client.search_memory(
            query="which dashboard did we review with Dana last week?", since=_stamp(now - timedelta(days=2))).hits] \
            == ["recent"]
