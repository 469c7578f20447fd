"""Bodies of ``GET /v1/schedules/preview`` and ``POST /v1/schedules/parse``."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

from msgspec import Meta, Struct

from api.schemas.common import Schedule, Zone
from core.jobs import definition as jobdef


class PreviewFire(Struct, omit_defaults=True):
    """``at``: when it fires (the slot plus the job's spread offset, docs/schedules.md,
    *Spread*; the slot without a spread); ``local`` and ``dst``: the slot's local time and DST
    mark. With a spread only: ``slot`` (the run's ``scheduled_for``) and ``window_end`` (the
    end of the slot's window)."""

    at: datetime
    local: str
    dst: str | None
    slot: datetime | None = None
    window_end: datetime | None = None


class Preview(Struct):
    """``schedule`` is the canonical form; ``schedule_text`` the words when the schedule was
    given as a phrase, else null; ``spread`` (seconds) and ``spread_offset_seconds`` (the
    job's offset) when a spread was given, else null."""

    schedule: str
    timezone: str
    description: str
    fires: list[PreviewFire]
    schedule_text: str | None = None
    spread: int | None = None
    spread_offset_seconds: int | None = None


class ParseRequest(Struct, forbid_unknown_fields=True):
    """A schedule to read: a phrase in English or French words, or any canonical form."""

    text: Schedule
    timezone: Zone = jobdef.DEFAULTS["timezone"]
    count: Annotated[int, Meta(ge=1, le=100)] = 5


class Parsed(Struct):
    """What a schedule was read as: ``schedule`` (canonical, what a job or monitor would
    store), ``schedule_text`` (the words, null for a canonical input), ``kind`` (``cron``,
    ``interval`` or ``at``), ``language`` (``en``, ``fr``, null for a canonical input), the
    English ``description`` and the next ``fires`` from now."""

    schedule: str
    schedule_text: str | None
    kind: str
    language: str | None
    timezone: str
    description: str
    fires: list[PreviewFire]


class PeakJob(Struct):
    """A job firing in a busy second: its ``spread`` (seconds, null: none) and its offset."""

    id: uuid.UUID
    name: str
    spread: int | None
    spread_offset_seconds: int


class PeakSecond(Struct):
    """One of the busiest seconds: ``at`` (its start), ``fires`` (how many in it), ``jobs``
    (at most 100, by name) and ``more_jobs`` (how many more fire then)."""

    at: datetime
    fires: int
    jobs: list[PeakJob]
    more_jobs: int


class MovableJob(Struct):
    """A job without a spread firing in the busiest seconds: ``peak_fires``, how many of its
    fires fall in them (a spread would move them, docs/schedules.md, *Spread*)."""

    id: uuid.UUID
    name: str
    peak_fires: int


class UncountedJob(Struct):
    """A job left out of the counts, and why."""

    id: uuid.UUID
    name: str
    reason: str


class Peaks(Struct, rename={"from_": "from"}):
    """``GET /v1/schedules/peaks``: the window ``from``-``to`` (the next day), ``fires`` counted
    in it from ``jobs_counted`` jobs, the busiest ``seconds`` (most fires first, then
    earliest), ``would_move`` (at most 1000) and ``not_counted``."""

    from_: datetime
    to: datetime
    fires: int
    jobs_counted: int
    seconds: list[PeakSecond]
    would_move: list[MovableJob]
    not_counted: list[UncountedJob]
