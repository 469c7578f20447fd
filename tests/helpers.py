"""Shared test helpers: a worker on a frozen clock, job creation, run queries."""

from __future__ import annotations

import asyncio
import inspect
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.apikeys import create_api_key
from core.clock import Clock
from core.config import Settings
from core.crypto import KeyRing
from core.db import ConnectionPool
from core.jobs.commands import create_job
from core.runs.executor import Executor
from core.runs.worker import Worker


async def new_actor(pool: ConnectionPool) -> Actor:
    _, record = await create_api_key(pool, f"team-{uuid.uuid4().hex[:8]}")
    return Actor(team_id=record["team_id"], key_id=record["id"])


def make_worker(pool: ConnectionPool, dsn: str, settings: Settings, clock: Clock,
                worker_id: str = "test-worker") -> Worker:
    """A worker on ``clock``; close it with ``await worker.executor.aclose()`` when done."""
    settings = replace(settings, worker_id=worker_id)
    keyring = KeyRing.from_sources(settings.secret_key, settings.secret_key_file)
    executor = Executor(clock, settings.response_body_limit, keyring, max_connections=50,
                        block_private_targets=settings.block_private_targets,
                        base_url=settings.base_url)
    return Worker(pool, dsn, settings, executor, clock)


async def add_job(pool: ConnectionPool, actor: Actor, now: datetime, url: str,
                  schedule: str = "* * * * *", **fields: Any) -> uuid.UUID:
    # names are unique per team (migration 0014): the default one is made unique
    body = {"name": fields.pop("name", f"job {uuid.uuid4().hex[:8]}"), "schedule": schedule,
            "request": {"url": url, **fields.pop("request", {})}, **fields}
    return await create_job(pool, actor, body, now)


async def runs_of(pool: ConnectionPool, job_id: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT * FROM runs WHERE job_id = %s ORDER BY scheduled_for, created_at", (job_id,))
        return await cur.fetchall()


async def due_at(pool: ConnectionPool, job_id: uuid.UUID) -> datetime | None:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT due_at FROM due_jobs WHERE job_id = %s", (job_id,))
        row = await cur.fetchone()
    return row["due_at"] if row else None


async def run_events(pool: ConnectionPool, run_id: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT * FROM events WHERE stream_id = %s ORDER BY stream_version", (run_id,))
        return await cur.fetchall()


async def project_all(pool: ConnectionPool, *, positions: list[int] | None = None,
                      timeout: float = 30.0) -> None:
    """Run the asynchronous projector until every committed event (or those at ``positions``)
    is applied. Transactions of other databases in the cluster hold the projector's horizon
    back too, so this waits for them instead of assuming one pass is enough."""

    from core.clock import SystemClock
    from core.db import transaction
    from core.projections.projector import project_batch

    async with asyncio.timeout(timeout):
        while True:
            async with transaction(pool) as conn:
                applied = await project_batch(conn, SystemClock().now(), 5000)
            if applied:
                continue
            async with pool.connection() as conn:
                cur = await conn.execute(
                    "SELECT count(*) AS n FROM events e, projection_checkpoints c "
                    "WHERE c.name = 'reporting' "
                    "AND (e.tx_id, e.global_position) > (c.tx_id, c.global_position) "
                    "AND (%(positions)s::bigint[] IS NULL "
                    "     OR e.global_position = ANY(%(positions)s::bigint[]))",
                    {"positions": positions})
                if (await cur.fetchone())["n"] == 0:
                    return
            await asyncio.sleep(0.05)


class MonitorStream:
    """Appends events to one monitor stream (the monitors table is not needed by read models)."""

    def __init__(self, team_id: uuid.UUID, monitor_id: uuid.UUID | None = None) -> None:
        self.team_id, self.id, self.version = team_id, monitor_id or uuid.uuid4(), 0

    def events(self, at: datetime, *changes: tuple[str, dict[str, Any]]) -> list[Any]:
        from core.events import stream_events

        events = stream_events("monitor", self.id, self.team_id, self.version, at, list(changes),
                               {"actor": "test"})
        self.version += len(changes)
        return events

    async def append(self, pool: ConnectionPool, at: datetime,
                     *changes: tuple[str, dict[str, Any]]) -> None:
        from core.db import transaction
        from core.events import append_events

        async with transaction(pool) as conn:
            await append_events(conn, self.events(at, *changes))


async def eventually(predicate: Callable[[], Any | Awaitable[Any]], timeout: float = 20.0,
                     interval: float = 0.05, what: str | None = None) -> Any:
    """Poll ``predicate`` (plain or async) every ``interval`` s until it returns a truthy value,
    and return that value; fail the test, naming ``what``, if ``timeout`` s pass first.

    The one way the suite waits for something to happen (instead of a bare sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() >= deadline:
            name = what or getattr(predicate, "__qualname__", repr(predicate))
            raise AssertionError(f"not true after {timeout:g} s: {name}")
        await asyncio.sleep(interval)


def signal_on(obj: object, method: str, after: asyncio.Event | None = None) -> asyncio.Event:
    """An event set when ``obj.method`` is called (the original still runs), counting only
    calls made once ``after`` is set: a service's own signals, e.g. ``signal_on(service,
    "on_listening")`` (its LISTEN is up, core/services/listen.py) and ``signal_on(service,
    "sleep_until", after=listened)`` (a pass begun after that is done and it is going to
    sleep)."""
    event = asyncio.Event()
    original = getattr(obj, method)

    def mark() -> None:
        if after is None or after.is_set():
            event.set()

    if inspect.iscoroutinefunction(original):
        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            mark()
            return await original(*args, **kwargs)
    else:
        def wrapped(*args: Any, **kwargs: Any) -> Any:  # type: ignore[misc]
            result = original(*args, **kwargs)
            mark()
            return result
    setattr(obj, method, wrapped)
    return event
