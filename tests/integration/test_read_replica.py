"""``CRONLEDGER_READ_DATABASE_URL`` (docs/operations.md, "Read replica"): the reporting reads go
to the read database, everything else to the primary; the dashboard shows the projection lag.
A second database of the same server stands in for the replica: its own content shows which
one answered."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime

from core.apikeys import create_api_key
from core.clock import SystemClock
from core.config import Settings
from core.db import ConnectionPool
from core.events import NewEvent, append_events
from tests.conftest import _client
from tests.helpers import project_all

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)  # the events' instants; the lag is the database's


async def test_reporting_reads_use_the_read_database(
        fresh_dsn: str, fresh_pool: ConnectionPool, pool: ConnectionPool,
        shared_dsn: str, settings: Settings) -> None:
    key, record = await create_api_key(pool, f"replica-{uuid.uuid4().hex[:8]}",
                                       "write")
    auth = {"Authorization": f"Bearer {key}"}
    # Only the "replica" has the team's events and an unapplied one: its checkpoint lags.
    async with fresh_pool.connection() as conn:
        await append_events(conn, [NewEvent("monitor", record["id"], 1, "monitor.created",
                                            record["team_id"], T0,
                                            {"name": "r"})])
        await conn.commit()
    await project_all(fresh_pool)
    async with fresh_pool.connection() as conn:
        await append_events(conn, [NewEvent("job", record["team_id"], 1, "job.noted",
                                            record["team_id"], T0)])
        await conn.commit()
    replica = replace(settings, read_database_url=fresh_dsn)
    async for api in _client(shared_dsn, replica, SystemClock()):
        r = await api.get("/v1/dashboard", headers=auth)
        assert r.status_code == 200, r.text
        projection = r.json()["projection"]
        assert projection["lag_seconds"] > 0
        async with fresh_pool.connection() as conn:
            cur = await conn.execute("SELECT global_position FROM projection_checkpoints")
            assert projection["global_position"] == (await cur.fetchone())["global_position"]
        # Writes and definitions still go to the primary.
        r = await api.post("/v1/monitors", json={"name": "primary", "schedule": "1h"},
                           headers=auth)
        assert r.status_code == 201, r.text
    async for api in _client(shared_dsn, settings, SystemClock()):
        await project_all(pool)
        r = await api.get("/v1/dashboard", headers=auth)
        assert r.json()["projection"]["lag_seconds"] == 0
        assert r.json()["monitors"]["new"] == 1
