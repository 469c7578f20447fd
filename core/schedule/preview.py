"""The preview of a schedule as typed: its canonical form, English description and next fires.

One function for ``GET /v1/schedules/preview`` (:mod:`api.controllers.schedules`) and the
dashboard's job form, so both say the same thing about the same input. Intervals are anchored at
``now``, as for a job created now.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core.errors import invalid
from core.schedule import Fire, InvalidSchedule, parse_schedule
from core.schedule.zones import load_zone


@dataclass(frozen=True)
class Preview:
    """``expression`` (canonical), ``timezone``, ``description`` and ``fires`` (UTC instants with
    their local time and DST mark, :class:`core.schedule.Fire`)."""

    expression: str
    timezone: str
    description: str
    fires: list[Fire]


def preview_schedule(schedule: str, timezone: str, now: datetime, *,
                     start: datetime | None = None, count: int = 10) -> Preview:
    """The next ``count`` fires of ``schedule`` in ``timezone`` strictly after ``start``
    (default ``now``), UTC.

    Raises:
        InvalidInput: on ``timezone`` (not an IANA name), ``schedule`` (the grammar's message,
            docs/schedules.md) or ``after`` (an instant outside the engine's 1900-2399 range).
    """
    try:
        load_zone(timezone)
    except InvalidSchedule:
        raise invalid("timezone", f"unknown time zone {timezone[:64]!r}: use an IANA name") \
            from None
    try:
        parsed = parse_schedule(schedule, timezone, anchor=now, now=now)
    except InvalidSchedule as exc:
        raise invalid("schedule", str(exc)) from None
    try:
        fires = parsed.fires(start or now, count)
    except ValueError as exc:
        raise invalid("after", str(exc)) from None
    return Preview(parsed.expression, parsed.timezone, parsed.describe(), list(fires))
