"""``cronledger projections rebuild``: after a realistic mixed workload, the rebuilt projections
equal the live ones row for row."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from core.clock import FrozenClock
from core.db import ConnectionPool
from core.events import stream_kinds
from core.jobs.commands import delete_job, set_paused, trigger_job, update_job
from core.monitors import commands
from core.monitors.checker import Checker
from core.monitors.ping import open_ping_pool
from core.runs.claim import claim_due
from core.runs.worker import Worker
from tests.helpers import add_job, new_actor, project_all
from tests.monitor_helpers import add_monitor, advance, ping
from tests.processes import run_cli
from tests.sink import Reply, Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)

# table -> ORDER BY; every column is compared (the checkpoint's updated_at excepted).
PROJECTIONS = {
    "jobs": "id",
    "monitors": "id",
    "monitor_ping_bodies": "monitor_id, version",
    "due_jobs": "job_id",
    "runs": "id",
    "run_attempts": "run_id, attempt",
    "job_stats_hourly": "job_id, bucket_start",
    "job_stats_daily": "job_id, bucket_start",
    "job_stats_weekly": "job_id, bucket_start",
    "team_runs_hourly": "team_id, bucket_start",
    "job_health": "job_id",
    "monitor_state": "monitor_id",
    "monitor_pings_daily": "monitor_id, day",
    "monitor_downtime": "monitor_id, started_at",
}


async def snapshot(pool: ConnectionPool) -> dict[str, list[dict[str, Any]]]:
    tables: dict[str, list[dict[str, Any]]] = {}
    async with pool.connection() as conn:
        for table, order in PROJECTIONS.items():
            cur = await conn.execute(f"SELECT * FROM {table} ORDER BY {order}")
            tables[table] = await cur.fetchall()
        for row in tables["monitors"]:
            # alert_at is the checker's wake-up hint, not state: it depends on when it was last
            # computed (the rebuild computes it as of the rebuild instant).
            row.pop("alert_at")
        cur = await conn.execute(
            "SELECT name, tx_id::text, global_position, events_applied FROM projection_checkpoints")
        tables["projection_checkpoints"] = await cur.fetchall()
    return tables


async def monitor_workload(pool: ConnectionPool, dsn: str, actor: Any) -> None:
    """Real monitors pinged, late, down, up, paused, resumed, deleted, driven by the checker."""
    ping_pool = await open_ping_pool(dsn, size=2)
    checker = Checker(pool, dsn, FrozenClock(T0), batch=10)
    try:
        backup, backup_token = await add_monitor(pool, actor, T0, "1m", grace_seconds=30,
                                                 name="backup")
        api, api_token = await add_monitor(pool, actor, T0, "1m", grace_seconds=60, name="api")
        gone, gone_token = await add_monitor(pool, actor, T0, "5m", name="gone")
        at = T0
        for minute in range(1, 8):
            at = T0 + timedelta(minutes=minute)
            await ping(ping_pool, api_token, at)
            if minute in (1, 2, 6):
                await ping(ping_pool, backup_token, at, "start", rid=str(uuid.uuid4()))
                await ping(ping_pool, backup_token, at + timedelta(seconds=5))
            if minute == 3:
                await ping(ping_pool, gone_token, at, "fail", body=b"disk full")
            if minute == 4:
                await commands.set_paused(pool, actor, gone, True, at)
            if minute == 5:
                await commands.set_paused(pool, actor, gone, False, at)
                await ping(ping_pool, gone_token, at, "log")
            await advance(checker, pool, at + timedelta(seconds=50))
            await project_all(pool)
        await commands.delete_monitor(pool, actor, gone, at + timedelta(seconds=55))
        await project_all(pool)
    finally:
        await ping_pool.close()


async def job_workload(pool: ConnectionPool, dsn: str, worker: Worker,
                       clock: FrozenClock, sink: Sink) -> None:
    """Jobs created, edited, paused, resumed, deleted; runs succeeded, failed, retried,
    skipped, queued behind a running one, redispatched after a lost lease, missed, caught up."""
    actor = await new_actor(pool)
    sink.reply("/fail", Reply(status=500, body=b"boom"))
    sink.reply("/flaky", Reply(status=503), Reply(status=200))
    # Slot 1 of these is still in flight at 12:02 (a finished exchange whose result is not
    # recorded yet no longer counts as in flight for the overlap policy).
    for path in ("/ok", "/q", "/all"):
        sink.reply(path, Reply(delay=2.0), Reply())
    every_minute = "* * * * *"
    ok = await add_job(pool, actor, T0, sink.url("/ok"), every_minute, name="ok")
    await add_job(pool, actor, T0, sink.url("/fail"), every_minute, name="failing",
                  retry={"attempts": 2, "backoff": "fixed", "delay_seconds": 10})
    await add_job(pool, actor, T0, sink.url("/flaky"), every_minute, name="flaky",
                  retry={"attempts": 3, "backoff": "fixed", "delay_seconds": 5})
    await add_job(pool, actor, T0, sink.url("/q"), every_minute, name="queue", overlap="queue")
    await add_job(pool, actor, T0, sink.url("/all"), every_minute, name="all", catchup="all",
                  overlap="allow")
    await add_job(pool, actor, T0, sink.url("/once"), "@at 2026-11-30T12:02:30Z", name="once")
    edited = await add_job(pool, actor, T0, sink.url("/e"), "*/2 * * * *", name="edited")
    gone = await add_job(pool, actor, T0, sink.url("/g"), every_minute, name="gone")

    async def tick(at: datetime, settle: bool = True) -> None:
        clock.set(at)
        await worker.run_once()
        if settle:
            await worker.settle()
        await project_all(pool)

    await tick(T0 + timedelta(minutes=1), settle=False)
    await tick(T0 + timedelta(minutes=2))  # in flight: skipped / queued / allowed
    await update_job(pool, actor, edited, {"name": "edited twice", "timeout_seconds": 5},
                     T0 + timedelta(minutes=2, seconds=1))
    await update_job(pool, actor, edited, {"schedule": "*/3 * * * *", "timezone": "Europe/Paris"},
                     T0 + timedelta(minutes=2, seconds=2))
    await tick(T0 + timedelta(minutes=2, seconds=15))  # retries, the released queued run
    await set_paused(pool, actor, ok, True, T0 + timedelta(minutes=2, seconds=20))
    await trigger_job(pool, actor, ok, T0 + timedelta(minutes=2, seconds=21))
    await tick(T0 + timedelta(minutes=3))
    await set_paused(pool, actor, ok, False, T0 + timedelta(minutes=3, seconds=5))
    await trigger_job(pool, actor, gone, T0 + timedelta(minutes=3, seconds=6))
    await delete_job(pool, actor, gone, T0 + timedelta(minutes=3, seconds=7))  # cancels it
    await update_job(pool, actor, edited, {"paused": True, "name": "edited thrice"},
                     T0 + timedelta(minutes=3, seconds=8))
    # The scheduler is down from 12:04 to 12:08: missed and caught-up slots.
    await tick(T0 + timedelta(minutes=8, seconds=30))
    await update_job(pool, actor, edited, {"paused": False}, T0 + timedelta(minutes=8, seconds=31))
    clock.set(T0 + timedelta(minutes=9))
    await claim_due(pool, clock.now(), limit=100, lookahead=0, worker_id="lost",
                    lease_margin=5)  # claimed, never sent: leases expire
    await tick(T0 + timedelta(minutes=9, seconds=40))  # redispatched with the same run ids
    await tick(T0 + timedelta(minutes=10))
    await tick(T0 + timedelta(minutes=10, seconds=20))
    await monitor_workload(pool, dsn, actor)


async def test_rebuild_equals_the_live_projections(
    fresh_pool: ConnectionPool, fresh_dsn: str, worker: Worker, clock: FrozenClock,
    sink: Sink,
) -> None:
    await job_workload(fresh_pool, fresh_dsn, worker, clock, sink)
    await project_all(fresh_pool)
    live = await snapshot(fresh_pool)
    statuses = {r["status"] for r in live["runs"]}
    assert statuses >= {"succeeded", "failed", "skipped", "missed"}, statuses
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT DISTINCT event_type FROM events")
        kinds = {r["event_type"] for r in await cur.fetchall()}
    assert kinds >= {"job.created", "job.updated", "job.paused", "job.resumed", "job.deleted",
                     "job.completed", "run.started", "run.retry_scheduled", "run.succeeded",
                     "run.failed", "run.skipped", "run.missed", "run.queued", "run.released",
                     "monitor.down", "monitor.up", "monitor.late", "monitor.pinged"}, kinds
    assert all(live[t] for t in PROJECTIONS if t != "run_attempts"), "an empty projection"
    # Every event is in a partition its stream's reads name (core/retention/policy.py).
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT DISTINCT stream_type, event_retention_kind("
                                 "stream_type, event_type) AS kind FROM events")
        placed = {(r["stream_type"], r["kind"]) for r in await cur.fetchall()}
    assert {("job", "keep"), ("monitor", "pings"), ("monitor", "keep"), ("run", "runs")} <= placed
    assert {p for p in placed if p[1] not in stream_kinds(p[0])} == set()
    # Damage every projection: the rebuild must not depend on what was there.
    async with fresh_pool.connection() as conn:
        await conn.execute("UPDATE jobs SET name = 'damaged ' || id")
        await conn.execute("UPDATE due_jobs SET due_at = due_at + interval '1 day'")
        await conn.execute("UPDATE runs SET error = 'damaged', version = version + 7")
        await conn.execute("DELETE FROM job_stats_daily")
        await conn.execute("UPDATE job_health SET consecutive_failures = 99")
        await conn.execute("UPDATE monitor_state SET status = 'damaged'")
        await conn.execute("UPDATE monitors SET name = 'damaged ' || id, last_ping_at = NULL")
        await conn.execute("DELETE FROM monitor_downtime")
        await conn.execute("UPDATE team_runs_hourly SET succeeded = 0")
        await conn.commit()

    output = run_cli("projections", "rebuild", env={"DATABASE_URL": fresh_dsn})
    assert f"runs={len(live['runs'])}" in output
    await project_all(fresh_pool)  # events of transactions still running elsewhere, if any
    rebuilt = await snapshot(fresh_pool)
    for table in live:
        assert rebuilt[table] == live[table], table

    # The scheduler carries on from the rebuilt due_jobs: the next slot fires once.
    before = len(sink.hits)
    clock.set(T0 + timedelta(minutes=11))
    await worker.run_once()
    await worker.settle()
    fresh = sink.hits[before:]
    assert {h.headers["X-Cronledger-Scheduled-For"] for h in fresh} == {"2026-11-30T12:11:00Z"}
    assert sorted(h.path for h in fresh) == ["/all", "/fail", "/flaky", "/ok", "/q"]

async def test_rebuild_of_an_empty_log(fresh_pool: ConnectionPool, fresh_dsn: str) -> None:
    output = run_cli("projections", "rebuild", env={"DATABASE_URL": fresh_dsn})
    assert output.split() == ["jobs=0", "runs=0", "monitors=0", "events_projected=0"]


def test_rebuild_truncates_every_read_model() -> None:
    from core.projections.projector import TABLES
    from core.queries import Q

    truncated = Q["rebuild_truncate_read_models"].removeprefix("TRUNCATE").rstrip(";")
    assert {t.strip() for t in truncated.split(",")} == set(TABLES)
    assert set(TABLES) | {"jobs", "due_jobs", "runs", "run_attempts"} <= set(PROJECTIONS)
