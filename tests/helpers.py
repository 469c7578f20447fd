"""Shared test helpers: a worker on a frozen clock, job creation, run queries."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import datetime
from typing import Any

from psycopg_pool import AsyncConnectionPool

from core.actor import Actor
from core.apikeys import create_api_key
from core.clock import Clock
from core.config import Settings
from core.crypto import KeyRing
from core.executor import Executor, make_client
from core.jobs.commands import create_job
from core.worker import Worker


async def new_actor(pool: AsyncConnectionPool) -> Actor:
    _, record = await create_api_key(pool, f"team-{uuid.uuid4().hex[:8]}")
    return Actor(team_id=record["team_id"], key_id=record["id"])


def make_worker(pool: AsyncConnectionPool, dsn: str, settings: Settings, clock: Clock,
                worker_id: str = "test-worker") -> Worker:
    """A worker on ``clock``; close ``worker.executor.client`` when done."""
    settings = replace(settings, worker_id=worker_id)
    client = make_client(50, block_private_targets=settings.block_private_targets)
    keyring = KeyRing.from_sources(settings.secret_key, settings.secret_key_file)
    executor = Executor(client, clock, settings.response_body_limit, keyring)
    return Worker(pool, dsn, settings, executor, clock)


async def add_job(pool: AsyncConnectionPool, actor: Actor, now: datetime, url: str,
                  schedule: str = "* * * * *", **fields: Any) -> uuid.UUID:
    body = {"name": fields.pop("name", "job"), "schedule": schedule,
            "request": {"url": url, **fields.pop("request", {})}, **fields}
    return await create_job(pool, actor, body, now)


async def runs_of(pool: AsyncConnectionPool, job_id: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT * FROM runs WHERE job_id = %s ORDER BY scheduled_for, created_at", (job_id,))
        return await cur.fetchall()


async def due_at(pool: AsyncConnectionPool, job_id: uuid.UUID) -> datetime | None:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT due_at FROM due_jobs WHERE job_id = %s", (job_id,))
        row = await cur.fetchone()
    return row["due_at"] if row else None


async def run_events(pool: AsyncConnectionPool, run_id: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT * FROM events WHERE stream_id = %s ORDER BY stream_version", (run_id,))
        return await cur.fetchall()
