"""The ``reporting`` schema: the read-only role, redaction, and every example query of
docs/reporting.md (run from the document itself, as ``cronledger_reporting``)."""

from __future__ import annotations

import random
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import dict_row

from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.jobs.commands import set_paused, update_job
from core.migrate import downgrade, upgrade
from core.projections import histogram
from tests.helpers import MonitorStream, add_job, make_worker, new_actor, project_all
from tests.sink import Reply, Sink

ROOT = Path(__file__).resolve().parents[2]
ROLE = "cronledger_reporting"


def doc_queries() -> dict[str, str]:
    """``{heading: sql}`` for every example of docs/reporting.md."""
    text = (ROOT / "docs" / "reporting.md").read_text()
    examples = text.split("## Example queries", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"^### (.+?)\n.*?```sql\n(.*?)```", examples, re.MULTILINE | re.DOTALL)
    return {title.strip(): query for title, query in found}


# The workload's fixed instants: the documented queries' ``now()`` is replaced by NOW, so no
# result depends on today's date (BASE - 40 days lies in the month before BASE).
BASE = datetime(2026, 11, 16, 0, 0, tzinfo=UTC)
NOW = BASE + timedelta(days=2, minutes=30)


async def as_reporting(dsn: str, query: str, params: dict[str, Any] | None = None
                       ) -> list[dict[str, Any]]:
    """Rows of ``query`` run as the reporting role, with psql's ``:'job_id'`` bound from
    ``params`` and ``now()`` read as NOW (the injected clock of the workload)."""
    query = query.replace(":'job_id'", "%(job_id)s::uuid").replace("now()", "%(now)s::timestamptz")
    async with await psycopg.AsyncConnection.connect(dsn, row_factory=dict_row) as conn:
        await conn.execute("SET TIME ZONE 'UTC'")
        await conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(ROLE)))
        cur = await conn.execute(query, {"now": NOW, **(params or {})})
        return await cur.fetchall()


def test_reporting_role_reads_the_reporting_schema_and_nothing_else(fresh_dsn: str) -> None:
    with psycopg.connect(fresh_dsn, autocommit=True) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()]
        views = [r[0] for r in conn.execute(
            "SELECT viewname FROM pg_views WHERE schemaname = 'reporting'").fetchall()]
        assert {"api_keys", "events", "runs", "teams"} <= set(tables)
        assert set(views) == {"runs", "job_daily", "job_hourly", "job_weekly", "monitor_status",
                              "monitor_downtime", "monitor_daily", "events"}
        conn.execute(sql.SQL("SET ROLE {}").format(sql.Identifier(ROLE)))
        for view in views:
            conn.execute(sql.SQL("SELECT * FROM reporting.{} LIMIT 1").format(
                sql.Identifier(view))).fetchall()
        for table in tables:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(sql.SQL("SELECT * FROM public.{} LIMIT 1").format(
                    sql.Identifier(table)))
        for statement in (
            "DELETE FROM reporting.monitor_status",
            "INSERT INTO reporting.monitor_status (monitor_id) VALUES (gen_random_uuid())",
            "CREATE TABLE reporting.mine (x int)",
            "CREATE VIEW reporting.keys AS SELECT 1",
            "UPDATE projection_checkpoints SET global_position = 0",
            "SELECT pg_read_file('postgresql.conf')",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                conn.execute(statement)


def test_downgrade_keeps_the_shared_role(fresh_dsn: str, template_db: str) -> None:
    # Other databases of the cluster (the template, at least) still use the role.
    downgrade(fresh_dsn, "0001")
    with psycopg.connect(fresh_dsn, autocommit=True) as conn:
        assert conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (ROLE,)).fetchone()
        assert conn.execute("SELECT to_regnamespace('reporting')").fetchone() == (None,)
    upgrade(fresh_dsn)  # the role exists already: created only if missing
    with psycopg.connect(fresh_dsn, autocommit=True) as conn:
        assert conn.execute(
            "SELECT has_table_privilege(%s, 'reporting.runs', 'SELECT')", (ROLE,)).fetchone()[0]


