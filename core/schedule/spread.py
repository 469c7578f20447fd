"""A job's load spread (docs/schedules.md, *Spread*): each slot fires at a fixed offset inside
the window after it, so that many jobs on the same schedule do not all fire in the same second
(EventBridge Scheduler's flexible time windows, Kubernetes #91652, dkron #866).

The offset is a pure function of the job's id and its ``spread``: whole seconds in
``[0, spread)``, from the first 8 bytes of SHA-256 over a fixed prefix and the id's 16 bytes,
taken modulo ``spread`` (a bias of at most ``spread / 2**64``, nothing a test can see). It is
the same in every process and after every restart (not Python's salted ``hash()``), differs
from job to job, and is uniform over the window.

The slot stays the identity of a run (``runs.scheduled_for``, the uniqueness key, the run id
and its ``Idempotency-Key``); its *fire time* is slot + offset. ``due_jobs.due_at`` holds the
fire time of the pending slot, so the claim's index walks fire times; lateness, the misfire
grace, the catch-up policy and maintenance windows are all measured at the fire time. Every
reader turns a slot into its fire time with :func:`fire_time` and back with :func:`slot_of`,
and finds the next fire time with :func:`next_fire_time`.
"""

from __future__ import annotations

import functools
import hashlib
import uuid
from datetime import datetime, timedelta
from typing import Any

from core.durations import parse_duration
from core.errors import FieldErrors
from core.schedule import Schedule
from core.schedule.model import MAX_FIRES
from core.schedule.zones import load_zone

MAX_SPREAD_SECONDS = 86400
"""The widest spread, one day (EventBridge's flexible window is at most 1440 minutes)."""
GAP_DAYS = 400
"""How far ahead :func:`shortest_gap` looks: more than a year, so every DST change is seen."""
FIRST_FIRES = 300
"""Slots compared from now on: a repeating pattern shows its shortest gap within them (a
schedule of 300 slots a day is at most 5 minutes apart)."""
SPREAD_WORDS = ("must be a duration from 1 s to 1 day: seconds or a string such as '90s', "
                "'15m', '1h' (null or 0: no spread)")
"""The message of a spread that is no duration in range: a job's body and the preview's query
(api/errors.py says it for the query's pattern) alike."""
_PREFIX = b"cronledger.spread.v1:"  # changing it would move every spread job's fire times


def offset_seconds(job_id: uuid.UUID, spread: int | None) -> int:
    """The job's offset in whole seconds, ``0 <= offset < spread`` (``0`` without a spread).

    Stable across processes and restarts (SHA-256 of the id, not ``hash()``), uniform over the
    window (``tests/unit/test_spread.py`` checks both)."""
    if not spread:
        return 0
    digest = hashlib.sha256(_PREFIX + job_id.bytes).digest()
    return int.from_bytes(digest[:8], "big") % spread


def offset_of(job_id: uuid.UUID, spread: int | None) -> timedelta:
    """:func:`offset_seconds` as a ``timedelta``."""
    return timedelta(seconds=offset_seconds(job_id, spread))


def fire_time(slot: datetime, offset: timedelta) -> datetime:
    """When ``slot`` fires: the slot plus the job's offset (UTC)."""
    return slot + offset


def slot_of(fire: datetime, offset: timedelta) -> datetime:
    """The slot whose fire time is ``fire`` (UTC)."""
    return fire - offset


def next_fire_time(schedule: Schedule, after: datetime, offset: timedelta) -> datetime | None:
    """The first fire time strictly after ``after`` (UTC): the fire time of the first slot
    after ``after - offset``; ``None`` when the schedule has no more slots.

    Raises:
        ValueError: ``after`` outside the engine's range (as :meth:`Schedule.next_fire`).
    """
    slot = schedule.next_fire(after - offset)
    return None if slot is None else slot + offset


