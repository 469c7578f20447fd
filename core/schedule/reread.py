"""Stored words read again by the reader in force (docs/schedules.md, *When the reading of
stored words changes*).

A job or monitor written in words stores the canonical schedule it was read as
(``schedule``) beside the words (``schedule_text``). When the readers change - a string that is
now a systemd calendar event, a phrase whose reading was corrected or that is now refused -
the stored words may no longer mean the stored schedule. Nothing changes meaning silently:
the stored schedule keeps firing exactly as before, and the words, which no longer describe
it, are removed by an event that says what they read as now (migrations 0019 on).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from core.schedule import InvalidSchedule, Schedule, parse_schedule

#: Fires compared from each start.
_COMPARED = 200


@dataclass(frozen=True)
class Reread:
    """Stored words that no longer mean the stored schedule.

    Attributes:
        text: the stored words.
        schedule: the stored schedule, which is kept.
        reads_as: what the words read as now (a schedule string), or None when refused.
        reason: one sentence for the event and the user: what the words mean now, what is
            kept.
    """

    text: str
    schedule: str
    reads_as: str | None
    reason: str

    def as_data(self) -> dict[str, str | None]:
        """The ``reread`` object of the event's data."""
        return {"schedule_text": self.text, "schedule": self.schedule,
                "reads_as": self.reads_as, "reason": self.reason}


def reread(text: str, schedule: str, timezone: str, anchor: datetime,
           now: datetime) -> Reread | None:
    """``None`` when ``text`` still means ``schedule`` (same string, or the same fires from
    ``now`` and from the DST seasons of this year and the next); else the :class:`Reread`.

    A stored schedule that no longer evaluates is left to the broken-definition handling
    (docs/api.md, ``broken_reason``): ``None``.
    """
    try:
        stored = parse_schedule(schedule, timezone, anchor=anchor)
    except (InvalidSchedule, ValueError):
        return None
    kept = f"the schedule keeps firing as {schedule!r} ({stored.describe()}) and the words " \
           "were removed"
    try:
        current = parse_schedule(text, timezone, anchor=anchor)
    except InvalidSchedule as exc:
        return Reread(text, schedule, None, f"{text!r} is no longer accepted ({exc}); {kept}")
    if current.expression == schedule or _same_fires(stored, current, now):
        return None
    return Reread(text, schedule, current.expression,
                  f"{text!r} now reads as {current.expression!r} ({current.describe()}); "
                  f"{kept}")


def _same_fires(a: Schedule, b: Schedule, now: datetime) -> bool:
    """The same fires from ``now``, from the turn of the year and from two days before each
    change of offset of the zone in the next two years (where the DST rules of the grammars
    differ)."""
    zone = ZoneInfo(a.timezone)
    starts = [now, datetime(now.year + 1, 1, 1, tzinfo=UTC)]
    day = now
    for _ in range(2 * 366):
        nxt = day + timedelta(days=1)
        if day.astimezone(zone).utcoffset() != nxt.astimezone(zone).utcoffset():
            starts.append(day - timedelta(days=1))
        day = nxt
    for start in starts:
        fires_a = [f.at for f in itertools.islice(a._fires(start), _COMPARED)]
        fires_b = [f.at for f in itertools.islice(b._fires(start), _COMPARED)]
        if fires_a != fires_b:
            return False
    return True
