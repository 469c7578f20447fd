"""``/v1/jobs``: create, list, read, update, delete, pause, resume, trigger, runs, events."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from litestar import Controller, delete, get, patch, post
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_202_ACCEPTED, HTTP_204_NO_CONTENT

from api.controllers.maintenance import with_maintenance
from api.deps import (
    ActorDep,
    AsOf,
    ClockDep,
    EventLimit,
    KeyRingDep,
    KeysetCursor,
    Limit,
    PoolDep,
    VersionCursor,
    parse_instant,
)
from api.pagination import (
    DEFAULT_EVENT_LIMIT,
    DEFAULT_LIMIT,
    by_position,
    check_limit,
    decode_cursor,
    decode_position_cursor,
    keyset,
    paginate,
)
from api.schemas.common import Event, EventPage, from_row, given_fields
from api.schemas.jobs import Job, JobCreate, JobPage, JobPatch
from api.schemas.runs import Run, RunPage
from core.actor import Actor
from core.db import ConnectionPool
from core.errors import invalid
from core.history.as_of import job_as_of
from core.jobs import commands
from core.jobs.queries import broken_reason, describe, get_job, job_events, list_jobs
from core.runs.queries import get_run, list_runs
from core.schedule.spread import offset_seconds


def job_view(row: dict[str, Any]) -> Job:
    """The API shape of a job row (a stored request or retry policy that is not an object,
    which only a hand edit can make, is shown as ``{"invalid": …}`` rather than failing the
    read; the worker marks such a job broken)."""
    shown = {key: row[key] if isinstance(row[key], dict) else {"invalid": row[key]}
             for key in ("request", "retry")}
    return from_row(Job, {**row, **shown, "schedule_description": describe(row),
                          "broken_reason": broken_reason(row),
                          "spread_offset_seconds": offset_seconds(row["id"],
                                                                  row.get("spread"))})


async def _job(pool: ConnectionPool, actor: Actor, job_id: uuid.UUID,
               now: datetime) -> Job:
    [view] = await with_maintenance(pool, actor, "job", [job_view(await get_job(pool, actor,
                                                                                job_id))], now)
    return view


class JobController(Controller):
    path = "/v1/jobs"
    tags = ["jobs"]

    @post("/", summary="Create a job")
    async def create(self, data: JSONBody[JobCreate], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep, keyring: KeyRingDep) -> Job:
        from msgspec import structs

        fields = structs.asdict(data)
        fields["request"] = structs.asdict(data.request)
        fields["retry"] = structs.asdict(data.retry) if data.retry else None
        fields["confirm"] = structs.asdict(data.confirm) if data.confirm else None
        job_id = await commands.create_job(pool, actor, fields, clock.now(), keyring)
        return await _job(pool, actor, job_id, clock.now())

    @get("/", summary="List jobs")
    async def list(self, actor: ActorDep, pool: PoolDep, clock: ClockDep,
                   limit: Limit = DEFAULT_LIMIT, cursor: KeysetCursor = None) -> JobPage:
        rows = await list_jobs(pool, actor, limit=check_limit(limit),
                               after=decode_cursor(cursor))
        page = paginate(JobPage, rows, limit, keyset("created_at"), job_view)
        page.items = await with_maintenance(pool, actor, "job", page.items, clock.now())
        return page

    @get("/{job_id:uuid}", summary="Read a job (as it was at ?as_of=, from its event stream)")
    async def read(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                   clock: ClockDep, as_of: AsOf = None) -> Job:
        instant = parse_instant("as_of", as_of)
        if instant is not None:
            return job_view(await job_as_of(pool, actor, job_id, instant))
        return await _job(pool, actor, job_id, clock.now())

    @patch("/{job_id:uuid}", summary="Update a job (partial)")
    async def update(self, job_id: FromPath[uuid.UUID], data: JSONBody[JobPatch], actor: ActorDep,
                     pool: PoolDep, clock: ClockDep, keyring: KeyRingDep) -> Job:
        fields = given_fields(data)
        version = fields.pop("version", None)
        if not fields:
            raise invalid("body", "give at least one field to change")
        await commands.update_job(pool, actor, job_id, fields, clock.now(), version, keyring)
        return await _job(pool, actor, job_id, clock.now())

    @delete("/{job_id:uuid}", status_code=HTTP_204_NO_CONTENT, summary="Delete a job")
    async def remove(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> None:
        await commands.delete_job(pool, actor, job_id, clock.now())

    @post("/{job_id:uuid}/pause", status_code=200, summary="Pause a job")
    async def pause(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                    clock: ClockDep) -> Job:
        await commands.set_paused(pool, actor, job_id, True, clock.now())
        return await _job(pool, actor, job_id, clock.now())

    @post("/{job_id:uuid}/resume", status_code=200, summary="Resume a job")
    async def resume(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> Job:
        await commands.set_paused(pool, actor, job_id, False, clock.now())
        return await _job(pool, actor, job_id, clock.now())

    @post("/{job_id:uuid}/trigger", status_code=HTTP_202_ACCEPTED,
          summary="Run a job now (202 with the queued run)")
    async def trigger(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                      clock: ClockDep) -> Run:
        run_id = await commands.trigger_job(pool, actor, job_id, clock.now())
        return from_row(Run, await get_run(pool, actor, run_id))

    @get("/{job_id:uuid}/runs", summary="Run history, newest slot first")
    async def runs(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                   limit: Limit = DEFAULT_LIMIT, cursor: KeysetCursor = None) -> RunPage:
        rows = await list_runs(pool, actor, job_id, limit=check_limit(limit),
                               before=decode_cursor(cursor))
        return paginate(RunPage, rows, limit, keyset("scheduled_for"), lambda r: from_row(Run, r))

    @get("/{job_id:uuid}/events", summary="The job's event stream (audit trail)")
    async def events(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     limit: EventLimit = DEFAULT_EVENT_LIMIT,
                     cursor: VersionCursor = None) -> EventPage:
        after = decode_position_cursor(cursor) or 0
        rows = await job_events(pool, actor, job_id, after_version=after, limit=limit)
        return paginate(EventPage, rows, limit, by_position("stream_version"),
                        lambda r: from_row(Event, r))
