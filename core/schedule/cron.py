"""Cron evaluation: croniter searches naive wall-clock slots, we map them to UTC (zone first).

croniter is only asked one question: "the next naive local slot strictly after this naive local
time", for canonical expressions produced by :meth:`CronSpec.croniter_expressions`. It never sees
a time zone, so none of its DST code runs. Every slot it returns is re-checked against
:meth:`CronSpec.matches`; a slot that fails is skipped (today only ``NW`` past the month's end,
which croniter clamps). The DST rules are then applied here, per slot:

* slot exists once: fire at it.
* slot in a spring-forward gap: a fixed-time job (minute and hour fields not starting with ``*``)
  fires once at the end of the gap, and every other slot of that gap collapses onto the same
  instant; a wildcard job skips the slot.
* slot in a fall-back fold: a fixed-time job fires at the first occurrence only; a wildcard job
  fires at both, in real-time order (all first occurrences of the fold, then all second ones).

This is Vixie cron's DST rule (cron.c, "time warp" handling; kept by cronie).
"""

from __future__ import annotations

import functools
import threading
import zoneinfo
from collections.abc import Iterator
from datetime import UTC, datetime, time, timedelta

from croniter import CroniterBadDateError, croniter

from core.schedule.fields import CronSpec
from core.schedule.model import SEARCH_YEARS, Fire
from core.schedule.zones import Transition, make_fire, transition_at

_TICK = timedelta(microseconds=1)
#: Consecutive croniter answers that may fail our own field check before we give up. At most
#: one per month and ``W`` entry is expected (``31W`` clamped in 30-day months, and a rejected
#: day is skipped whole), so this is generous and still bounded.
_MAX_REJECTED = 1000


class CronEngineError(RuntimeError):
    """croniter kept returning slots that do not match the expression (a bug, not bad input)."""


class Slots:
    """Naive local slots of a :class:`CronSpec`, in ascending order, searched with croniter.

    Each expression from :meth:`CronSpec.croniter_expressions` is one croniter stream; the slot
    after ``t`` is the smallest answer over the streams. Not thread-safe (croniter objects keep
    state); :func:`shared_slots` hands out one per spec for the event-loop thread.
    """

    def __init__(self, spec: CronSpec) -> None:
        self._spec = spec
        self._resolution = timedelta(seconds=1 if spec.has_seconds else 60)
        self._streams = [
            croniter(
                expression,
                datetime(2000, 1, 1),
                ret_type=datetime,
                day_or=False,
                second_at_beginning=spec.has_seconds,
                max_years_between_matches=SEARCH_YEARS,
            )
            for expression in spec.croniter_expressions()
        ]
        # Per stream, (searched_from, answer): reused while searched_from <= start < answer.
        self._memo: list[tuple[datetime, datetime | None] | None] = [None] * len(self._streams)

    def after(self, wall: datetime, limit: datetime) -> datetime | None:
        """Smallest slot strictly after naive ``wall``; None if there is none up to ``limit``.

        ``wall`` may carry microseconds: it is floored to the field resolution (second or
        minute) first, which keeps "strictly after" exact and keeps croniter's float timestamps
        away from sub-second values.
        """
        start = _floor(wall, self._resolution)
        for _ in range(_MAX_REJECTED):
            answers = [a for i in range(len(self._streams)) if (a := self._next(i, start))]
            slot = min(answers, default=None)
            if slot is None or slot > limit:
                return None
            if self._spec.matches(slot):
                return slot
            # A rejected day (croniter's clamped ``NW``) is skipped whole, so a per-minute rule
            # costs one rejection per such month rather than one per minute of the day.
            day_rejected = not self._spec.matches_day(slot.date())
            start = datetime.combine(slot.date(), time(23, 59, 59)) if day_rejected else slot
        raise CronEngineError(f"croniter disagrees with {self._spec.text!r} after {wall}")

    def _next(self, index: int, start: datetime) -> datetime | None:
        memo = self._memo[index]
        if memo is not None and memo[0] <= start and (memo[1] is None or start < memo[1]):
            return memo[1]
        answer: datetime | None
        try:
            answer = self._streams[index].get_next(start_time=start)  # a datetime: start's type
        except CroniterBadDateError:  # nothing within SEARCH_YEARS
            answer = None
        self._memo[index] = (start, answer)
        return answer


