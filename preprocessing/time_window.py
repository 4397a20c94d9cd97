"""The span of time a question names ("last week", "in May", "three days ago", "last summer"), read against a clock."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH_ABBREVIATIONS = {name[:3]: i for i, name in enumerate(_MONTHS, 1)} | {"sept": 9}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "a few": 3, "few": 3, "several": 3}
# Meteorological seasons of the northern hemisphere: (first month, months long); winter runs into the next year.
_SEASONS = {"spring": (3, 3), "summer": (6, 3), "autumn": (9, 3), "fall": (9, 3), "winter": (12, 3)}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_MONTH_NAME = "|".join([*_MONTHS, *sorted(_MONTH_ABBREVIATIONS, key=len, reverse=True)])
_AGO = re.compile(r"\b(\d{1,3}|" + "|".join(sorted(map(re.escape, _NUMBERS), key=len, reverse=True))
                  + r")\s+(day|week|month|year)s?\s+ago\b")
_RELATIVE = re.compile(r"\b(last|past|previous|this)\s+(week|month|year|night|" + "|".join(_SEASONS) + "|"
                       + "|".join(_WEEKDAYS) + r")\b")
_TODAY = re.compile(r"\b(today|this morning|this afternoon|this evening|tonight|yesterday)\b")
_IN_MONTH = re.compile(r"\b(?:in|during|on|since|back in|early|late|mid)\s+(" + _MONTH_NAME + r")\.?(?:\s+(\d{4}))?\b")
_IN_YEAR = re.compile(r"\b(?:in|during|back in|since)\s+((?:19|20)\d{2})\b")
_ON_WEEKDAY = re.compile(r"\bon\s+(" + "|".join(_WEEKDAYS) + r")\b")


@dataclass(frozen=True)
class TimeWindow:
    """[start, end) in the clock's timezone, and the words that named it."""

    start: datetime
    end: datetime
    said: str

    def closeness(self, when: datetime) -> float:
        """1 inside the window; outside, halved for every window length (at least a day) away from it."""
        if self.start <= when < self.end:
            return 1.0
        distance = (self.start - when) if when < self.start else (when - self.end)
        length = max((self.end - self.start).total_seconds(), 86400.0)
        return 0.5 ** (distance.total_seconds() / length)


def _day(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int, like: datetime) -> datetime:
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    return like.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)


def _past_month(month: int, year: int | None, now: datetime) -> tuple[datetime, datetime]:
    """The named month of the named year, else its latest start not after now (this month counts)."""
    if year is None:
        year = now.year if month <= now.month else now.year - 1
    start = _month_start(year, month, now)
    return start, _month_start(year, month + 1, now)


def _past_season(name: str, now: datetime, this: bool) -> tuple[datetime, datetime]:
    """The latest such season that has begun ("this summer"), or the one before the running one ("last summer")."""
    first, length = _SEASONS[name]
    start = _month_start(now.year, first, now)
    while start > now:
        start = _month_start(start.year - 1, first, now)
    end = _month_start(start.year, first + length, now)
    if not this and end > now:  # the season is still running: "last summer" is the one a year before
        start, end = _month_start(start.year - 1, first, now), _month_start(start.year - 1, first + length, now)
    return start, end


def _relative(unit: str, which: str, now: datetime) -> tuple[datetime, datetime]:
    today = _day(now)
    this = which == "this"
    if unit == "night":  # "last night": the evening before and the small hours of today
        return today - timedelta(hours=6), today + timedelta(hours=6)
    if unit == "week":
        week = today - timedelta(days=today.weekday())
        return (week, week + timedelta(days=7)) if this else (week - timedelta(days=7), week)
    if unit == "month":
        month = _month_start(now.year, now.month, now)
        return (month, _month_start(now.year, now.month + 1, now)) if this else \
            (_month_start(now.year, now.month - 1, now), month)
    if unit == "year":
        year = _month_start(now.year, 1, now)
        return (year, _month_start(now.year + 1, 1, now)) if this else (_month_start(now.year - 1, 1, now), year)
    if unit in _SEASONS:
        return _past_season(unit, now, this)
    days_back = (today.weekday() - _WEEKDAYS.index(unit)) % 7 or (0 if this else 7)
    day = today - timedelta(days=days_back)
    return day, day + timedelta(days=1)


def named_window(text: str, now: datetime) -> TimeWindow | None:
    """The first span of time the text names, relative to `now` (an aware datetime), or None when it names none."""
    lowered = text.lower()
    if match := _TODAY.search(lowered):
        today = _day(now)
        start = today - timedelta(days=1) if match.group(1) == "yesterday" else today
        return TimeWindow(start, start + timedelta(days=1), match.group(0))
    if match := _AGO.search(lowered):
        count = int(match.group(1)) if match.group(1).isdigit() else _NUMBERS[match.group(1)]
        days = _UNIT_DAYS[match.group(2)]
        centre = now - timedelta(days=count * days)
        half = timedelta(days=max(days / 2, 0.5))
        return TimeWindow(centre - half, centre + half, match.group(0))
    if match := _RELATIVE.search(lowered):
        start, end = _relative(match.group(2), match.group(1), now)
        return TimeWindow(start, end, match.group(0))
    if match := _IN_MONTH.search(lowered):
        name = match.group(1)
        month = _MONTHS.index(name) + 1 if name in _MONTHS else _MONTH_ABBREVIATIONS[name]
        if name == "may" and match.group(2) is None and not match.group(0).startswith(("in ", "during ", "back in")):
            return None  # "on may …" / "early may" without a year is too often the verb
        start, end = _past_month(month, int(match.group(2)) if match.group(2) else None, now)
        return TimeWindow(start, end, match.group(0))
    if match := _IN_YEAR.search(lowered):
        year = int(match.group(1))
        return TimeWindow(_month_start(year, 1, now), _month_start(year + 1, 1, now), match.group(0))
    if match := _ON_WEEKDAY.search(lowered):
        start, end = _relative(match.group(1), "last", now)
        return TimeWindow(start, end, match.group(0))
    return None