def _segments(schedule: Schedule, after: datetime) -> list[tuple[datetime, datetime]]:
    """The stretches of time whose slots :func:`shortest_gap` compares: from ``after`` on (its
    first :data:`FIRST_FIRES` slots), and from three days before to a day after each
    day whose UTC offset changed within :data:`GAP_DAYS` days, for the schedules whose local
    times are fixed (intervals and wildcard cron jobs follow elapsed time: their gaps do not
    change with DST)."""
    segments = [(after, after + timedelta(days=GAP_DAYS))]
    if schedule.kind == "interval" or (schedule.kind == "cron" and not schedule.is_fixed_time):
        return segments
    zone = load_zone(schedule.timezone)
    day = after.replace(hour=12, minute=0, second=0, microsecond=0)
    previous = day.astimezone(zone).utcoffset()
    for _ in range(GAP_DAYS):
        day += timedelta(days=1)
        offset = day.astimezone(zone).utcoffset()
        if offset != previous:
            segments.append((day - timedelta(days=3), day + timedelta(days=1)))
        previous = offset
    return segments


def shortest_gap(schedule: Schedule, after: datetime, below: int | None = None
                 ) -> float | None:
    """The shortest time in seconds between two consecutive slots after ``after``: among the
    next :data:`FIRST_FIRES` slots, and among the slots around each DST change of the next
    :data:`GAP_DAYS` days (``0 1,3 * * *`` in a zone that springs forward has a 1-hour gap
    once a year); ``None`` when no two slots come. With ``below``, stops at the first gap
    shorter than it. Cached per schedule and day (a schedule shared by many jobs is walked
    once)."""
    return _shortest_gap(schedule, after.replace(hour=0, minute=0, second=0, microsecond=0),
                         below)


@functools.lru_cache(maxsize=1024)
def _shortest_gap(schedule: Schedule, day: datetime, below: int | None) -> float | None:
    best: float | None = None
    for i, (since, until) in enumerate(_segments(schedule, day)):
        fires = schedule.fires_between(since, until, MAX_FIRES if i else FIRST_FIRES)
        for earlier, later in zip(fires, fires[1:], strict=False):
            gap = (later - earlier).total_seconds()
            best = gap if best is None else min(best, gap)
            if below is not None and best < below:
                return best
    return best


def normalize_spread(value: Any, schedule: Schedule | None, now: datetime,
                     errors: FieldErrors) -> int | None:
    """``spread`` in whole seconds: a number of seconds or ``"90s"``, ``"15m"``, ``"1h"``
    (:func:`core.durations.parse_duration`), 1 s to :data:`MAX_SPREAD_SECONDS`, and no longer
    than ``schedule``'s shortest gap between slots (:func:`shortest_gap`, from ``now``), so
    that a slot's window ends before the next slot; ``None``, ``0`` or ``"0s"``: no spread.
    Problems go to ``errors`` on ``spread``."""
    if value is None:
        return None
    seconds = parse_duration(value)
    if seconds == 0:
        return None
    if seconds is None or not 1 <= seconds <= MAX_SPREAD_SECONDS:
        errors.add("spread", SPREAD_WORDS)
        return None
    if schedule is not None:
        gap = shortest_gap(schedule, now, below=seconds)
        if gap is not None and gap < seconds:
            errors.add("spread", f"must be at most the schedule's shortest interval between "
                                 f"slots ({gap:g} s): a slot's window ends before the next "
                                 f"slot")
            return None
    return seconds


def spell(seconds: int) -> str:
    """Whole seconds in the duration grammar, largest units first: ``432`` -> ``"7m12s"``,
    ``0`` -> ``"0s"``."""
    text = ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if seconds >= size:
            text += f"{seconds // size}{unit}"
            seconds %= size
    return text or "0s"


def describe_spread(job_id: uuid.UUID, spread: int | None) -> str:
    """The spread in words, to follow a schedule's description: ``", each slot fired 7m12s
    after it (spread 15m)"``; ``""`` without a spread."""
    if not spread:
        return ""
    offset = offset_seconds(job_id, spread)
    return f", each slot fired {spell(offset)} after it (spread {spell(spread)})"
