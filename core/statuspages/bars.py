"""A status page component's days as an uptime bar, computed sparsely (docs/status-pages.md).

The dashboard's bars (``core/projections/queries.py:monitors_uptime_days``,
``jobs_success_days``) build a dict per day and the page merges them into segments
(``api/ui/pages/monitors.py:uptime_bar``); for 100 components × 90 days that was most of a
fresh status page's time. Here the same rules give the segments directly:

- a monitor's day is computed by :func:`core.projections.queries.uptime_over` only when it
  is special (a downtime period overlaps it, or it holds the monitor's creation, its deletion
  or ``now``); every other day is either wholly monitored without downtime (``up``, 86,400
  monitored seconds) or wholly outside the monitored range (``none``);
- a job's day is :func:`core.projections.queries.success_rate` of the day's finished runs
  (``job_stats_daily``), only for the days that have a row; the others are ``none``.

Consecutive ``up`` days and consecutive ``none`` days merge into one segment; ``dip`` and
``down`` days stay one segment each (their labels give the day's figure), as in the
dashboard. tests/unit/test_status_bars.py checks both against the dashboard's day-by-day
functions on random histories.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from core.db import ConnectionPool, single_read
from core.projections.common import day_start
from core.projections.queries import periods_by_day, success_rate, uptime_class, uptime_over
from core.queries import Q

DAY = timedelta(days=1)
DAY_SECONDS = DAY.total_seconds()
NO_ROW, CLEAN, OTHER = 0, 1, 2  # a job's day in job_bar
# in job_bar's bytes: a run of days without a row, a run of clean days, one other day
_RUNS = re.compile(rb"\x00+|\x01+|\x02")


@dataclass(frozen=True, slots=True)
class Segment:
    """Consecutive days of one class: ``first`` (the index of its first day, 0 = oldest),
    ``count`` days, ``cls`` (``up`` | ``dip`` | ``down`` | ``none``) and its ``label``
    (``2026-11-01 to 2026-11-20: up``, ``2026-11-21: 98.50 % up``, ``…: not monitored``)."""

    first: int
    count: int
    cls: str
    label: str


@dataclass(frozen=True, slots=True)
class Bar:
    """A component's ``days`` days (oldest first) as segments, the figure over all of them
    (``percent``: uptime or share of runs that succeeded, in percent; ``None``: no data) and
    ``troubled``, how many days had downtime or failed runs."""

    days: int
    segments: tuple[Segment, ...]
    percent: float | None
    troubled: int

    @property
    def summary(self) -> str:
        """The bar for screen readers."""
        trouble = f"{self.troubled} with downtime" if self.troubled else "no downtime"
        return f"uptime of the last {self.days} days: {trouble}"


class _Builder:
    """Segments from days given in increasing order, each once (a run of plain days at a
    time, or one computed day)."""

    def __init__(self, first: datetime, days: int) -> None:
        self.dates, self.days = _dates(first, days), days
        self.runs: list[list[Any]] = []  # [first, count, cls, percent]

    def run(self, start: int, stop: int, cls: str) -> None:
        """Days ``[start, stop)`` are all ``cls`` (``up`` or ``none``)."""
        if stop <= start:
            return
        last = self.runs[-1] if self.runs else None
        if last is not None and last[2] == cls and last[0] + last[1] == start:
            last[1] += stop - start
        else:
            self.runs.append([start, stop - start, cls, None])

    def day(self, n: int, percent: float | None) -> None:
        """Day ``n`` has the figure ``percent``."""
        cls = uptime_class(percent)
        if cls in ("up", "none"):
            self.run(n, n + 1, cls)
        else:
            self.runs.append([n, 1, cls, percent])

    def bar(self, percent: float | None) -> Bar:
        segments, dates = [], self.dates
        for first, count, cls, figure in self.runs:
            span = dates[first] if count == 1 else f"{dates[first]} to {dates[first + count - 1]}"
            label = (f"{span}: {figure:.2f} % up" if figure is not None
                     else f"{span}: {'up' if cls == 'up' else 'not monitored'}")
            segments.append(Segment(first, count, cls, label))
        troubled = sum(1 for s in segments if s.cls in ("dip", "down"))
        return Bar(self.days, tuple(segments), percent, troubled)


@lru_cache(maxsize=64)
def _dates(first: datetime, days: int) -> tuple[str, ...]:
    """The ISO dates of ``days`` days from ``first`` (the same for every bar of a page)."""
    start = first.date()
    return tuple((start + timedelta(days=n)).isoformat() for n in range(days))


def monitor_bar(state: dict[str, Any] | None, periods: list[dict[str, Any]], first: datetime,
                days: int, now: datetime) -> Bar:
    """A monitor's bar over ``days`` UTC days from midnight ``first`` up to ``now``: the rule of
    ``core/projections/queries.py:monitors_uptime_days`` (``state``: its ``monitor_state`` row,
    ``{"created_at", "deleted_at"}``, ``None``: not seen by the projector; ``periods``: its
    downtime rows ``{"started_at", "ended_at"}`` overlapping the range). Work in proportion to
    the special days, not to ``days``."""
    build = _Builder(first, days)
    if state is None:
        build.run(0, days, "none")
        return build.bar(None)
    limit = min(now, state["deleted_at"] or now)
    whole_from = max(0, min(days, -((first - state["created_at"]) // DAY)))  # ceil
    whole_to = max(whole_from, min(days, (limit - first) // DAY))
    by_day = periods_by_day(periods, first, days)
    special = sorted({n for n in (*by_day, whole_from - 1, whole_to) if 0 <= n < days})
    monitored = DAY_SECONDS * (whole_to - whole_from - sum(
        1 for n in special if whole_from <= n < whole_to))
    down, at = 0.0, 0
    for n in [*special, days]:
        # the days between two special ones are all of one class: the day before the first
        # whole day and the day after the last are special, so no gap crosses either edge
        build.run(at, n, "up" if whole_from <= at < whole_to else "none")
        if n == days:
            break
        start = first + n * DAY
        if start >= now:
            build.day(n, None)
        else:
            seconds, lost, percent = uptime_over(state, by_day.get(n, []), start,
                                                 start + DAY, now)
            monitored, down = monitored + seconds, down + lost
            build.day(n, percent)
        at = n + 1
    return build.bar(round(100 * (1 - down / monitored), 4) if monitored else None)


def job_bar(clean: Iterable[int], other: Iterable[tuple[int, int, int]],
            totals: tuple[int, int], first: datetime, days: int) -> Bar:
    """A job's bar over ``days`` UTC days from midnight ``first``, from its
    ``job_stats_daily`` rows: the ``clean`` days (indexes in ``[0, days)``, any order) whose
    finished runs all succeeded (100 %), the ``other`` days with a row ``(index, succeeded,
    failed)`` (any order), and the ``totals`` ``(succeeded, failed)``; days of neither have no
    data. A day's figure is 100 × :func:`core.projections.queries.success_rate` (2 decimals),
    the bar's that of all the runs. The days are placed in a byte per day and read back as
    runs by a regular expression: no Python step per clean day (most of a quarter's)."""
    build = _Builder(first, days)
    marks = bytearray(days)  # NO_ROW, CLEAN or OTHER per day
    for n in clean:
        marks[n] = CLEAN
    counts = {}
    for n, ok, bad in other:
        marks[n] = OTHER
        counts[n] = (ok, bad)
    for found in _RUNS.finditer(marks):
        start, stop = found.span()
        mark = marks[start]
        if mark == OTHER:
            rate = success_rate(*counts[start])
            build.day(start, None if rate is None else round(100 * rate, 2))
        else:
            build.run(start, stop, "up" if mark == CLEAN else "none")
    rate = success_rate(*totals)
    return build.bar(None if rate is None else round(100 * rate, 2))


async def component_bars(pool: ConnectionPool, team_id: uuid.UUID,
                         monitors: list[uuid.UUID], jobs: list[uuid.UUID], *, days: int,
                         now: datetime) -> dict[uuid.UUID, Bar]:
    """The bars of some monitors and jobs of one team over the last ``days`` UTC days up to
    ``now`` (today included). One statement (``status_page_days``) on one connection of
    ``pool``, none without ids; ids of another team get a bar without data."""
    first = day_start(now) - (days - 1) * DAY
    rows: list[dict[str, Any]] = []
    if monitors or jobs:
        async with single_read(pool) as conn:
            # in binary: ~4,500 day indexes and the instants read without parsing text
            # (0.2-0.3 ms of a fresh page's CPU; the same values)
            cur = await conn.execute(Q["status_page_days"], {
                "team_id": team_id, "start": first, "end": now, "monitors": monitors,
                "jobs": jobs}, binary=True)
            rows = list(await cur.fetchall())
    found = {(row["kind"], row["id"]): row for row in rows}
    out = {}
    for m in monitors:
        state = found.get(("monitor", m))
        periods = [] if state is None else [
            {"started_at": s, "ended_at": e}
            for s, e in zip(state["starts"], state["ends"], strict=True)]
        out[m] = monitor_bar(state, periods, first, days, now)
    for j in jobs:
        row = found.get(("job", j)) or {"clean_days": [], "other_days": [], "succeeded": 0,
                                        "failed": 0}
        other = [(n, ok, bad) for n, ok, bad in row["other_days"]]
        out[j] = job_bar(row["clean_days"], other, (row["succeeded"], row["failed"]), first,
                         days)
    return out