async def test_sql_percentiles_match_python(pool: ConnectionPool) -> None:
    rng = random.Random(3)
    cases = []
    for _ in range(100):
        h: histogram.Histogram = {}
        for _ in range(rng.randint(1, 50)):
            histogram.add(h, rng.choice([0, rng.randint(1, 100), rng.randint(1, 10**9)]))
        cases.append(h)
    async with pool.connection() as conn:
        for h in cases:
            for q in (0.01, 0.5, 0.95, 1.0):
                cur = await conn.execute(
                    "SELECT reporting.histogram_percentile(%s::jsonb, %s) AS p",
                    (psycopg.types.json.Jsonb(h), q))
                assert (await cur.fetchone())["p"] == histogram.percentile(h, q), (h, q)
        cur = await conn.execute(
            "SELECT reporting.histogram_sum(h) AS total FROM unnest(%s::jsonb[]) AS h",
            ([psycopg.types.json.Jsonb(h) for h in cases],))
        assert histogram.merge([(await cur.fetchone())["total"]]) == histogram.merge(cases)


async def workload(pool: ConnectionPool, dsn: str, settings: Settings,
                   sink: Sink) -> dict[str, Any]:
    """Two days ago: an every-minute job that succeeds, one that fails, an edited job with an
    Authorization header; monitors pinged over two days, one down for an hour, one down now."""
    base = BASE
    clock = FrozenClock(base)
    actor = await new_actor(pool)
    sink.reply("/fail", Reply(status=500))
    ok = await add_job(pool, actor, base, sink.url("/ok"), "* * * * *", name="ok")
    failing = await add_job(pool, actor, base, sink.url("/fail"), "* * * * *", name="failing")
    edited = await add_job(pool, actor, base, sink.url("/e?token=abc"), "@daily", name="edited",
                           request={"headers": {"Authorization": "Bearer hunter2",
                                                "Accept": "text/plain"}})
    await update_job(pool, actor, edited, {"name": "edited again"}, base + timedelta(seconds=1))
    await set_paused(pool, actor, edited, True, base + timedelta(seconds=2))
    worker = make_worker(pool, dsn, settings, clock)
    try:
        for minute in (1, 2, 3):
            clock.set(base + timedelta(minutes=minute, milliseconds=250))
            await worker.run_once()
            await worker.settle()
    finally:
        await worker.executor.aclose()
    created = base - timedelta(days=40)
    backup, db = MonitorStream(actor.team_id), MonitorStream(actor.team_id)
    await backup.append(pool, created, ("monitor.created", {"name": "backup"}))
    await db.append(pool, created, ("monitor.created", {"name": "db"}))
    for day in (0, 1):
        at = base + timedelta(days=day)
        await backup.append(pool, at, ("monitor.pinged", {"kind": "success"}),
                            ("monitor.pinged", {"kind": "fail"}), ("monitor.up", {}))
    await backup.append(pool, base + timedelta(hours=3), ("monitor.down", {}))
    await backup.append(pool, base + timedelta(hours=4), ("monitor.up", {}))
    await db.append(pool, base + timedelta(hours=5), ("monitor.down", {}))
    await project_all(pool)
    return {"base": base, "ok": ok, "failing": failing, "edited": edited, "backup": backup.id,
            "db": db.id, "team": actor.team_id}


