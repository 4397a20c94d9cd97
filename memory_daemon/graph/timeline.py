"""Plans how a new fact enters the valid-time timeline of its (subject, predicate): which rows retire, which are re-cut."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime


@dataclass(frozen=True)
class Interval:
    """One still-believed version of a fact in valid time: [valid_from, valid_to), valid_to None = open."""

    id: str
    value: str  # identity of the object: entity id or normalised literal
    valid_from: datetime
    valid_to: datetime | None
    superseded_by: str | None = None
    replaces: str | None = None  # for a re-cut copy: the row it was cut from

    def covers(self, moment: datetime) -> bool:
        return self.valid_from <= moment and (self.valid_to is None or moment < self.valid_to)

    def overlaps(self, start: datetime, end: datetime | None) -> bool:
        return (end is None or self.valid_from < end) and (self.valid_to is None or self.valid_to > start)


@dataclass(frozen=True)
class TimelinePlan:
    """What to write: retire `retract`, insert `insert` (the new fact and re-cut copies of retired rows)."""

    new_fact: Interval | None  # None: the timeline already says this, nothing to write
    unchanged_id: str | None
    retract: tuple[str, ...]
    insert: tuple[Interval, ...]  # includes new_fact
    superseded: tuple[str, ...]  # ids of inserted copies whose validity the new fact ended


def plan_change(
    versions: Sequence[Interval],
    new_id: str,
    value: str,
    valid_from: datetime,
    valid_to: datetime | None,
    new_id_for: Callable[[], str],
) -> TimelinePlan:
    """A change in the world: from `valid_from` on, `value` holds, until `valid_to` or the next known change.

    Rows that overlap the new interval are retired and re-cut around it, so out-of-order facts land in
    their place in the timeline; successor links are then recomputed by adjacency.
    """
    covering = next((v for v in versions if v.covers(valid_from)), None)
    if covering is not None and covering.value == value and (valid_to is None or covering.valid_to == valid_to):
        return TimelinePlan(None, covering.id, (), (), ())
    if valid_to is None:
        if covering is not None:
            valid_to = covering.valid_to
        else:
            later = [v.valid_from for v in versions if v.valid_from > valid_from]
            valid_to = min(later) if later else None
    new_fact = Interval(new_id, value, valid_from, valid_to)
    return _splice(versions, new_fact, new_id_for, correction_of=None)


def plan_correction(
    versions: Sequence[Interval], target: Interval, new_id: str, value: str, new_id_for: Callable[[], str]
) -> TimelinePlan:
    """A correction of the record: `target` was never true; `value` held over the same valid interval instead."""
    new_fact = Interval(new_id, value, target.valid_from, target.valid_to, replaces=target.id)
    return _splice(versions, new_fact, new_id_for, correction_of=target.id)


def plan_retirement(versions: Sequence[Interval], target: Interval, valid_to: datetime,
                    new_id_for: Callable[[], str]) -> TimelinePlan:
    """The fact stopped being true at `valid_to` with nothing replacing it."""
    closed = Interval(new_id_for(), target.value, target.valid_from, valid_to, replaces=target.id)
    remaining = [v for v in versions if v.id != target.id] + [closed]
    return TimelinePlan(closed, None, (target.id,), tuple(_relink(remaining, {closed.id})), ())


def _splice(versions: Sequence[Interval], new_fact: Interval, new_id_for: Callable[[], str],
            correction_of: str | None) -> TimelinePlan:
    start, end = new_fact.valid_from, new_fact.valid_to
    retract: list[str] = []
    remaining: list[Interval] = []
    cut: set[str] = set()
    superseded: list[str] = []
    for version in versions:
        if not version.overlaps(start, end):
            remaining.append(version)
            continue
        retract.append(version.id)
        if version.id == correction_of:
            continue
        if version.valid_from < start:
            left = replace(version, id=new_id_for(), valid_to=start, replaces=version.id)
            remaining.append(left)
            cut.add(left.id)
            superseded.append(left.id)
        if end is not None and (version.valid_to is None or version.valid_to > end):
            right = replace(version, id=new_id_for(), valid_from=end, replaces=version.id)
            remaining.append(right)
            cut.add(right.id)
    remaining.append(new_fact)
    cut.add(new_fact.id)
    insert = _relink(remaining, cut)
    new_fact = next(i for i in insert if i.id == new_fact.id)
    return TimelinePlan(new_fact, None, tuple(retract), tuple(insert), tuple(superseded))


def _relink(intervals: list[Interval], fresh: set[str]) -> list[Interval]:
    """The fresh intervals, each linked to the interval that starts where it ends.

    Stored rows keep their links: a link to a row that was later re-cut or corrected is followed
    through the `replaces` chain when read, so one change never rewrites the history before it.
    """
    starts: dict[datetime, str] = {}
    for interval in intervals:
        starts.setdefault(interval.valid_from, interval.id)
    return [
        replace(i, superseded_by=starts.get(i.valid_to) if i.valid_to is not None else None)
        for i in sorted(intervals, key=lambda i: i.valid_from)
        if i.id in fresh
    ]
