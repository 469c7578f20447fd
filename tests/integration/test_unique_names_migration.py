"""Migration 0014: duplicate names of live jobs and monitors are suffixed, each rename an event
with actor ``migration`` that the fold agrees with; then the names are unique per team."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from psycopg_pool import AsyncConnectionPool

from core.db import open_pool
from core.errors import Conflict
from core.events import read_stream
from core.jobs.state import fold
from core.migrate import downgrade, upgrade
from tests.helpers import add_job, new_actor
from tests.monitor_helpers import (
    add_later_monitor_columns,
    add_monitor,
    drop_later_monitor_columns,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def _rows(pool: AsyncConnectionPool, table: str) -> list[dict]:
    async with pool.connection() as conn:
        cur = await conn.execute(f"SELECT * FROM {table} ORDER BY created_at, id")  # noqa: S608
        return await cur.fetchall()


async def test_duplicates_are_renamed_with_events(fresh_dsn: str) -> None:
    downgrade(fresh_dsn, "0013")
    pool = await open_pool(fresh_dsn, min_size=1, max_size=2)
    try:
        await add_later_monitor_columns(pool)
        actor, other = await new_actor(pool), await new_actor(pool)
        for _ in range(3):
            await add_job(pool, actor, NOW, "https://example.com/", name="backup")
        await add_job(pool, other, NOW, "https://example.com/", name="backup")
        await add_monitor(pool, actor, NOW, name="ping")
        await add_monitor(pool, actor, NOW, name="ping")
        await drop_later_monitor_columns(pool)
    finally:
        await pool.close()
    upgrade(fresh_dsn)
    pool = await open_pool(fresh_dsn, min_size=1, max_size=2)
    try:
        jobs = await _rows(pool, "jobs")
        mine = [j for j in jobs if j["team_id"] == actor.team_id]
        assert mine[0]["name"] == "backup" and mine[0]["version"] == 1
        assert [j["name"] for j in mine[1:]] == [f"backup ({j['id'].hex[:8]})" for j in mine[1:]]
        assert [j["name"] for j in jobs if j["team_id"] == other.team_id] == ["backup"]
        async with pool.connection() as conn:
            for job in mine[1:]:
                stream = await read_stream(conn, "job", job["id"], actor.team_id)
                assert stream[-1]["event_type"] == "job.updated"
                assert stream[-1]["metadata"] == {"actor": "migration", "migration": "0014"}
                assert fold(stream)["name"] == job["name"] == stream[-1]["data"]["changes"]["name"]
                assert job["version"] == 2
        monitors = await _rows(pool, "monitors")
        assert monitors[0]["name"] == "ping" and monitors[1]["name"].startswith("ping (")
        with pytest.raises(Conflict, match="already has a job with this name"):
            await add_job(pool, actor, NOW, "https://example.com/", name="backup")
    finally:
        await pool.close()
