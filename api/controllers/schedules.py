"""``GET /v1/schedules/preview`` and ``POST /v1/schedules/parse``: what a schedule reads as
and its next fire instants, with DST flags."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from litestar import get, post
from litestar.params import FromQuery, JSONBody, QueryParameter

from api.deps import ActorDep, ClockDep, instant_parameter, parse_instant
from api.schemas.schedules import Parsed, ParseRequest, Preview, PreviewFire
from core.errors import invalid
from core.jobs.definition import DEFAULTS, valid_zone
from core.schedule import InvalidSchedule, Schedule, parse_schedule
from core.schedule.words import parse_phrase


def _parse(field: str, schedule: str, timezone: str, now: datetime) -> Schedule:
    """Intervals are anchored at ``now``, as for a job created now."""
    if not valid_zone(timezone):
        raise invalid("timezone", f"unknown time zone {timezone[:64]!r}: use an IANA name")
    try:
        return parse_schedule(schedule, timezone, anchor=now, now=now)
    except InvalidSchedule as exc:
        raise invalid(field, str(exc)) from None


def _fires(parsed: Schedule, start: datetime, count: int) -> list[PreviewFire]:
    try:
        fires = parsed.fires(start, count)
    except ValueError as exc:  # instants outside the engine's 1900-2399 range
        raise invalid("after", str(exc)) from None
    return [PreviewFire(at=f.at, local=f.local.isoformat(), dst=f.dst) for f in fires]


@get("/v1/schedules/preview", tags=["schedules"],
     summary="Next fire instants of a schedule, with local times and DST flags")
async def preview(
    actor: ActorDep, clock: ClockDep,
    schedule: FromQuery[str],
    timezone: FromQuery[str] = DEFAULTS["timezone"],
    after: Annotated[str | None, instant_parameter(
        "RFC 3339 instant to start after (default: now)")] = None,
    count: Annotated[int, QueryParameter(ge=1, le=100)] = 10,
) -> Preview:
    """Intervals are anchored at the current instant, as for a job created now. A schedule in
    words is answered in its canonical form, the words as ``schedule_text``."""
    now = clock.now()
    start = parse_instant("after", after) or now
    parsed = _parse("schedule", schedule, timezone, now)
    return Preview(
        schedule=parsed.expression, timezone=parsed.timezone, description=parsed.describe(),
        fires=_fires(parsed, start, count), schedule_text=parsed.text,
    )


@post("/v1/schedules/parse", tags=["schedules"], status_code=200,
      summary="Read a schedule (in English or French words, or canonical): its canonical "
              "form, description and next fires")
async def parse(actor: ActorDep, clock: ClockDep, data: JSONBody[ParseRequest]) -> Parsed:
    """Changes nothing: a form can confirm what a phrase was understood as before saving it.
    A phrase that cannot be read is a 422 naming the word (docs/schedules.md, *Schedules in
    words*)."""
    now = clock.now()
    parsed = _parse("text", data.text, data.timezone, now)
    language = None if parsed.text is None else parse_phrase(parsed.text).language
    return Parsed(
        schedule=parsed.expression, schedule_text=parsed.text, kind=parsed.kind,
        language=language, timezone=parsed.timezone, description=parsed.describe(),
        fires=_fires(parsed, now, data.count),
    )
