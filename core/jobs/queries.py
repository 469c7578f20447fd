"""Job reads: one job, a page of jobs, a job's event stream."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.db import ConnectionPool, fetch_team_page, fetch_team_row
from core.errors import NotFound
from core.events import read_stream
from core.queries import Q
from core.schedule import cached_schedule
from core.schedule.spread import describe_spread
from core.stored import describe_stored, job_problem


def describe(job: dict[str, Any]) -> str:
    """Human description of the job's schedule and its spread (``"At 09:00 AM, each slot fired
    7m12s after it (spread 15m)"``, :func:`core.schedule.spread.describe_spread`);
    ``"<schedule> (<zone>, no longer valid)"`` when the stored schedule does not evaluate any
    more (never raises)."""
    return describe_stored(cached_schedule, job["schedule"], job["timezone"],
                           job["anchor_at"]) + describe_spread(job["id"], job.get("spread"))


def broken_reason(job: dict[str, Any]) -> str | None:
    """Why the job does not fire: its recorded ``broken_reason``, else (an active job not yet
    seen by a worker) why its stored definition no longer evaluates, else ``None``."""
    if job["broken_reason"] is not None or job["status"] != "active":
        reason: str | None = job["broken_reason"]  # jobs.broken_reason: text, nullable
        return reason
    return job_problem(job, cached_schedule)[1]


async def get_job(pool: ConnectionPool, actor: Actor, job_id: uuid.UUID) -> dict[str, Any]:
    """One job with ``next_run_at`` (``None`` when paused or completed).

    Raises:
        NotFound: no such job for this team, or the job was deleted.
    """
    return await fetch_team_row(pool, Q["job_get"], "job", job_id, actor.team_id)


async def list_jobs(
    pool: ConnectionPool, actor: Actor, *, limit: int,
    after: tuple[datetime, uuid.UUID] | None,
) -> list[dict[str, Any]]:
    """A page of the team's jobs in creation order, after the keyset ``after``."""
    return await fetch_team_page(pool, Q["job_list"], actor.team_id, limit=limit, after=after)


async def job_choices(pool: ConnectionPool, actor: Actor, *, limit: int
                      ) -> list[dict[str, Any]]:
    """The team's first ``limit`` live jobs in creation order, ``{"id", "name"}`` only (a
    form's picker: not the whole rows of :func:`list_jobs`)."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["job_choices"], {"team_id": actor.team_id, "limit": limit})
        return await cur.fetchall()


async def job_events(
    pool: ConnectionPool, actor: Actor, job_id: uuid.UUID, *, after_version: int, limit: int
) -> list[dict[str, Any]]:
    """The job's event stream (deleted jobs included), in version order.

    Raises:
        NotFound: no such job for this team.
    """
    async with pool.connection() as conn:
        cur = await conn.execute(Q["job_exists_any"], {"id": job_id, "team_id": actor.team_id})
        if await cur.fetchone() is None:
            raise NotFound(f"job {job_id} not found")
        return await read_stream(conn, "job", job_id, actor.team_id, after_version=after_version,
                                 limit=limit)


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


async def list_jobs_filtered(
    pool: ConnectionPool, actor: Actor, *, limit: int,
    after: tuple[datetime, uuid.UUID] | None, status: str | None = None,
    name: str | None = None,
) -> list[dict[str, Any]]:
    """A page of the team's jobs in creation order after the keyset ``after`` (the
    dashboard's list): only ``status`` (``active``, ``paused``, ``completed``, or ``broken``
    for broken jobs of any state) and names containing ``name`` (case-insensitive) when given.
    Rows: ``id``, ``name``, ``schedule``, ``timezone``, ``status``, ``anchor_at``,
    ``created_at``, ``broken_at``, ``broken_reason``, ``next_run_at``."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["job_list_filtered"], {
            "team_id": actor.team_id, "limit": limit, "status": status,
            "name": _like_escape(name) if name else None,
            "after_created": after[0] if after else None,
            "after_id": after[1] if after else None})
        return await cur.fetchall()

