"""Team-scoped reads of runs and their attempts (payloads: :mod:`core.runs`)."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.db import ConnectionPool
from core.errors import NotFound
from core.queries import Q


def _body_view(body: bytes | None) -> dict[str, Any]:
    if body is None:
        return {"body": None, "body_encoding": None}
    try:
        return {"body": bytes(body).decode("utf-8"), "body_encoding": "utf-8"}
    except UnicodeDecodeError:
        return {"body": base64.b64encode(bytes(body)).decode(), "body_encoding": "base64"}


async def list_runs(
    pool: ConnectionPool,
    actor: Actor,
    job_id: uuid.UUID,
    *,
    limit: int,
    before: tuple[datetime, uuid.UUID] | None,
) -> list[dict[str, Any]]:
    """Runs of one job, newest slot first, starting after the keyset ``before``.

    Raises:
        NotFound: no such job for this team (deleted jobs keep their history).
    """
    async with pool.connection() as conn:
        cur = await conn.execute(Q["job_exists_any"], {"id": job_id, "team_id": actor.team_id})
        if await cur.fetchone() is None:
            raise NotFound(f"job {job_id} not found")
        cur = await conn.execute(Q["run_list_for_job"], {
            "job_id": job_id, "team_id": actor.team_id, "limit": limit,
            "before_scheduled": before[0] if before else None,
            "before_id": before[1] if before else None,
        })
        return await cur.fetchall()


async def run_fire_at(pool: ConnectionPool, actor: Actor,
                      run_id: uuid.UUID) -> datetime | None:
    """When a run's slot was to fire (UTC) as its first event names it: the slot plus the
    job's spread offset (docs/schedules.md, *Spread*); ``None``: at the slot (no spread, or
    no such run of this team)."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["run_fire_at"], {"id": run_id, "team_id": actor.team_id})
        row = await cur.fetchone()
    return row["fire_at"] if row else None


async def run_fire_times(pool: ConnectionPool, actor: Actor,
                         runs: Sequence[Mapping[str, Any]]) -> dict[uuid.UUID, datetime]:
    """When each of ``runs`` (rows of :func:`list_runs`: ``id``, ``created_at``) was to fire
    (UTC), by run id, as :func:`run_fire_at` reads it for one run; a run missing from the
    answer fires at its slot (no spread). One statement for the page, its events bounded by
    the runs' ``created_at`` (``run_fire_times`` in core/sql/runs.sql says why)."""
    if not runs:
        return {}
    created = [r["created_at"] for r in runs]
    async with pool.connection() as conn:
        cur = await conn.execute(Q["run_fire_times"], {
            "ids": [r["id"] for r in runs], "team_id": actor.team_id,
            "from": min(created), "to": max(created)})
        rows = await cur.fetchall()
    return {row["run_id"]: row["fire_at"] for row in rows if row["fire_at"] is not None}


async def get_run(pool: ConnectionPool, actor: Actor, run_id: uuid.UUID) -> dict[str, Any]:
    """One run with every attempt's request and response (body as UTF-8 text or base64).

    Raises:
        NotFound: no such run for this team.
    """
    async with pool.connection() as conn:
        cur = await conn.execute(Q["run_get"], {"id": run_id, "team_id": actor.team_id})
        run = await cur.fetchone()
        if run is None:
            raise NotFound(f"run {run_id} not found")
        cur = await conn.execute(Q["run_attempt_list"], {"run_id": run_id})
        attempts = await cur.fetchall()
    run["attempts"] = [
        {
            "attempt": a["attempt"],
            "started_at": a["started_at"],
            "finished_at": a["finished_at"],
            "duration_ms": a["duration_ms"],
            "lateness_ms": a["lateness_ms"],
            "worker_id": a["worker_id"],
            "request": a["request"],
            "response": None if a["response_status"] is None else {
                "status": a["response_status"],
                "headers": a["response_headers"],
                "truncated": a["response_truncated"],
                **_body_view(a["response_body"]),
            },
            "error_class": a["error_class"],
            "error": a["error"],
        }
        for a in attempts
    ]
    return run


async def recent_runs(pool: ConnectionPool, actor: Actor, job_ids: list[uuid.UUID], *,
                      per_job: int = 20) -> dict[uuid.UUID, list[dict[str, Any]]]:
    """The newest ``per_job`` runs of each job (``status``, ``scheduled_for``), newest first,
    by job id (a job without runs is absent)."""
    if not job_ids:
        return {}
    async with pool.connection() as conn:
        cur = await conn.execute(Q["run_recent_for_jobs"], {
            "job_ids": job_ids, "team_id": actor.team_id, "per_job": per_job})
        rows = await cur.fetchall()
    found: dict[uuid.UUID, list[dict[str, Any]]] = {}
    for row in rows:
        found.setdefault(row["job_id"], []).append(row)
    return found
