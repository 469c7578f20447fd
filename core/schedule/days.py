"""Anchored calendar periods: every N days (or N weeks on one weekday) at times of day.

``@every 3d at 09:00``, ``@every 2d at 08:00,20:00``, ``@every 14d on tue at 09:00``: what
``every 3 days at 9am``, ``every other day``, ``every 2nd day``, ``every other tuesday`` and
``every 2 weeks on monday`` read as (docs/schedules.md, *Calendar periods*). Unlike cron's
day-of-month step (``*/3`` restarts on each 1st: the 28th, the 31st, the 1st) the fire days
are exactly N days apart, and unlike an interval (``@every 72h``) they stay at the same time of
day in the schedule's zone across DST changes.

The series is anchored at the schedule's anchor (a job's creation, or the edit that set the
schedule): its first day is the first day, on or after the anchor's local date (and on the
weekday, when one is given), with a time of day after the anchor; then every N days. DST, as
for a cron fixed-time job (Vixie cron): a time of day that a spring-forward gap skips fires
once at the end of the gap; one that a fall-back fold repeats fires at its first occurrence.
"""

from __future__ import annotations

import re
import zoneinfo
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from core.schedule.model import SEARCH_YEARS, Fire, InvalidSchedule
from core.schedule.zones import make_fire, transition_at

#: Longest period, in days (as for intervals).
MAX_DAYS = 366
DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_LONG_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_FORM = re.compile(r"(?P<n>\d{1,3})d(?:\s+on\s+(?P<day>[a-z]{3}))?\s+at\s+"
                   r"(?P<times>\d{1,2}:\d{2}(?::\d{2})?(?:,\d{1,2}:\d{2}(?::\d{2})?)*)"
                   r"(?:\s+from\s+(?P<start>\d{4}-\d{2}-\d{2}))?",
                   re.IGNORECASE)


@dataclass(frozen=True)
class DayPeriod:
    """Every ``days`` days at ``times`` (local, ascending), on ``weekday`` (0 = Monday) when
    given - then ``days`` is a multiple of 7."""

    days: int
    times: tuple[time, ...]
    weekday: int | None = None
    #: the series' first day when the schedule names it (``from 2026-03-03``); else the first
    #: day is found from the anchor (:func:`first_day`)
    start: date | None = None

    @property
    def canonical(self) -> str:
        """``"3d at 09:00"`` / ``"14d on tue at 09:00,17:30 from 2026-03-03"`` (after
        ``@every``)."""
        on = f" on {DAY_NAMES[self.weekday]}" if self.weekday is not None else ""
        start = f" from {self.start.isoformat()}" if self.start is not None else ""
        return f"{self.days}d{on} at " + ",".join(_clock(t) for t in self.times) + start


def is_day_period(body: str) -> bool:
    """Whether the body of ``@every`` is a calendar period (it has ``at``)."""
    return re.search(r"\sat\s", f" {body} ", re.IGNORECASE) is not None


