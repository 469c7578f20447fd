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

# The rules between ``from`` and ``to`` that JSON Schema cannot state, in words for a
# generated client's author (core/projections/queries.py: job_stats, monitor_uptime).
To = Annotated[str | None, instant_parameter(
    "the range's end (excluded; default: now): an RFC 3339 instant with an offset")]
_NOT_AFTER = ("not after `to` (equal to it: an empty range, answered empty; after it: 422 "
              "naming `from`)")
StatsFrom = Annotated[str | None, instant_parameter(
    "the range's start (default: 24 hours before `to` for hour buckets, 30 days for day "
    f"buckets), rounded down to the start of its bucket; {_NOT_AFTER}; from it to `to` at "
    f"most {queries.MAX_BUCKETS['hour']} hour buckets or {queries.MAX_BUCKETS['day']} day "
    "buckets (422 naming `from` otherwise): an RFC 3339 instant with an offset", name="from")]
UptimeFrom = Annotated[str | None, instant_parameter(
    f"the range's start (default: 30 days before `to`); {_NOT_AFTER}: an RFC 3339 instant "
    "with an offset", name="from")]


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
        from_: StatsFrom = None,
        to: To = None,
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
        from_: UptimeFrom = None,
        to: To = None,
    ) -> MonitorUptime:
        uptime = await queries.monitor_uptime(
            read_pool, actor, monitor_id, start=parse_instant("from", from_),
            end=parse_instant("to", to), now=clock.now())
        return msgspec.convert(uptime, MonitorUptime)
