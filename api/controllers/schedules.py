"""``GET /v1/schedules/preview`` and ``POST /v1/schedules/parse``: what a schedule reads as
and its next fire instants, with DST flags."""

from __future__ import annotations

import uuid
from typing import Annotated

from litestar import get, post
from litestar.params import JSONBody, QueryParameter

from api.deps import ActorDep, ClockDep, PoolDep, instant_parameter, is_digits, parse_instant
from api.schemas.common import (
    SCHEDULE_DOC,
    SCHEDULE_FORMAT,
    SPREAD_PATTERN,
    ZONE_FORMAT,
)
from api.schemas.schedules import (
    MovableJob,
    Parsed,
    ParseRequest,
    PeakJob,
    Peaks,
    PeakSecond,
    Preview,
    PreviewFire,
    UncountedJob,
)
from core.errors import invalid
from core.jobs import peaks as peakdef
from core.jobs.definition import DEFAULTS
from core.jobs.peaks import team_peaks
from core.schedule.model import MAX_INSTANT, MIN_INSTANT
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
        "RFC 3339 instant to start after (default: now), in the schedule engine's years "
        f"{MIN_INSTANT.year} to {MAX_INSTANT.year - 1} in UTC (422 naming `after` "
        "otherwise)")] = None,
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
                             spread=int(spread) if spread and is_digits(spread) else spread)
    return Preview(
        schedule=found.expression, timezone=found.timezone, description=found.description,
        fires=_fires(found), schedule_text=found.text, spread=found.spread,
        spread_offset_seconds=found.offset if found.spread else None,
    )


def _peak_job(job: peakdef.PeakJob) -> PeakJob:
    return PeakJob(id=job.id, name=job.name, spread=job.spread,
                   spread_offset_seconds=job.offset)


@get("/v1/schedules/peaks", tags=["schedules"],
     summary="The team's busiest seconds over the next day, and the jobs a spread would move")
async def peaks(
    actor: ActorDep, clock: ClockDep, pool: PoolDep,
    top: Annotated[int, QueryParameter(
        ge=1, le=peakdef.MAX_TOP,
        description="how many of the busiest seconds to list")] = peakdef.DEFAULT_TOP,
) -> Peaks:
    """Fires per second of the team's active jobs in the next day, each at its slot plus its
    spread offset (docs/schedules.md, *Spread*): the busiest ``top`` seconds with the jobs
    firing then, and the jobs without a spread among them. A job whose schedule has more than
    5,000 slots a day is listed in ``not_counted`` instead."""
    found = await team_peaks(pool, actor, clock.now(), top)
    return Peaks(
        from_=found.start, to=found.end, fires=found.fires, jobs_counted=found.jobs_counted,
        seconds=[PeakSecond(at=s.at, fires=s.fires, jobs=[_peak_job(j) for j in s.jobs],
                            more_jobs=s.more_jobs) for s in found.seconds],
        would_move=[MovableJob(id=j.id, name=j.name, peak_fires=n)
                    for j, n in found.would_move],
        not_counted=[UncountedJob(id=j.id, name=j.name, reason=why)
                     for j, why in found.not_counted])


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
