"""Time zones: loading IANA zones and locating DST gaps and folds around a wall-clock time.

Everything works on the zone's own data through :mod:`zoneinfo` (PEP 495 ``fold`` semantics);
transition instants are found by bisection over whole seconds, so they are exact for every zone
in tzdata - 30-minute shifts (Australia/Lord_Howe), midnight gaps (Africa/Cairo) and one-off
jumps alike - and cost at most ~20 offset look-ups.
"""

from __future__ import annotations

import math
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from core.schedule.model import Fire, InvalidSchedule

_MAX_ZONE_NAME = 64


#: Names tzdata ships that are not zones of a place: ``localtime`` is whatever zone the
#: machine is set to (it would change with the machine), ``Factory`` and ``posixrules`` are
#: placeholders. Refused, naming why.
NOT_ZONES = {"localtime": "the zone of whatever machine reads it",
             "Factory": "a placeholder of tzdata", "posixrules": "a placeholder of tzdata"}


@lru_cache(maxsize=1)
def _known_zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones()) - NOT_ZONES.keys()


def load_zone(name: str) -> zoneinfo.ZoneInfo:
    """Return the IANA zone called ``name`` (exact, case-sensitive, e.g. ``"Europe/Paris"``).

    Raises:
        InvalidSchedule: ``name`` is not a string or not a zone known to tzdata, e.g.
            ``"unknown time zone 'Mars/Base'"``.
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidSchedule("time zone must be an IANA name such as 'Europe/Paris'")
    if name in NOT_ZONES:
        raise InvalidSchedule(f"{name!r} is not a time zone but {NOT_ZONES[name]}: give an "
                              "IANA name such as 'Europe/Paris'")
    if len(name) > _MAX_ZONE_NAME or name not in _known_zones():
        shown = name if len(name) <= _MAX_ZONE_NAME else name[:_MAX_ZONE_NAME] + "..."
        raise InvalidSchedule(f"unknown time zone {shown!r}")
    return zoneinfo.ZoneInfo(name)


def valid_zone(name: Any) -> bool:
    """Whether ``name`` is an IANA time zone the schedule engine accepts."""
    try:
        load_zone(name)
    except InvalidSchedule:
        return False
    return True


@dataclass(frozen=True)
class Transition:
    """One change of UTC offset: a gap when the offset grows, a fold when it shrinks."""

    at: datetime  # UTC instant from which ``after`` applies
    before: timedelta
    after: timedelta

    @property
    def is_gap(self) -> bool:
        return self.after > self.before

    @property
    def wall_start(self) -> datetime:
        """First naive wall time of the gap or fold."""
        return (self.at + min(self.before, self.after)).replace(tzinfo=None)

    @property
    def wall_end(self) -> datetime:
        """Naive wall time just past the gap or fold (the gap's end is ``at`` in local time)."""
        return (self.at + max(self.before, self.after)).replace(tzinfo=None)


def transition_at(zone: zoneinfo.ZoneInfo, wall: datetime) -> Transition | None:
    """The gap or fold that naive local time ``wall`` lies in, or None if it occurs exactly once.

    PEP 495: ``fold=0`` gives the offset in force before the transition and ``fold=1`` the one
    after, for gaps and folds alike; they differ only when ``wall`` is in a gap or a fold.
    """
    before = wall.replace(tzinfo=zone, fold=0).utcoffset()
    after = wall.replace(tzinfo=zone, fold=1).utcoffset()
    if before is None or after is None or before == after:  # a ZoneInfo always has offsets
        return None
    # The transition lies between the two readings of ``wall``: the one under the larger offset
    # still has ``before`` in force, the one under the smaller offset already has ``after``.
    low = _epoch_seconds(wall - max(before, after), math.floor)
    high = _epoch_seconds(wall - min(before, after), math.ceil)
    while high - low > 1:
        middle = (low + high) // 2
        if datetime.fromtimestamp(middle, zone).utcoffset() == after:
            high = middle
        else:
            low = middle
    return Transition(datetime.fromtimestamp(high, UTC), before, after)


def utc_of(zone: zoneinfo.ZoneInfo, wall: datetime, fold: int = 0) -> datetime:
    """The UTC instant of naive ``wall`` read in ``zone`` with the given PEP 495 ``fold``."""
    return wall.replace(tzinfo=zone, fold=fold).astimezone(UTC)


def make_fire(at: datetime, zone: zoneinfo.ZoneInfo, dst: str | None = None) -> Fire:
    """Build a :class:`Fire` for UTC instant ``at`` with its local time in ``zone``."""
    return Fire(at=at, local=at.astimezone(zone), dst=dst)


def _epoch_seconds(naive_utc: datetime, rounding: Callable[[float], int]) -> int:
    return rounding((naive_utc - datetime(1970, 1, 1)) / timedelta(seconds=1))
