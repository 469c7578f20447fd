"""``/v1/dashboard``, ``/v1/jobs/{id}/stats``, ``/v1/monitors/{id}/uptime``: the read models."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Annotated

import msgspec
from litestar import Controller, get
from litestar.params import FromPath, QueryParameter

from api.deps import ActorDep, ClockDep, PoolDep
from api.schemas import Dashboard, JobStats, MonitorUptime
from core.errors import invalid
from core.projections import queries

Instant = Annotated[str | None, QueryParameter(
    description="RFC 3339 instant with an offset, e.g. 2026-11-30T00:00:00Z", format="date-time")]
From = Annotated[str | None, QueryParameter(
    name="from", description="RFC 3339 instant with an offset, e.g. 2026-11-30T00:00:00Z",
    format="date-time")]


def parse_instant(field: str, value: str | None) -> datetime | None:
    """An aware datetime from a query parameter.

    Raises:
        InvalidInput: not an RFC 3339 instant with a UTC offset.
    """
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise invalid(field, "must be an RFC 3339 instant, e.g. 2026-11-30T00:00:00Z") from None
    if parsed.tzinfo is None:
        raise invalid(field, "must include a UTC offset (Z or +hh:mm)")
    return parsed


class ReportController(Controller):
    path = "/v1"
    tags = ["reports"]

    @get("/dashboard", summary="Team summary: jobs, monitors, runs of the last 24 hours")
    async def dashboard(self, actor: ActorDep, pool: PoolDep, clock: ClockDep) -> Dashboard:
        return msgspec.convert(await queries.dashboard(pool, actor, clock.now()), Dashboard)

    @get("/jobs/{job_id:uuid}/stats", summary="Runs of a job per hour or day")
    async def job_stats(
        self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep, clock: ClockDep,
        from_: From = None,
        to: Instant = None,
        bucket: Annotated[str, QueryParameter(description="hour | day",
                                              enum=tuple(queries.MAX_BUCKETS))] = "hour",
    ) -> JobStats:
        stats = await queries.job_stats(
            pool, actor, job_id, start=parse_instant("from", from_), end=parse_instant("to", to),
            bucket=bucket, now=clock.now())
        return msgspec.convert(stats, JobStats)  # keys as in the JSON ("from")

    @get("/monitors/{monitor_id:uuid}/uptime", summary="Downtime periods and uptime of a monitor")
    async def monitor_uptime(
        self, monitor_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep, clock: ClockDep,
        from_: From = None,
        to: Instant = None,
    ) -> MonitorUptime:
        uptime = await queries.monitor_uptime(
            pool, actor, monitor_id, start=parse_instant("from", from_),
            end=parse_instant("to", to), now=clock.now())
        return msgspec.convert(uptime, MonitorUptime)
