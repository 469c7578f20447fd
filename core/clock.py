"""The injected clock: every decision takes ``now`` from here, never from ``datetime.now``.

Services read the clock once per operation (healthchecks' ``frozen_now``) and pass the value
to SQL as ``%(now)s``, so tests pin time for both Python and the database without sleeping.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """Source of the current instant (tz-aware, UTC)."""

    def now(self) -> datetime: ...


class SystemClock:
    """The real wall clock, in UTC."""

    def now(self) -> datetime:
        return datetime.now(UTC)


class FrozenClock:
    """A clock for tests: stands still until moved with :meth:`advance` or :meth:`set`."""

    def __init__(self, at: datetime) -> None:
        self._at = at

    def now(self) -> datetime:
        return self._at

    def set(self, at: datetime) -> None:
        self._at = at

    def advance(self, seconds: float) -> datetime:
        self._at += timedelta(seconds=seconds)
        return self._at


Instant = datetime | Clock
"""A fixed instant, or a clock to read when the decision is taken (see :func:`read_now`)."""


def read_now(at: Instant) -> datetime:
    """The decision instant: ``at`` itself when it is a datetime, else ``at.now()`` read now.

    Services pass their clock (not ``clock.now()``) to functions that first wait for a pool
    connection and then decide with the instant; those call this *after* the connection is
    obtained, so a wait for the pool (a database outage) never makes them claim, lease or
    measure lateness with an instant from before the wait (docs/operations.md, "Database
    outages").
    """
    return at if isinstance(at, datetime) else at.now()


def utc(dt: datetime) -> datetime:
    """Return ``dt`` converted to UTC.

    Raises:
        ValueError: when ``dt`` is naive (has no offset).
    """
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError("a timezone-aware instant is required")
    return dt.astimezone(UTC)


def rfc3339(dt: datetime | None) -> str | None:
    """Format an instant as RFC 3339 UTC with a ``Z`` suffix (microseconds kept when non-zero)."""
    if dt is None:
        return None
    return utc(dt).isoformat().replace("+00:00", "Z")
