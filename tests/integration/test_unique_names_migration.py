"""Migration 0014: duplicate names of live jobs and monitors are suffixed, each rename an event
with actor ``migration`` that the fold agrees with; then the names are unique per team."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.db import ConnectionPool, open_pool
from core.errors import Conflict
from core.events import read_stream
from core.jobs.state import fold
from core.migrate import downgrade, upgrade
from tests.helpers import add_job, new_actor
from tests.monitor_helpers import (
    SINCE_0027,
    add_later_job_columns,
    add_later_monitor_columns,
    add_monitor,
    drop_later_job_columns,
    drop_later_monitor_columns,
)

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def _rows(pool: ConnectionPool, table: str) -> list[dict]:
    async with pool.connection() as conn:
        cur = await conn.execute(f"SELECT * FROM {table} ORDER BY created_at, id")  # noqa: S608
        return await cur.fetchall()


async def test_duplicates_are_renamed_with_events(fresh_dsn: str) -> None:
    downgrade(fresh_dsn, "0013")
    pool = await open_pool(fresh_dsn, min_size=1, max_size=2)
    try:
        await add_later_monitor_columns(pool)
        await add_later_job_columns(pool)
        actor, other = await new_actor(pool), await new_actor(pool)
        for _ in range(3):
            await add_job(pool, actor, NOW, "https://example.com/", name="backup")
        await add_job(pool, other, NOW, "https://example.com/", name="backup")
        await add_monitor(pool, actor, NOW, name="ping")
        await add_monitor(pool, actor, NOW, name="ping")
        await drop_later_monitor_columns(pool)
        await drop_later_job_columns(pool)
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
                assert fold(stream).name == job["name"] == stream[-1]["data"]["changes"]["name"]
                assert job["version"] == 2
        monitors = await _rows(pool, "monitors")
        assert monitors[0]["name"] == "ping" and monitors[1]["name"].startswith("ping (")
        with pytest.raises(Conflict, match="already has a job with this name"):
            await add_job(pool, actor, NOW, "https://example.com/", name="backup")
    finally:
        await pool.close()


async def test_monitor_names_are_free_and_a_downgrade_renames_duplicates(fresh_dsn: str) -> None:
    """Migration 0025: monitor names may repeat; going back to 0024 renames the younger
    duplicates as 0014 did, each with its event."""
    pool = await open_pool(fresh_dsn, min_size=1, max_size=2)
    try:
        actor = await new_actor(pool)
        first, _ = await add_monitor(pool, actor, NOW, name="ping")
        second, _ = await add_monitor(pool, actor, NOW, name="ping")
    finally:
        await pool.close()
    downgrade(fresh_dsn, "0024")
    pool = await open_pool(fresh_dsn, min_size=1, max_size=2)
    try:
        names = {m["id"]: m["name"] for m in await _rows(pool, "monitors")}
        assert set(names) == {first, second} and "ping" in names.values()
        renamed = [i for i, n in names.items() if n != "ping"]
        assert len(renamed) == 1 and names[renamed[0]] == f"ping ({renamed[0].hex[:8]})"
        async with pool.connection() as conn:
            stream = await read_stream(conn, "monitor", renamed[0], actor.team_id)
        assert stream[-1]["metadata"] == {"actor": "migration", "migration": "0025"}
        await add_later_monitor_columns(pool, SINCE_0027)  # today's commands write them
        with pytest.raises(Exception, match="monitors_team_name_key"):  # the index is back
            await add_monitor(pool, actor, NOW, name="ping")
        await drop_later_monitor_columns(pool, SINCE_0027)
    finally:
        await pool.close()
    upgrade(fresh_dsn)
