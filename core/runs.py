"""Runs: one execution of a job for one slot (or a manual trigger), on its own ``run`` stream.

Run stream events. ``data`` always carries what the ``runs`` row needs to be rebuilt (see
:mod:`core.projections.runs`), and every event names its run's ``job_id``, ``scheduled_for`` and
``trigger`` so read models need no lookup:
    ``run.queued``           manual trigger or buffered overlap (``max_attempts``,
                             ``available_at``: ``null`` while buffered, ``reason``)
    ``run.released``         a buffered run became ready (``available_at``)
    ``run.started``          an attempt was dispatched (``attempt``, ``max_attempts``,
                             ``worker_id``; on a lease take-over ``redispatch: true``)
    ``run.retry_scheduled``  a failed attempt will be retried at ``available_at`` (attempt,
                             ``started_at``, ``duration_ms``, ``lateness_ms``, response status,
                             ``error_class``, ``error``)
    ``run.succeeded`` / ``run.failed``   final outcome: the same fields and ``finished_at``
    ``run.skipped`` / ``run.missed``     a slot that did not run: ``reason``, ``finished_at``
                                         (the first event of its stream, or a queued run
                                         cancelled because its job was deleted)
The lease (``lease_token``, ``lease_expires_at``) is deliberately not in the log: it is a
transient claim, not history.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from psycopg_pool import AsyncConnectionPool

from core.actor import Actor
from core.errors import NotFound
from core.events import NewEvent, stream_events
from core.queries import Q


def new_run_id() -> uuid.UUID:
    """A fresh run id; it is also the ``Idempotency-Key`` of every attempt of the run."""
    return uuid.uuid4()


def run_events(
    run_id: uuid.UUID,
    team_id: uuid.UUID,
    expected_version: int,
    now: datetime,
    changes: Sequence[tuple[str, dict[str, Any]]],
    metadata: dict[str, Any] | None = None,
) -> list[NewEvent]:
    """Events for one run stream, numbered after ``expected_version``."""
    return stream_events("run", run_id, team_id, expected_version, now, changes, metadata)


def _body_view(body: bytes | None) -> dict[str, Any]:
    if body is None:
        return {"body": None, "body_encoding": None}
    try:
        return {"body": bytes(body).decode("utf-8"), "body_encoding": "utf-8"}
    except UnicodeDecodeError:
        return {"body": base64.b64encode(bytes(body)).decode(), "body_encoding": "base64"}


async def list_runs(
    pool: AsyncConnectionPool,
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


async def get_run(pool: AsyncConnectionPool, actor: Actor, run_id: uuid.UUID) -> dict[str, Any]:
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
