"""Shared value types and limits of the schedule engine.

Kept apart from the parsers and the evaluators so that every module of the package can import
them without cycles.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

#: Longest schedule string accepted, in characters (after stripping). Everything downstream -
#: list sizes, number of croniter streams, validation scans - is bounded by it.
MAX_EXPRESSION_LENGTH = 200

#: Most fires one ``fires``/``fires_between`` call may return.
MAX_FIRES = 1000

#: Window, in years, scanned at parse time to prove that a cron day rule matches some date.
#: 28 years is one full cycle of leap years and weekdays in the Gregorian calendar between
#: 1901 and 2099, so a date rule that matches nothing in 28 years matches nothing ever.
VALIDATION_YEARS = 28

#: Horizon, in years, of one ``next_fire`` search; past it the answer is ``None``. Larger than
#: :data:`VALIDATION_YEARS` so that a validated rule is always found, even across 2100.
SEARCH_YEARS = 50

#: Instants outside [MIN_INSTANT, MAX_INSTANT) are rejected with ``ValueError``: far enough out
#: for any scheduler, near enough that date arithmetic plus a 50-year horizon never overflows.
MIN_INSTANT = datetime(1900, 1, 1, tzinfo=UTC)
MAX_INSTANT = datetime(2400, 1, 1, tzinfo=UTC)


class InvalidSchedule(ValueError):
    """A schedule string or time zone was rejected.

    The message says precisely what is wrong and is meant to be shown to the user as is, e.g.
    ``"day-of-month 30 never occurs in February"``, ``"unknown time zone 'Mars/Base'"`` or
    ``"interval must be positive"``. The API maps it to HTTP 422.
    """


@dataclass(frozen=True)
class Fire:
    """One fire instant of a schedule.

    Attributes:
        at: The instant, tz-aware UTC.
        local: The same instant in the schedule's zone, tz-aware with that zone's offset (and
            ``fold=1`` on the second pass through a fall-back hour).
        dst: ``"gap"`` when the slot's local time did not exist (spring forward) and the fire was
            moved to the end of the gap; ``"fold"`` when the slot's local time occurs twice (fall
            back) - a fixed-time job fires at the first occurrence only, a wildcard job at both;
            ``None`` otherwise, and always ``None`` for intervals and one-shots.
    """

    at: datetime
    local: datetime
    dst: str | None = None


def require_utc(value: datetime, name: str) -> datetime:
    """Check that ``value`` is a tz-aware datetime in the supported range and return it in UTC.

    Args:
        value: The datetime to check.
        name: Argument name used in the error message.

    Returns:
        ``value`` converted to UTC (``tzinfo=datetime.UTC``).

    Raises:
        ValueError: ``value`` is not a datetime, is naive, or lies outside
            [:data:`MIN_INSTANT`, :data:`MAX_INSTANT`).
    """
    if not isinstance(value, datetime):
        raise ValueError(f"{name} must be a datetime, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware (UTC), got naive {value.isoformat()}")
    utc = value.astimezone(UTC)
    if not MIN_INSTANT <= utc < MAX_INSTANT:
        raise ValueError(f"{name} {utc.isoformat()} is outside the supported range 1900-2399")
    return utc
