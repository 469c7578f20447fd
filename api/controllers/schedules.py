"""``GET /v1/schedules/preview``: the next fire instants of a schedule, with DST flags."""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.params import FromQuery, QueryParameter

from api.deps import ActorDep, ClockDep, instant_parameter, parse_instant
from api.schemas.schedules import Preview, PreviewFire
from core.jobs.definition import DEFAULTS
from core.schedule.preview import preview_schedule


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
    """Intervals are anchored at the current instant, as for a job created now."""
    now = clock.now()
    found = preview_schedule(schedule, timezone, now, start=parse_instant("after", after) or now,
                             count=count)
    return Preview(
        schedule=found.expression, timezone=found.timezone, description=found.description,
        fires=[PreviewFire(at=f.at, local=f.local.isoformat(), dst=f.dst) for f in found.fires],
    )
