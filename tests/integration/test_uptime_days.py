"""Day-by-day uptime of several monitors (core/projections/queries.py,
monitors_uptime_days), by the rule of the single-monitor uptime."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from core.db import ConnectionPool
from core.projections.queries import monitors_uptime_days
from tests.teams import Team

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def test_each_day_is_the_uptime_of_that_day(pool: ConnectionPool,
                                                  team: Team) -> None:
    actor, monitor, other = team.actor, uuid.uuid4(), uuid.uuid4()
    created = NOW - timedelta(days=2, hours=12)  # Nov 28, 00:00
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO monitor_state (monitor_id, team_id, name, status, created_at, "
            "updated_at) VALUES (%s, %s, 'm', 'up', %s, %s)",
            (monitor, actor.team_id, created, created))
        # down 6 h on Nov 29 (06:00-12:00) and from Nov 30 06:00 on (still down)
        await conn.execute(
            "INSERT INTO monitor_downtime (monitor_id, started_at, team_id, ended_at) VALUES "
            "(%s, %s, %s, %s), (%s, %s, %s, NULL)",
            (monitor, created + timedelta(days=1, hours=6), actor.team_id,
             created + timedelta(days=1, hours=12), monitor, NOW - timedelta(hours=6),
             actor.team_id))
    bars = await monitors_uptime_days(pool, actor, [monitor, other], days=4, now=NOW)
    days = bars[monitor]
    assert [d["day"].isoformat() for d in days] == [
        "2026-11-27", "2026-11-28", "2026-11-29", "2026-11-30"]
    assert [d["uptime_percent"] for d in days] == [None, 100.0, 75.0, 50.0]
    assert days[2]["downtime_seconds"] == 6 * 3600
    assert all(d["uptime_percent"] is None for d in bars[other])  # no such monitor