def parse_day_period(body: str) -> DayPeriod:
    """Parse ``3d at 09:00``, ``14d on tue at 09:00,17:30``, ``3d at 09:00 from 2026-03-21``
    (the series' first day named: the schedule then fires the same whatever its anchor - what
    an export writes, docs/schedules.md, *Calendar periods*).

    Raises:
        InvalidSchedule: malformed, a period of 0 or more than 366 days, a weekday with a
            period that is not whole weeks, an impossible or repeated time.
    """
    match = _FORM.fullmatch(body.strip())
    if not match:
        raise InvalidSchedule(
            f"'@every {body}' is not a calendar period: write '@every <N>d at HH:MM[,HH:MM…]' "
            "or '@every <7N>d on <mon…sun> at HH:MM' (an interval has no 'at': '@every 3d')")
    days = int(match["n"])
    if not 1 <= days <= MAX_DAYS:
        raise InvalidSchedule(f"a calendar period is 1 to {MAX_DAYS} days, got {days}")
    weekday = None
    if match["day"] is not None:
        if match["day"].lower() not in DAY_NAMES:
            raise InvalidSchedule(f"'{match['day']}' is not a weekday (mon, tue … sun)")
        weekday = DAY_NAMES.index(match["day"].lower())
        if days % 7:
            raise InvalidSchedule(f"a weekday needs a period of whole weeks (7, 14 … days), "
                                  f"got {days} days")
    times = []
    for text in match["times"].split(","):
        parts = [int(p) for p in text.split(":")]
        hour, minute, second = parts[0], parts[1], parts[2] if len(parts) > 2 else 0
        if hour > 23 or minute > 59 or second > 59:
            raise InvalidSchedule(f"time of day {text} does not exist")
        times.append(time(hour, minute, second))
    if len(set(times)) != len(times) or times != sorted(times):
        raise InvalidSchedule("the times of a calendar period must be ascending and distinct")
    start = None
    if match["start"] is not None:
        try:
            start = date.fromisoformat(match["start"])
        except ValueError:
            raise InvalidSchedule(f"'from {match['start']}' is not a date") from None
        if weekday is not None and start.weekday() != weekday:
            raise InvalidSchedule(f"'from {match['start']}' is a {_LONG_NAMES[start.weekday()]}"
                                  f", not a {_LONG_NAMES[weekday]}")
        if not 1971 <= start.year <= 2399:
            raise InvalidSchedule(f"'from {match['start']}' is out of range")
    return DayPeriod(days, tuple(times), weekday, start)


def first_day(period: DayPeriod, zone: zoneinfo.ZoneInfo, anchor: datetime) -> date:
    """The first day of the series: the one the schedule names (``from``), else on or after
    the anchor's local date (on the weekday, if any), with a fire after the anchor."""
    if period.start is not None:
        return period.start
    day = anchor.astimezone(zone).date()
    while True:
        if (period.weekday is None or day.weekday() == period.weekday) \
                and any(_instant(day, t, zone)[0] > anchor for t in period.times):
            return day
        day += timedelta(days=1)


def day_period_fires(period: DayPeriod, zone: zoneinfo.ZoneInfo, anchor: datetime,
                     after: datetime) -> Iterator[Fire]:
    """Fires strictly after UTC ``after`` (and after the anchor), ascending."""
    start = first_day(period, zone, anchor)
    if period.start is not None:
        anchor = after  # the series is named: the anchor plays no part
    after_day = after.astimezone(zone).date()
    k = max(0, (after_day - start).days // period.days - 1)
    end = start.replace(year=min(start.year + SEARCH_YEARS, 2399))
    last = None
    while (day := start + timedelta(days=k * period.days)) <= end:
        for t in period.times:
            at, dst = _instant(day, t, zone)
            if at > after and at > anchor and at != last:
                last = at
                yield make_fire(at, zone, dst)
        k += 1


def _instant(day: date, t: time, zone: zoneinfo.ZoneInfo) -> tuple[datetime, str | None]:
    """The UTC instant of local ``day`` ``t``: a gap moves it to the gap's end, a fold takes
    the first occurrence (Vixie cron's fixed-time rule)."""
    wall = datetime.combine(day, t)
    transition = transition_at(zone, wall)
    if transition is None:
        return wall.replace(tzinfo=zone).astimezone(UTC), None
    if transition.is_gap:
        return transition.at, "gap"
    return wall.replace(tzinfo=zone, fold=0).astimezone(UTC), "fold"


def describe_day_period(period: DayPeriod, zone: zoneinfo.ZoneInfo, anchor: datetime) -> str:
    """``"At 09:00, every 3 days from Tuesday 2026-03-03"``."""
    start = first_day(period, zone, anchor)
    times = [_clock(t) for t in period.times]
    at = times[0] if len(times) == 1 else ", ".join(times[:-1]) + " and " + times[-1]
    if period.weekday is not None:
        weeks = period.days // 7
        every = f"every {weeks} weeks on {_LONG_NAMES[period.weekday]}" if weeks > 1 \
            else f"every {_LONG_NAMES[period.weekday]}"
    else:
        every = f"every {period.days} days" if period.days > 1 else "every day"
    return f"At {at}, {every} from {_LONG_NAMES[start.weekday()]} {start.isoformat()}"


def _clock(t: time) -> str:
    return t.strftime("%H:%M:%S" if t.second else "%H:%M")
