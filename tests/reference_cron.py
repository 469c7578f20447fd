"""Brute-force reference for cron evaluation, used only by tests.

Deliberately naive and independent of the engine (no croniter, no code from core.schedule):

* its own small field parser builds plain sets;
* :func:`reference_fires` steps through UTC instants one by one (every second for 6 fields,
  every minute for 5), converts each to the zone and matches the wall-clock fields directly;
* the DST rule (Vixie cron) is applied from what the stepping observes: when the wall clock
  jumps forward, a fixed-time job fires at the first instant after the jump if any skipped wall
  time matched; when a wall time repeats (``fold=1``), a fixed-time job does not fire again.

It is slow on purpose - callers keep windows short.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from zoneinfo import ZoneInfo

MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"]
DAYS = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]


def _number(text: str, names: list[str], first: int) -> int:
    if text.upper() in names:
        return names.index(text.upper()) + first
    return int(text)


def _expand(field: str, low: int, high: int, names: list[str] = (), first: int = 0) -> set[int]:
    """Plain cron list -> set. Items: *, ?, N, A-B, */S, N/S, A-B/S."""
    values: set[int] = set()
    for item in field.split(","):
        base, _, step = item.partition("/")
        if base in ("*", "?"):
            start, end = low, high
        elif "-" in base:
            a, b = base.split("-")
            start, end = _number(a, names, first), _number(b, names, first)
        else:
            start = _number(base, names, first)
            end = high if step else start
        values.update(range(start, end + 1, int(step) if step else 1))
    return values


def _last_day(day: date) -> int:
    return calendar.monthrange(day.year, day.month)[1]


def _nearest_weekday(day: date, n: int) -> int | None:
    """Quartz W: weekday nearest day n, staying in the month; None if the month has no day n."""
    if n > _last_day(day):
        return None
    weekday = date(day.year, day.month, n).weekday()  # Monday = 0
    if weekday == 5:
        return n - 1 if n > 1 else n + 2
    if weekday == 6:
        return n + 1 if n < _last_day(day) else n - 2
    return n


def _dom_matches(field: str, day: date) -> bool:
    for item in field.split(","):
        upper = item.upper()
        if upper == "L":
            if day.day == _last_day(day):
                return True
        elif upper.endswith("W"):
            if _nearest_weekday(day, int(upper[:-1])) == day.day:
                return True
        elif day.day in _expand(item, 1, 31):
            return True
    return False


def _dow_matches(field: str, day: date) -> bool:
    weekday = (day.weekday() + 1) % 7  # Sunday = 0
    for item in field.split(","):
        upper = item.upper()
        if "#" in upper:
            wanted, nth = upper.split("#")
            if _number(wanted, DAYS, 0) % 7 == weekday and (day.day - 1) // 7 + 1 == int(nth):
                return True
        elif upper.endswith("L"):
            if _number(upper[:-1], DAYS, 0) % 7 == weekday and day.day + 7 > _last_day(day):
                return True
        elif weekday in {v % 7 for v in _expand(item, 0, 6 if item[0] in "*?" else 7, DAYS)}:
            return True
    return False


@dataclass(frozen=True)
class RefCron:
    """A cron expression as the reference understands it."""

    seconds: str
    minute: str
    hour: str
    dom: str
    month: str
    dow: str
    has_seconds: bool

    @classmethod
    def parse(cls, expression: str) -> RefCron:
        fields = expression.split()
        if len(fields) == 5:
            return cls("0", *fields, has_seconds=False)
        return cls(*fields, has_seconds=True)

    @property
    def fixed_time(self) -> bool:
        """Vixie: a job is fixed-time when neither minute nor hour starts with '*'."""
        return not (self.minute.startswith("*") or self.hour.startswith("*"))

    @cached_property
    def _time_sets(self) -> tuple[set[int], set[int], set[int], set[int]]:
        return (
            _expand(self.seconds, 0, 59),
            _expand(self.minute, 0, 59),
            _expand(self.hour, 0, 23),
            _expand(self.month, 1, 12, MONTHS, 1),
        )

    def day_matches(self, day: date) -> bool:
        """Month, then Vixie's day rule: OR when both day fields are restricted, else AND."""
        if day.month not in self._time_sets[3]:
            return False
        dom_star = self.dom.startswith("*") or self.dom == "?"
        dow_star = self.dow.startswith("*") or self.dow == "?"
        dom, dow = _dom_matches(self.dom, day), _dow_matches(self.dow, day)
        return (dom and dow) if (dom_star or dow_star) else (dom or dow)

    def wall_matches(self, wall: datetime) -> bool:
        seconds, minutes, hours, _ = self._time_sets
        return (
            wall.second in seconds
            and wall.minute in minutes
            and wall.hour in hours
            and self.day_matches(wall.date())
        )


def reference_fires(
    expression: str, zone_name: str, after: datetime, until: datetime
) -> list[tuple[datetime, str | None]]:
    """All fires in ``(after, until]`` as ``(utc_instant, dst_flag)``, by stepping through UTC.

    Assumes the zone's offsets and transitions are whole minutes (true for every zone the
    tests use), so the UTC step grid is also the local grid.
    """
    cron = RefCron.parse(expression)
    zone = ZoneInfo(zone_name)
    step = timedelta(seconds=1 if cron.has_seconds else 60)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    instant = epoch + (after - epoch) // step * step + step  # first grid instant > after
    previous_wall = (instant - step).astimezone(zone).replace(tzinfo=None)
    fires: list[tuple[datetime, str | None]] = []
    while instant <= until:
        local = instant.astimezone(zone)
        wall = local.replace(tzinfo=None, fold=0)
        ambiguous = local.replace(fold=1 - local.fold).utcoffset() != local.utcoffset()
        jumped = wall - previous_wall > step  # the wall clock skipped some times
        skipped = [previous_wall + k * step for k in range(1, (wall - previous_wall) // step)]
        if cron.fixed_time and jumped and any(cron.wall_matches(t) for t in skipped):
            fires.append((instant, "gap"))
        elif cron.wall_matches(wall) and not (cron.fixed_time and local.fold == 1):
            fires.append((instant, "fold" if ambiguous else None))
        previous_wall = wall
        instant += step
    return fires
