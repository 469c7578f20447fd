"""``GET /v1/schedules/preview``: the next fire instants of a schedule, with DST flags."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from litestar import get
from litestar.params import FromQuery, QueryParameter
from msgspec import Struct

from api.deps import ActorDep, ClockDep
from core.clock import utc
from core.errors import invalid
from core.jobs.definition import valid_zone
from core.schedule import InvalidSchedule, parse_schedule


class PreviewFire(Struct):
    at: datetime
    local: str
    dst: str | None


class Preview(Struct):
    schedule: str
    timezone: str
    description: str
    fires: list[PreviewFire]


def _instant(text: str | None, now: datetime) -> datetime:
    if not text:
        return now
    try:
        return utc(datetime.fromisoformat(text.replace("Z", "+00:00").replace(" ", "+")))
    except ValueError:
        raise invalid("after", "must be an RFC 3339 instant with an offset, "
                               "e.g. 2026-12-01T09:00:00Z") from None


@get("/v1/schedules/preview", tags=["schedules"],
     summary="Next fire instants of a schedule, with local times and DST flags")
async def preview(
    actor: ActorDep, clock: ClockDep,
    schedule: FromQuery[str],
    timezone: FromQuery[str] = "UTC",
    after: Annotated[str | None, QueryParameter(
        format="date-time", description="RFC 3339 instant to start after (default: now)")] = None,
    count: Annotated[int, QueryParameter(ge=1, le=100)] = 10,
) -> Preview:
    """Intervals are anchored at the current instant, as for a job created now."""
    now = clock.now()
    start = _instant(after, now)
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
