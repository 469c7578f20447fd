"""The statement behind a status page's bars (core/sql/status_pages.sql:status_page_days,
read by core/statuspages/bars.py:component_bars) gives the bars of the dashboard's
day-by-day rule: for monitors ``core/projections/queries.py:monitors_uptime_days``, for jobs
``success_rate`` of each day's ``job_stats_daily`` row; on random histories in a real
PostgreSQL. A monitor and a job of another team get a bar without data."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from api.ui.pages.monitors import uptime_bar
from core.db import ConnectionPool
from core.projections.queries import monitors_uptime_days, success_rate
from core.statuspages.bars import Bar, component_bars
from tests.helpers import add_job
from tests.monitor_helpers import add_monitor
from tests.teams import Team

NOW = datetime(2026, 11, 30, 15, 20, tzinfo=UTC)
FIRST = NOW.replace(hour=0, minute=0) - timedelta(days=89)
DAYS = 90


def _same(bar: Bar, expected: dict[str, Any]) -> None:
    assert [(s.first, s.count, s.cls, s.label) for s in bar.segments] == [
        (s["first"], s["count"], s["class"], s["label"]) for s in expected["segments"]]
    assert bar.summary == expected["summary"]


async def test_bars_from_the_statements_equal_the_day_by_day_rule(
        pool: ConnectionPool, team: Team) -> None:
    rnd, actor = random.Random(90), team.actor
    monitors, jobs, runs = [], [], {}
    async with pool.connection() as conn:
        for n in range(6):
            created = FIRST + timedelta(seconds=rnd.randint(-10 * 86400, 80 * 86400))
            monitor, _ = await add_monitor(pool, actor, created, name=f"m{n}")
            await conn.execute(
                "INSERT INTO monitor_state (monitor_id, team_id, name, status, created_at, "
                "deleted_at, updated_at) VALUES (%s, %s, 'm', 'up', %s, %s, %s)",
                (monitor, actor.team_id, created,
                 NOW - timedelta(days=3, hours=2) if n == 5 else None, NOW))
            for _ in range(rnd.randint(0, 15)):
                start = created + timedelta(seconds=rnd.randint(0, 85 * 86400))
                if start >= NOW:
                    continue
                end = None if rnd.random() < 0.1 else min(
                    NOW, start + timedelta(seconds=rnd.randint(60, 2 * 86400)))
                await conn.execute(
                    "INSERT INTO monitor_downtime (monitor_id, started_at, team_id, ended_at) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (monitor, start, actor.team_id, end))
            monitors.append(monitor)
            job = await add_job(pool, actor, FIRST, "https://example.com/", name=f"j{n}")
            runs[job] = {}
            for day in range(DAYS):
                if rnd.random() < 0.3:
                    continue
                ok, bad = rnd.choice([0, 1, 24, 24, 24]), rnd.choice([0, 0, 0, 0, 1, 3])
                runs[job][day] = (ok, bad)
                await conn.execute(
                    "INSERT INTO job_stats_daily (job_id, bucket_start, team_id, succeeded, "
                    "failed) VALUES (%s, %s, %s, %s, %s)",
                    (job, FIRST + timedelta(days=day), actor.team_id, ok, bad))
            jobs.append(job)
    stranger = uuid.uuid4()
    bars = await component_bars(pool, actor.team_id, [*monitors, stranger], [*jobs, stranger],
                                days=DAYS, now=NOW)
    expected = await monitors_uptime_days(pool, actor, monitors, days=DAYS, now=NOW)
    for monitor in monitors:
        _same(bars[monitor], uptime_bar(expected[monitor]))
    for job in jobs:
        days = []
        for day in range(DAYS):
            rate = success_rate(*runs[job].get(day, (0, 0)))
            days.append({"day": (FIRST + timedelta(days=day)).date(),
                         "uptime_percent": None if rate is None else round(100 * rate, 2)})
        _same(bars[job], uptime_bar(days))
        total = [sum(c[i] for c in runs[job].values()) for i in (0, 1)]
        rate = success_rate(*total)
        assert bars[job].percent == (None if rate is None else round(100 * rate, 2))
    assert [s.cls for s in bars[stranger].segments] == ["none"]
    assert bars[stranger].percent is None
