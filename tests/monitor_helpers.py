"""Helpers for monitor tests: create monitors, ping them, run a timely checker on a frozen clock."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.db import ConnectionPool
from core.monitors.checker import Checker
from core.monitors.commands import create_monitor
from core.monitors.ping import Ping, PingPool, record_ping


async def add_monitor(pool: ConnectionPool, actor: Actor, now: datetime,
                      schedule: str = "1h", **fields: Any) -> tuple[uuid.UUID, str]:
    # names are unique per team (migration 0014): the default one is made unique
    body = {"name": fields.pop("name", f"monitor {uuid.uuid4().hex[:8]}"), "schedule": schedule,
            **fields}
    return await create_monitor(pool, actor, body, now)


async def ping(ping_pool: PingPool, token: str, now: datetime, kind: str = "success",
               **fields: Any) -> str | None:
    """Record a ping as the HTTP route would (GET unless ``method`` is given)."""
    return await record_ping(ping_pool, Ping(token=token, kind=kind,
                                             method=fields.pop("method", "GET"), **fields), now)


async def monitor_row(pool: ConnectionPool, monitor_id: uuid.UUID) -> dict[str, Any]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM monitors WHERE id = %s", (monitor_id,))
        return await cur.fetchone()


async def stream(pool: ConnectionPool, monitor_id: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT * FROM events WHERE stream_id = %s ORDER BY stream_version", (monitor_id,))
        return await cur.fetchall()


async def next_alert(pool: ConnectionPool) -> datetime | None:
    """The checker's next instant: the earliest ``alert_at``, or a down monitor's next slot
    that its failure tolerance watches (``alert_states.next_miss_at``)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT least((SELECT min(alert_at) FROM monitors), (SELECT min(next_miss_at) "
            "FROM alert_states)) AS at")
        return (await cur.fetchone())["at"]


async def advance(checker: Checker, pool: ConnectionPool, until: datetime) -> None:
    """Run ``checker`` at every ``alert_at`` up to ``until`` (inclusive): a perfectly timely
    checker, as the real one is when it sleeps until the next ``alert_at``."""
    for _ in range(1000):
        at = await next_alert(pool)
        if at is None or at > until:
            await checker.run_once(until)
            return
        await checker.run_once(at)
    raise AssertionError("alert_at did not move forward: the checker would spin")


# The columns of `monitors` that migrations after 0021 added (0022 run-time bounds, 0023
# keywords, 0027 failure tolerance). Today's commands write them, so a test that writes
# monitors at an older revision adds them first and drops them before upgrading: the rows are
# then those the older release wrote, and the upgrade adds the columns as it does in production.
LATER_MONITOR_COLUMNS = {
    "min_duration": "int", "max_duration": "int",
    "start_keywords": "text[] NOT NULL DEFAULT '{}'",
    "success_keywords": "text[] NOT NULL DEFAULT '{}'",
    "failure_keywords": "text[] NOT NULL DEFAULT '{}'",
    "alert_after_failures": "int NOT NULL DEFAULT 1",  # 0027 failure tolerance
    "recover_after_successes": "int NOT NULL DEFAULT 1",
    "depends_on": "uuid[] NOT NULL DEFAULT '{}'",  # 0031 dependencies
}


SINCE_0027 = ("alert_after_failures", "recover_after_successes", "depends_on")

# The columns of `jobs` that later migrations added (0030 alert_on, 0031 depends_on, 0033
# min_duration and max_duration, 0034 recover_after_successes), which
# today's job commands write: a test writing jobs at an older revision adds and drops them, for
# the same reason.
LATER_JOB_COLUMNS = {"alert_on": "text[] NOT NULL DEFAULT '{}'",
                     "depends_on": "uuid[] NOT NULL DEFAULT '{}'",
                     "min_duration": "int", "max_duration": "int",
                     "recover_after_successes": "int NOT NULL DEFAULT 1", "spread": "int"}


async def add_later_job_columns(pool: ConnectionPool) -> None:
    """Add LATER_JOB_COLUMNS (a test writing jobs with today's commands at an older revision)."""
    async with pool.connection() as conn:
        for name, kind in LATER_JOB_COLUMNS.items():
            await conn.execute(f"ALTER TABLE jobs ADD COLUMN {name} {kind}")


async def drop_later_job_columns(pool: ConnectionPool) -> None:
    """Drop LATER_JOB_COLUMNS again before the upgrade adds them as in production."""
    async with pool.connection() as conn:
        for name in LATER_JOB_COLUMNS:
            await conn.execute(f"ALTER TABLE jobs DROP COLUMN {name}")


async def add_later_monitor_columns(pool: ConnectionPool,
                                    names: tuple[str, ...] = tuple(LATER_MONITOR_COLUMNS)
                                    ) -> None:
    async with pool.connection() as conn:
        for name in names:
            await conn.execute(
                f"ALTER TABLE monitors ADD COLUMN {name} {LATER_MONITOR_COLUMNS[name]}")


async def drop_later_monitor_columns(pool: ConnectionPool,
                                     names: tuple[str, ...] = tuple(LATER_MONITOR_COLUMNS)
                                     ) -> None:
    async with pool.connection() as conn:
        for name in names:
            await conn.execute(f"ALTER TABLE monitors DROP COLUMN {name}")