def cron_fires(spec: CronSpec, zone: zoneinfo.ZoneInfo, after: datetime) -> Iterator[Fire]:
    """Fires of ``spec`` in ``zone`` strictly after UTC ``after``, ascending, without duplicates.

    The iterator ends after :data:`SEARCH_YEARS` years without a slot. Every step is bounded:
    a step costs one slot search per stream, and gaps are skipped in one step.
    """
    last = None
    for fire in _walk(spec, zone, after):
        if fire.at != last:  # several gap slots collapse onto the gap's end
            last = fire.at
            yield fire


@functools.lru_cache(maxsize=4096)
def shared_slots(spec: CronSpec) -> Slots:
    """One :class:`Slots` per spec, reused across evaluations.

    Building croniter objects costs far more than a search, and the scheduler evaluates the
    same few specs for thousands of jobs. Reuse is safe within one thread: every search passes
    its own start instant and the memo is only trusted for starts inside its range. Searches
    never yield to the event loop mid-way, so coroutines cannot interleave inside one.
    """
    return Slots(spec)


def _walk(spec: CronSpec, zone: zoneinfo.ZoneInfo, after: datetime) -> Iterator[Fire]:
    slots = shared_slots(spec) if threading.current_thread() is threading.main_thread() \
        else Slots(spec)
    local = after.astimezone(zone)
    cursor = local.replace(tzinfo=None, fold=0)
    horizon = datetime(cursor.year + SEARCH_YEARS, 12, 31, 23, 59, 59)
    here = transition_at(zone, cursor)
    if here is not None:  # ``after`` is inside a fold (a real instant is never inside a gap)
        yield from _through_fold(spec, zone, slots, here, cursor, first_pass=local.fold == 0)
        cursor = here.wall_end - _TICK
    while (slot := slots.after(cursor, horizon)) is not None:
        transition = transition_at(zone, slot)
        if transition is None:
            yield make_fire(slot.replace(tzinfo=zone).astimezone(UTC), zone)
            cursor = slot
        elif transition.is_gap:
            if spec.is_fixed_time:
                yield make_fire(transition.at, zone, "gap")
            # Skip the rest of the gap at once: fixed slots there collapse onto the same
            # instant and wildcard slots there do not exist.
            cursor = transition.wall_end - _TICK
        else:
            yield from _through_fold(spec, zone, slots, transition, slot - _TICK, first_pass=True)
            cursor = transition.wall_end - _TICK


def _through_fold(
    spec: CronSpec,
    zone: zoneinfo.ZoneInfo,
    slots: Slots,
    fold: Transition,
    start: datetime,
    *,
    first_pass: bool,
) -> Iterator[Fire]:
    """Fires of the slots of one fold after naive ``start``, in real-time order.

    First pass (offset before the change): every slot, fixed-time or wildcard. Second pass
    (offset after): wildcard jobs only, from the fold's first wall time - or from ``start``
    when ``after`` itself fell in the second pass.
    """
    last_wall = fold.wall_end - _TICK
    if first_pass:
        while (slot := slots.after(start, last_wall)) is not None:
            yield make_fire((slot - fold.before).replace(tzinfo=UTC), zone, "fold")
            start = slot
        start = fold.wall_start - _TICK
    if spec.is_fixed_time:
        return
    while (slot := slots.after(start, last_wall)) is not None:
        yield make_fire((slot - fold.after).replace(tzinfo=UTC), zone, "fold")
        start = slot


def _floor(wall: datetime, resolution: timedelta) -> datetime:
    if resolution == timedelta(seconds=1):
        return wall.replace(microsecond=0)
    return wall.replace(second=0, microsecond=0)
