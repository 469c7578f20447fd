"""``GET /v1/schedules/preview`` and ``POST /v1/schedules/parse``: what a schedule reads as
and its next fire instants, with DST flags."""

from __future__ import annotations

import uuid
from typing import Annotated

from litestar import get, post
from litestar.params import JSONBody, QueryParameter

from api.deps import ActorDep, ClockDep, instant_parameter, parse_instant
from api.schemas.common import (
    SCHEDULE_DOC,
    SCHEDULE_FORMAT,
    SPREAD_PATTERN,
    ZONE_FORMAT,
)
from api.schemas.schedules import Parsed, ParseRequest, Preview, PreviewFire
from core.errors import invalid
from core.jobs.definition import DEFAULTS
from core.schedule.preview import Preview as Found
from core.schedule.preview import preview_schedule
from core.schedule.spread import MAX_SPREAD_SECONDS
from core.schedule.words import parse_phrase


def _fires(found: Found) -> list[PreviewFire]:
    return [PreviewFire(at=found.fire_at(f) or f.at, local=f.local.isoformat(), dst=f.dst,
                        slot=f.at if found.spread else None, window_end=found.window_end(f))
            for f in found.fires]


@get("/v1/schedules/preview", tags=["schedules"],
     summary="Next fire instants of a schedule, with local times and DST flags")
async def preview(
    actor: ActorDep, clock: ClockDep,
    schedule: Annotated[str, QueryParameter(
        min_length=1, format=SCHEDULE_FORMAT,
        description=f"{SCHEDULE_DOC} (format {SCHEDULE_FORMAT})")],
    timezone: Annotated[str, QueryParameter(
        format=ZONE_FORMAT,
        description=f"an IANA time zone of the server's database (format {ZONE_FORMAT})"
    )] = DEFAULTS["timezone"],
    after: Annotated[str | None, instant_parameter(
        "RFC 3339 instant to start after (default: now)")] = None,
    count: Annotated[int, QueryParameter(ge=1, le=100)] = 10,
    spread: Annotated[str | None, QueryParameter(
        pattern=SPREAD_PATTERN,
        description=f"a job's spread: seconds, or a duration such as 90s, 15m, 1h (0 to "
                    f"{MAX_SPREAD_SECONDS} seconds, at most the schedule's shortest interval "
                    f"between slots); needs job_id, whose offset it applies "
                    f"(docs/schedules.md, Spread)")] = None,
    job_id: Annotated[uuid.UUID | None, QueryParameter(
        description="the job the spread is for: its offset comes from its id (no lookup: "
                    "any id previews the fires such a job would have)")] = None,
) -> Preview:
    """Intervals are anchored at the current instant, as for a job created now. A schedule in
    words is answered in its canonical form, the words as ``schedule_text``. With ``spread``
    and ``job_id``, each fire's ``at`` is its fire time (``slot`` plus the job's offset) and
    ``window_end`` the end of its slot's window."""
    now = clock.now()
    if spread is not None and job_id is None:
        raise invalid("job_id", "is required with spread: the offset comes from the job's id")
    found = preview_schedule(schedule, timezone, now, start=parse_instant("after", after) or now,
                             count=count, job_id=job_id,
                             spread=int(spread) if spread and spread.isdigit() else spread)
    return Preview(
        schedule=found.expression, timezone=found.timezone, description=found.description,
        fires=_fires(found), schedule_text=found.text, spread=found.spread,
        spread_offset_seconds=found.offset if found.spread else None,
    )


@post("/v1/schedules/parse", tags=["schedules"], status_code=200,
      summary="Read a schedule (in English or French words, or canonical): its canonical "
              "form, description and next fires")
async def parse(actor: ActorDep, clock: ClockDep, data: JSONBody[ParseRequest]) -> Parsed:
    """Changes nothing: a form can confirm what a phrase was understood as before saving it.
    A phrase that cannot be read is a 422 naming the word (docs/schedules.md, *Schedules in
    words*)."""
    now = clock.now()
    found = preview_schedule(data.text, data.timezone, now, count=data.count, field="text")
    language = None if found.text is None else parse_phrase(found.text).language
    return Parsed(
        schedule=found.expression, schedule_text=found.text, kind=found.kind,
        language=language, timezone=found.timezone, description=found.description,
        fires=_fires(found),
    )