async def test_every_documented_example_runs_as_the_reporting_role(
    fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings, sink: Sink
) -> None:
    w = await workload(fresh_pool, fresh_dsn, settings, sink)
    queries = doc_queries()
    assert len(queries) >= 6
    results = {title: await as_reporting(fresh_dsn, query, {"job_id": w["edited"]})
               for title, query in queries.items()}

    rates = {r["job_name"]: r for r in results["Success rate per job over the last 7 days"]}
    assert (rates["ok"]["succeeded"], rates["ok"]["success_rate"]) == (3, 1)
    assert (rates["failing"]["failed"], rates["failing"]["success_rate"]) == (3, 0)

    expected_p95 = round(1.1 ** (histogram.bucket_of(250) - 0.5))
    daily = results["p95 lateness per job, day by day, over the last 7 days"]
    assert sorted((r["job_name"], r["day"], r["runs"], r["p95_lateness_ms"]) for r in daily) == [
        (name, w["base"].date(), 3, expected_p95) for name in ("failing", "ok")]
    weekly = results["p95 lateness per job per week, the last 4 weeks"]
    monday = w["base"].date() - timedelta(days=w["base"].weekday())
    assert sorted((r["job_name"], r["week"], r["runs"], r["p95_lateness_ms"]) for r in weekly) \
        == [(name, monday, 3, expected_p95) for name in ("failing", "ok")]
    ok_month = await as_reporting(
        fresh_dsn, queries["p95 lateness of one job over the last 30 days, as one figure"],
        {"job_id": w["ok"]})
    assert [(r["days"], r["runs"], r["p95_lateness_ms"]) for r in ok_month] == [
        (1, 3, expected_p95)]

    [worst] = results["The ten most failing jobs over the last 7 days"]
    assert (worst["job_name"], worst["failed_runs"], worst["runs"]) == ("failing", 3, 3)

    uptime = {(r["name"], r["month"]): r["uptime_percent"]
              for r in results["Monitor uptime percentage per month"]}
    month = w["base"].date().replace(day=1)
    assert len(uptime) == 4  # two monitors, the month of creation and this one
    lower = max(datetime(month.year, month.month, 1, tzinfo=UTC), w["base"] - timedelta(days=40))
    expected = 100 * (1 - 3600 / (NOW - lower).total_seconds())
    assert abs(float(uptime[("backup", month)]) - expected) < 0.01
    assert all(float(v) == 100 for (name, m), v in uptime.items() if m != month), uptime

    history = results["The definition history of one job"]
    assert [r["event_type"] for r in history] == ["job.created", "job.updated", "job.paused"]
    request = history[0]["data"]["request"]
    assert request["headers"] == {"Authorization": "[redacted]", "Accept": "text/plain"}
    assert request["url"].endswith("/e?token=[redacted]")
    assert history[1]["data"]["changes"] == {"name": "edited again"}
    assert history[0]["actor"].startswith("api_key:")

    pings = [(r["monitor_name"], r["day"], r["pings"], r["success"], r["fail"])
             for r in results["Pings per day over the last 14 days"]]
    assert pings == [("backup", (w["base"] + timedelta(days=d)).date(), 2, 1, 1) for d in (0, 1)]

    assert results["The last 20 runs of one job, with lateness and duration"] == []
    ok_runs = await as_reporting(
        fresh_dsn, queries["The last 20 runs of one job, with lateness and duration"],
        {"job_id": w["ok"]})
    assert [(r["status"], r["lateness_ms"]) for r in ok_runs] == [("succeeded", 250)] * 3
    assert all(r["duration_ms"] is not None for r in ok_runs)

    [down] = results["Monitors down right now, longest first"]
    assert (down["name"], down["down_since"]) == ("db", w["base"] + timedelta(hours=5))


async def test_views_match_the_projections(
    fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings, sink: Sink
) -> None:
    w = await workload(fresh_pool, fresh_dsn, settings, sink)
    runs = await as_reporting(fresh_dsn, "SELECT * FROM reporting.runs ORDER BY scheduled_for")
    assert len(runs) == 6 and {r["job_name"] for r in runs} == {"ok", "failing"}
    assert {r["error_class"] for r in runs if r["status"] == "failed"} == {"http_status"}
    daily = await as_reporting(
        fresh_dsn, "SELECT * FROM reporting.job_daily WHERE job_id = %(job_id)s",
        {"job_id": w["ok"]})
    [day] = daily
    assert (day["runs"], day["succeeded"], day["p50_lateness_ms"]) == (
        3, 3, round(1.1 ** (histogram.bucket_of(250) - 0.5)))
    assert day["day"] == w["base"].date()
    downtime = await as_reporting(
        fresh_dsn, "SELECT * FROM reporting.monitor_downtime ORDER BY started_at")
    assert [(d["monitor_name"], d["ongoing"], d["end_reason"]) for d in downtime] == [
        ("backup", False, "up"), ("db", True, None)]
    assert downtime[0]["duration_seconds"] == 3600
    events = await as_reporting(
        fresh_dsn, "SELECT count(*) AS n FROM reporting.events WHERE team_id = %(job_id)s",
        {"job_id": w["team"]})
    assert events[0]["n"] > 10
    assert isinstance(uuid.UUID(str(w["backup"])), uuid.UUID)
