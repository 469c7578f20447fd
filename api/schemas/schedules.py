"""Bodies of ``GET /v1/schedules/preview`` and ``POST /v1/schedules/parse``."""

from __future__ import annotations

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
