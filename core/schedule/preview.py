"""The preview of a schedule as typed: its canonical form, English description and next fires.

One function for ``GET /v1/schedules/preview``, ``POST /v1/schedules/parse``
(:mod:`api.controllers.schedules`) and the dashboard's job form, so all say the same thing about
the same input, in words or canonical (docs/schedules.md). Intervals are anchored at ``now``, as
for a job created now.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from core.errors import FieldErrors, invalid
from core.schedule import Fire, InvalidSchedule, parse_schedule
from core.schedule.spread import describe_spread, normalize_spread, offset_seconds, spell
from core.schedule.zones import load_zone


@dataclass(frozen=True)
class Preview:
    """``expression`` (canonical), ``timezone``, ``description``, ``fires`` (UTC instants with
    their local time and DST mark, :class:`core.schedule.Fire`), ``text`` (the words the
    schedule was written in, ``None`` when it was canonical) and ``kind`` (the grammar's kind of
    schedule: cron, interval or one-shot), ``spread`` (seconds, ``None``: none) and
    ``offset`` (the job's offset in seconds; ``0`` without a spread, ``None`` with a spread
    but no job id: each slot then fires somewhere in its window). With a spread, ``fires``
    are the slots whose fire time (:meth:`fire_at`) comes after the start."""

    expression: str
    timezone: str
    description: str
    fires: list[Fire]
    text: str | None
    kind: str
    spread: int | None = None
    offset: int | None = 0

    def fire_at(self, fire: Fire) -> datetime | None:
        """When the slot ``fire`` fires (UTC): the slot plus the offset; ``None`` when the
        offset is not known."""
        return None if self.offset is None else fire.at + timedelta(seconds=self.offset)

    def window_end(self, fire: Fire) -> datetime | None:
        """The end of the slot's window (UTC), ``None`` without a spread."""
        return None if not self.spread else fire.at + timedelta(seconds=self.spread)


def preview_schedule(schedule: str, timezone: str, now: datetime, *,
                     start: datetime | None = None, count: int = 10,
                     field: str = "schedule", spread: Any = None,
                     job_id: uuid.UUID | None = None) -> Preview:
    """The next ``count`` fires of ``schedule`` in ``timezone`` strictly after ``start``
    (default ``now``), UTC. With ``spread`` (seconds or a duration, as a job's) and the
    ``job_id`` it is for, the slots whose fire time (slot + the job's offset,
    core/schedule/spread.py) comes after ``start``, and the description says the offset.

    Raises:
        InvalidInput: on ``timezone`` (not an IANA name), ``field`` (the grammar's message, or
            for words the word not understood, docs/schedules.md), ``after`` (an instant
            outside the engine's 1900-2399 range) or ``spread`` (as a job's,
            :func:`core.schedule.spread.normalize_spread`).
    """
    try:
        load_zone(timezone)
    except InvalidSchedule:
        raise invalid("timezone", f"unknown time zone {timezone[:64]!r}: use an IANA name") \
            from None
    try:
        parsed = parse_schedule(schedule, timezone, anchor=now, now=now)
    except InvalidSchedule as exc:
        raise invalid(field, str(exc)) from None
    errors = FieldErrors()
    seconds = normalize_spread(spread, parsed, now, errors)
    errors.raise_if_any()
    offset = offset_seconds(job_id, seconds) if job_id is not None else None if seconds else 0
    description = parsed.describe()
    if seconds and job_id is not None:
        description += describe_spread(job_id, seconds)
    elif seconds:
        description += f", each slot fired at a fixed offset within {spell(seconds)} after it"
    try:
        fires = parsed.fires((start or now) - timedelta(seconds=offset or 0), count)
    except ValueError as exc:
        raise invalid("after", str(exc)) from None
    return Preview(parsed.expression, parsed.timezone, description, list(fires),
                   parsed.text, parsed.kind, seconds, offset)
