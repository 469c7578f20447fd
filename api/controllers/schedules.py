"""``GET /v1/schedules/preview``: the next fire instants of a schedule, with DST flags."""

from __future__ import annotations

from typing import Annotated

from litestar import get
from litestar.params import FromQuery, QueryParameter

from api.deps import ActorDep, ClockDep, instant_parameter, parse_instant
from api.schemas.schedules import Preview, PreviewFire
from core.errors import invalid
from core.jobs.definition import DEFAULTS, valid_zone
from core.schedule import InvalidSchedule, parse_schedule


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
    start = parse_instant("after", after) or now
    if not valid_zone(timezone):
        raise invalid("timezone", f"unknown time zone {timezone[:64]!r}: use an IANA name")
    try:
        parsed = parse_schedule(schedule, timezone, anchor=now, now=now)
    except InvalidSchedule as exc:
        raise invalid("schedule", str(exc)) from None
    try:
        fires = parsed.fires(start, count)
    except ValueError as exc:  # instants outside the engine's 1900-2399 range
        raise invalid("after", str(exc)) from None
    return Preview(
        schedule=parsed.expression, timezone=parsed.timezone, description=parsed.describe(),
        fires=[PreviewFire(at=f.at, local=f.local.isoformat(), dst=f.dst) for f in fires],
    )
