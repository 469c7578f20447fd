"""``/v1/dashboard``, ``/v1/jobs/{id}/stats``, ``/v1/monitors/{id}/uptime``: the read models."""

from __future__ import annotations

import uuid
from typing import Annotated

import msgspec
from litestar import Controller, get
from litestar.params import FromPath, QueryParameter

from api.deps import ActorDep, ClockDep, ReadPoolDep, instant_parameter, parse_instant
from api.schemas.reports import Dashboard, JobStats, MonitorUptime
from core.projections import queries

Instant = Annotated[str | None, instant_parameter("RFC 3339 instant with an offset")]
From = Annotated[str | None, instant_parameter("RFC 3339 instant with an offset", name="from")]


class ReportController(Controller):
    path = "/v1"
    tags = ["reports"]

    @get("/dashboard", summary="Team summary: jobs, monitors, runs of the last 24 hours")
    async def dashboard(self, actor: ActorDep, read_pool: ReadPoolDep,
                        clock: ClockDep) -> Dashboard:
        return msgspec.convert(await queries.dashboard(read_pool, actor, clock.now()), Dashboard)

    @get("/jobs/{job_id:uuid}/stats", summary="Runs of a job per hour or day")
    async def job_stats(
        self, job_id: FromPath[uuid.UUID], actor: ActorDep, read_pool: ReadPoolDep,
        clock: ClockDep,
        from_: From = None,
        to: Instant = None,
        bucket: Annotated[str, QueryParameter(description="hour | day",
                                              enum=tuple(queries.MAX_BUCKETS))] = "hour",
    ) -> JobStats:
        stats = await queries.job_stats(
            read_pool, actor, job_id, start=parse_instant("from", from_),
            end=parse_instant("to", to), bucket=bucket, now=clock.now())
        return msgspec.convert(stats, JobStats)  # keys as in the JSON ("from")

    @get("/monitors/{monitor_id:uuid}/uptime", summary="Downtime periods and uptime of a monitor")
    async def monitor_uptime(
        self, monitor_id: FromPath[uuid.UUID], actor: ActorDep, read_pool: ReadPoolDep,
        clock: ClockDep,
        from_: From = None,
        to: Instant = None,
    ) -> MonitorUptime:
        uptime = await queries.monitor_uptime(
            read_pool, actor, monitor_id, start=parse_instant("from", from_),
            end=parse_instant("to", to), now=clock.now())
        return msgspec.convert(uptime, MonitorUptime)
