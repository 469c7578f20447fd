"""``/v1/jobs``: create, list, read, update, delete, pause, resume, trigger, runs, events."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from litestar import Controller, delete, get, patch, post
from litestar.params import FromPath, FromQuery, JSONBody, QueryParameter
from litestar.status_codes import HTTP_202_ACCEPTED, HTTP_204_NO_CONTENT
from psycopg_pool import AsyncConnectionPool

from api.deps import ActorDep, ClockDep, KeyRingDep, Limit, PoolDep, VersionCursor
from api.pagination import (
    DEFAULT_LIMIT,
    check_limit,
    decode_cursor,
    decode_position_cursor,
    encode_cursor,
)
from api.schemas import (
    Event,
    EventPage,
    Job,
    JobCreate,
    JobPage,
    JobPatch,
    Run,
    RunPage,
    from_row,
    given_fields,
)
from core.actor import Actor
from core.errors import invalid
from core.jobs import commands
from core.jobs.queries import broken_reason, describe, get_job, job_events, list_jobs
from core.runs.queries import get_run, list_runs


def job_view(row: dict[str, Any]) -> Job:
    """The API shape of a job row (a stored request or retry policy that is not an object,
    which only a hand edit can make, is shown as ``{"invalid": …}`` rather than failing the
    read; the worker marks such a job broken)."""
    shown = {key: row[key] if isinstance(row[key], dict) else {"invalid": row[key]}
             for key in ("request", "retry")}
    return from_row(Job, {**row, **shown, "schedule_description": describe(row),
                          "broken_reason": broken_reason(row)})


async def _job(pool: AsyncConnectionPool, actor: Actor, job_id: uuid.UUID) -> Job:
    return job_view(await get_job(pool, actor, job_id))


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
        job_id = await commands.create_job(pool, actor, fields, clock.now(), keyring)
        return await _job(pool, actor, job_id)

    @get("/", summary="List jobs")
    async def list(self, actor: ActorDep, pool: PoolDep, limit: Limit = DEFAULT_LIMIT,
                   cursor: FromQuery[str | None] = None) -> JobPage:
        rows = await list_jobs(pool, actor, limit=check_limit(limit),
                               after=decode_cursor(cursor))
        next_cursor = (encode_cursor(rows[-1]["created_at"], rows[-1]["id"])
                       if len(rows) == limit else None)
        return JobPage(items=[job_view(r) for r in rows], next_cursor=next_cursor)

    @get("/{job_id:uuid}", summary="Read a job")
    async def read(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep) -> Job:
        return await _job(pool, actor, job_id)

    @patch("/{job_id:uuid}", summary="Update a job (partial)")
    async def update(self, job_id: FromPath[uuid.UUID], data: JSONBody[JobPatch], actor: ActorDep,
                     pool: PoolDep, clock: ClockDep, keyring: KeyRingDep) -> Job:
        fields = given_fields(data)
        version = fields.pop("version", None)
        if not fields:
            raise invalid("body", "give at least one field to change")
        await commands.update_job(pool, actor, job_id, fields, clock.now(), version, keyring)
        return await _job(pool, actor, job_id)

    @delete("/{job_id:uuid}", status_code=HTTP_204_NO_CONTENT, summary="Delete a job")
    async def remove(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> None:
        await commands.delete_job(pool, actor, job_id, clock.now())

    @post("/{job_id:uuid}/pause", status_code=200, summary="Pause a job")
    async def pause(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                    clock: ClockDep) -> Job:
        await commands.set_paused(pool, actor, job_id, True, clock.now())
        return await _job(pool, actor, job_id)

    @post("/{job_id:uuid}/resume", status_code=200, summary="Resume a job")
    async def resume(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     clock: ClockDep) -> Job:
        await commands.set_paused(pool, actor, job_id, False, clock.now())
        return await _job(pool, actor, job_id)

    @post("/{job_id:uuid}/trigger", status_code=HTTP_202_ACCEPTED,
          summary="Run a job now (202 with the queued run)")
    async def trigger(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                      clock: ClockDep) -> Run:
        run_id = await commands.trigger_job(pool, actor, job_id, clock.now())
        return from_row(Run, await get_run(pool, actor, run_id))

    @get("/{job_id:uuid}/runs", summary="Run history, newest slot first")
    async def runs(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                   limit: Limit = DEFAULT_LIMIT, cursor: FromQuery[str | None] = None) -> RunPage:
        rows = await list_runs(pool, actor, job_id, limit=check_limit(limit),
                               before=decode_cursor(cursor))
        next_cursor = (encode_cursor(rows[-1]["scheduled_for"], rows[-1]["id"])
                       if len(rows) == limit else None)
        return RunPage(items=[from_row(Run, r) for r in rows], next_cursor=next_cursor)

    @get("/{job_id:uuid}/events", summary="The job's event stream (audit trail)")
    async def events(self, job_id: FromPath[uuid.UUID], actor: ActorDep, pool: PoolDep,
                     limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 100,
                     cursor: VersionCursor = None) -> EventPage:
        after = decode_position_cursor(cursor) or 0
        rows = await job_events(pool, actor, job_id, after_version=after, limit=limit)
        next_cursor = str(rows[-1]["stream_version"]) if len(rows) == limit else None
        return EventPage(items=[from_row(Event, r) for r in rows], next_cursor=next_cursor)
