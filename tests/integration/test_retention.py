"""Retention (docs/operations.md, "Retention"): daily partitions created ahead, whole partitions
pruned with a `log.pruned` event, the newest pings kept readable, one retention pass at a
time, and a rebuild after several prunes that equals the live projections."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.errors import ConcurrencyConflict
from core.events import NewEvent, append_events
from core.monitors.checker import Checker
from core.monitors.ping import open_ping_pool
from core.monitors.queries import list_pings
from core.rebuild import rebuild
from core.retention import prune as pruning
from core.retention.maintenance import Maintenance, ensure_partitions
from core.retention.policy import PARTITION_COLUMN
from tests.helpers import add_job, make_worker, new_actor, project_all
from tests.integration.test_rebuild import snapshot
from tests.monitor_helpers import add_monitor, advance, ping
from tests.sink import Reply, Sink

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
DAYS = 5


def short(settings: Settings) -> Settings:
    return replace(settings, retention_pings_days=1, retention_runs_days=2,
                   retention_attempt_bodies_days=1, retention_deliveries_days=1,
                   partitions_ahead_days=1)


async def leaf_names(pool: ConnectionPool) -> set[str]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE c.relname ~ '_p[0-9]{8}$'")
        return {r["relname"] for r in await cur.fetchall()}


async def test_partitions_are_created_ahead(fresh_pool: ConnectionPool,
                                            settings: Settings) -> None:
    now = datetime(2027, 3, 10, 8, 0, tzinfo=UTC)
    created = await ensure_partitions(fresh_pool, now, 3)
    days = [f"{now.date() + timedelta(days=d):%Y%m%d}" for d in range(-1, 4)]
    expected = {f"{parent}_p{day}" for parent in PARTITION_COLUMN for day in days}
    assert set(created or ()) == expected
    assert expected <= await leaf_names(fresh_pool)
    assert await ensure_partitions(fresh_pool, now, 3) == []  # idempotent
    # An event of that day lands in its leaf, not in the default partition.
    async with fresh_pool.connection() as conn:
        await append_events(conn, [NewEvent("run", uuid.uuid4(), 1, "run.started",
                                            uuid.uuid4(), now + timedelta(days=2))])
        cur = await conn.execute("SELECT tableoid::regclass::text AS leaf FROM events")
        assert [r["leaf"] for r in await cur.fetchall()] == [f"events_runs_p{days[3]}"]
        await conn.rollback()


async def test_a_stale_version_is_a_conflict_in_a_daily_leaf(
        fresh_pool: ConnectionPool) -> None:
    now = datetime(2027, 3, 10, 8, 0, tzinfo=UTC)
    await ensure_partitions(fresh_pool, now, 1)
    run_id, team = uuid.uuid4(), uuid.uuid4()
    async with fresh_pool.connection() as conn:
        await append_events(conn, [NewEvent("run", run_id, 1, "run.started", team, now)])
        await conn.commit()
        with pytest.raises(ConcurrencyConflict):
            await append_events(conn, [NewEvent("run", run_id, 1, "run.started", team, now)])


async def test_one_maintenance_pass_at_a_time(fresh_pool: ConnectionPool, fresh_dsn: str,
                                             settings: Settings) -> None:
    with psycopg.connect(fresh_dsn) as other:
        other.execute("SELECT * FROM retention_lock FOR UPDATE")  # another process's pass
        assert await ensure_partitions(fresh_pool, T0, 1) is None
        assert await pruning.prune(fresh_pool, short(settings), T0) is None
    assert await ensure_partitions(fresh_pool, T0, 1)


async def test_prunes_keep_the_log_honest_and_rebuild_equals_live(
    fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings, clock: FrozenClock,
    sink: Sink,
) -> None:
    settings = short(settings)
    pool = fresh_pool
    worker = make_worker(pool, fresh_dsn, settings, clock)
    maintenance = Maintenance(pool, settings, clock)
    checker = Checker(pool, fresh_dsn, clock, batch=10)
    ping_pool = await open_ping_pool(fresh_dsn, size=1)
    try:
        await maintenance.run_once(T0 - timedelta(hours=12))
        actor = await new_actor(pool)
        sink.reply("/fail", *[Reply(status=500)] * DAYS)
        await add_job(pool, actor, T0 - timedelta(hours=1), sink.url("/ok"), "0 12 * * *",
                      name="daily")
        await add_job(pool, actor, T0 - timedelta(hours=1), sink.url("/fail"), "0 12 * * *",
                      name="failing", retry={"attempts": 2, "backoff": "fixed",
                                             "delay_seconds": 10})
        monitor, token = await add_monitor(pool, actor, T0 - timedelta(hours=1), "1d",
                                           grace_seconds=3600, name="nightly")
        pruned = []
        for d in range(DAYS):
            day = T0 + timedelta(days=d)
            early = await maintenance.run_once(day - timedelta(hours=1))
            if early is not None and early.planned:
                pruned.append(early)
            for at in (day, day + timedelta(seconds=10)):
                clock.set(at)
                await worker.run_once()
                await worker.settle()
            for minute in range(3):
                await ping(ping_pool, token, day + timedelta(minutes=minute),
                           body=f"day {d} ping {minute}".encode())
            await advance(checker, pool, day + timedelta(hours=1))
            await project_all(pool)
            result = await maintenance.run_once(day + timedelta(hours=11))
            assert result is not None
            if result.planned:
                pruned.append(result)
    finally:
        await ping_pool.close()
        await worker.settle()
        await worker.executor.aclose()

    assert len(pruned) >= 3, [p.summary() for p in pruned]
    leaves = await leaf_names(pool)
    assert "events_pings_p20261120" not in leaves and "events_runs_p20261120" not in leaves
    assert "run_attempts_p20261121" not in leaves
    assert {"events_pings_p20261124", "events_runs_p20261124"} <= leaves
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT data, metadata FROM events WHERE event_type = 'log.pruned' "
            "ORDER BY global_position")
        logged = await cur.fetchall()
        cur = await conn.execute(
            "SELECT min(occurred_at) AS first FROM events WHERE event_type = 'monitor.pinged'")
        first_ping = (await cur.fetchone())["first"]
        cur = await conn.execute("SELECT count(*) AS n FROM events_pings_default")
        assert (await cur.fetchone())["n"] == 0
    assert len(logged) == len(pruned)
    assert all(row["metadata"] == {"actor": "maintenance"} for row in logged)
    kinds = logged[0]["data"]["kinds"]
    assert {"pings", "attempt_bodies"} <= set(kinds), kinds
    assert sum(k["rows"] for row in logged for k in row["data"]["kinds"].values()) > 0
    assert first_ping >= T0 + timedelta(days=DAYS - 2)  # the log holds only what is kept

    # Every ping stays readable (fewer than 100 per monitor), bodies included.
    pings = await list_pings(pool, actor, monitor, limit=100, before_version=None)
    assert len(pings) == DAYS * 3
    assert [p["version"] for p in pings] == sorted((p["version"] for p in pings), reverse=True)
    assert pings[-1]["received_at"] == T0
    assert pings[-1]["body"] == "day 0 ping 0"

    live = await snapshot(pool)
    assert live["runs"] and live["monitors"] and live["job_stats_hourly"]
    async with pool.connection() as conn:
        await conn.execute("UPDATE runs SET error = 'damaged', version = version + 7")
        await conn.execute("UPDATE monitors SET name = 'damaged', last_ping_at = NULL")
        await conn.execute("DELETE FROM job_stats_daily")
        await conn.execute("UPDATE job_health SET consecutive_failures = 99")
        await conn.execute("UPDATE due_jobs SET due_at = due_at + interval '1 day'")
        await conn.commit()
    counts = await rebuild(pool, clock.now())
    assert counts["runs"] == len(live["runs"])
    await project_all(pool)
    rebuilt = await snapshot(pool)
    for table in live:
        assert rebuilt[table] == live[table], table


async def test_dry_run_changes_nothing(fresh_pool: ConnectionPool,
                                       settings: Settings) -> None:
    settings = short(settings)
    await ensure_partitions(fresh_pool, T0, 1)
    before = await leaf_names(fresh_pool)
    later = T0 + timedelta(days=5)
    plan = await pruning.plan(fresh_pool, settings, later)
    assert {p.leaf.name for p in plan.planned} == {
        n for n in before if n.endswith(("20261119", "20261120", "20261121"))}
    assert await leaf_names(fresh_pool) == before
    result = await pruning.prune(fresh_pool, settings, later)
    assert result is not None and {p.leaf.name for p in result.planned} == {
        p.leaf.name for p in plan.planned}
    assert await leaf_names(fresh_pool) == before - {p.leaf.name for p in plan.planned}


async def test_a_monitor_keeps_its_newest_100_pings(
        fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings) -> None:
    settings = short(settings)
    for d in range(5):
        await ensure_partitions(fresh_pool, T0 + timedelta(days=d), 1)
    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0 - timedelta(hours=1), "1h")
    ping_pool = await open_ping_pool(fresh_dsn, size=1)
    try:
        for i in range(120):
            await ping(ping_pool, token, T0 + timedelta(seconds=i), body=f"old {i}".encode())
        for i in range(10):
            await ping(ping_pool, token, T0 + timedelta(days=3, seconds=i))
    finally:
        await ping_pool.close()
    await project_all(fresh_pool)
    result = await pruning.prune(fresh_pool, settings, T0 + timedelta(days=2, hours=1))
    assert result is not None and "events_pings_p20261120" in {p.leaf.name for p in
                                                                result.planned}
    pings = await list_pings(fresh_pool, actor, monitor, limit=200, before_version=None)
    assert len(pings) == 100
    assert pings[-1]["body"] == "old 30" and pings[10]["body"] == "old 119"
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM monitor_pings_kept")
        assert (await cur.fetchone())["n"] == 90


def test_prune_and_db_size_commands(fresh_dsn: str) -> None:
    from tests.processes import run_cli

    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_RETENTION_PINGS_DAYS": "1"}
    with psycopg.connect(fresh_dsn) as conn:  # a leaf of pings from long ago
        conn.execute("SELECT retention_partition_create('events_pings', '2020-01-01')")
        conn.execute("SELECT retention_partition_create('events_runs', '2020-01-01')")
    dry = run_cli("prune", "--dry-run", env=env)
    assert "pings: would drop 1 partitions, 0 rows" in dry, dry
    assert "runs: would drop 1 partitions" in dry  # 2020 is past 90 days too
    assert "attempt_bodies" not in dry  # nothing of them that old
    sizes = run_cli("db-size", env=env)
    assert "events_pings" in sizes and "pings" in sizes and sizes.splitlines()[-1].startswith(
        "database")
    done = run_cli("prune", env=env)
    assert "pings: dropped 1 partitions" in done and "runs: dropped 1 partitions" in done, done
    assert "nothing is past its retention" in run_cli("prune", "--dry-run", env=env)


async def _old_runs(pool: ConnectionPool, actor, job: uuid.UUID, start: datetime,  # noqa: ANN001
                    count: int, *, finish: bool = True) -> list[uuid.UUID]:
    """``count`` manual runs of ``job`` a minute apart from ``start``: their events in the log
    and their ``runs`` rows their fold (what the recorder would have written)."""
    from core.projections import runs as run_rows
    from core.runs.state import evolve

    rows, ids = [], []
    async with pool.connection() as conn:
        for i in range(count):
            run, slot = uuid.uuid4(), start + timedelta(minutes=i)
            done = slot + timedelta(seconds=1)
            events = [
                NewEvent("run", run, 1, "run.queued", actor.team_id, slot,
                         {"job_id": str(job), "scheduled_for": slot.isoformat(),
                          "trigger": "manual", "available_at": slot.isoformat()}),
                NewEvent("run", run, 2, "run.started", actor.team_id, slot,
                         {"attempt": 1, "worker_id": "w"})]
            if finish:
                events.append(NewEvent("run", run, 3, "run.succeeded", actor.team_id, done,
                                       {"duration_ms": 1000, "response_status": 200,
                                        "started_at": slot.isoformat(),
                                        "finished_at": done.isoformat()}))
            positions = await append_events(conn, events)
            row = None
            for event, position in zip(events, positions, strict=True):
                row = evolve(row, {"event_type": event.event_type, "data": event.data,
                                   "stream_id": run, "stream_version": event.version,
                                   "team_id": event.team_id, "occurred_at": event.occurred_at,
                                   "global_position": position})
            rows.append(row)
            ids.append(run)
        await run_rows.write(conn, rows)
        await conn.commit()
    return ids


async def test_prune_deletes_old_runs_rows_but_a_jobs_newest_100_and_finished_notifications(
        fresh_pool: ConnectionPool, settings: Settings, sealer: Any, clock: FrozenClock
) -> None:
    from core.channels.commands import create_channel
    from core.runs.queries import list_runs

    settings = short(settings)  # runs 2 days, deliveries 1 day
    pool = fresh_pool
    for d in range(-1, 7):
        await ensure_partitions(pool, T0 + timedelta(days=d), 1)
    actor = await new_actor(pool)
    busy = await add_job(pool, actor, T0 - timedelta(hours=1), "http://127.0.0.1:9/",
                         "0 0 1 1 *", name="busy")
    quiet = await add_job(pool, actor, T0 - timedelta(hours=1), "http://127.0.0.1:9/",
                          "0 0 1 1 *", name="quiet")
    old = await _old_runs(pool, actor, busy, T0 - timedelta(hours=6), 130)  # day T0
    stuck = await _old_runs(pool, actor, busy, T0 - timedelta(hours=7), 1, finish=False)
    quiet_old = await _old_runs(pool, actor, quiet, T0 - timedelta(hours=6), 20)
    recent = await _old_runs(pool, actor, busy, T0 + timedelta(days=3), 5)
    hook, _ = await create_channel(pool, sealer, actor, {
        "name": "hook", "kind": "webhook", "url": "http://127.0.0.1:9/"}, T0)
    notes = {}
    async with pool.connection() as conn:
        for name, status, finished in (
                ("sent", "sent", T0), ("given_up", "failed", T0), ("pending", "pending", None),
                ("cancelled", "cancelled", T0), ("sent_late", "sent", T0 + timedelta(days=3))):
            notes[name] = uuid.uuid4()
            await conn.execute(
                "INSERT INTO notifications (id, team_id, channel_id, subject_type, subject_id, "
                "event, message, status, max_attempts, version, created_at, finished_at) "
                "VALUES (%s, %s, %s, 'job', %s, 'failed', '{}', %s, 3, 1, %s, %s)",
                (notes[name], actor.team_id, hook, busy, status, T0, finished))
        for bucket in (T0, T0 + timedelta(days=3)):  # hourly buckets: one old, one recent
            await conn.execute(
                "INSERT INTO job_stats_hourly (job_id, bucket_start, team_id, succeeded) "
                "VALUES (%s, %s, %s, 1)", (quiet, bucket, actor.team_id))
        await conn.commit()
    await project_all(pool)

    now = T0 + timedelta(days=3, hours=6)
    dry = await pruning.plan(pool, settings, now)
    assert dry.deleted["runs"] == 35 and dry.deleted["notifications"] == 3
    live_before = await snapshot(pool)
    result = await pruning.prune(pool, settings, now)
    assert result is not None and not result.deferred
    assert "events_runs_p20261120" in {p.leaf.name for p in result.planned}
    # The busy job: its 5 recent runs and its 95 newest old ones are its newest 100; of the
    # others, the 35 oldest finished go and the stuck one (in flight, older) stays.
    assert result.deleted["runs"] == 35 and result.deleted["notifications"] == 3
    assert result.deleted["job_stats_hourly"] == 1  # kept as long as runs
    listed = await list_runs(pool, actor, busy, limit=200, before=None)
    assert [r["id"] for r in listed] == [*reversed(recent), *reversed(old[35:]), *stuck]
    assert len(await list_runs(pool, actor, quiet, limit=200, before=None)) == len(quiet_old)
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT id FROM notifications")
        assert {r["id"] for r in await cur.fetchall()} == {notes["pending"], notes["sent_late"]}
        cur = await conn.execute("SELECT data FROM events WHERE event_type = 'log.pruned'")
        logged = (await cur.fetchone())["data"]
        cur = await conn.execute("SELECT count(*) AS n FROM runs")
        assert (await cur.fetchone())["n"] == len(live_before["runs"]) - 35
        # The snapshot copies only the runs created before the end of the newest runs leaf
        # dropped (2026-11-21): the recent ones are all in the log.
        cur = await conn.execute(f"SELECT id FROM cronledger_snapshots.s{result.snapshot_id}_runs")
        assert {r["id"] for r in await cur.fetchall()} == {*old[35:], *stuck, *quiet_old}
    assert logged["deleted"]["runs"] == 35 and logged["deleted"]["notifications"] == 3
    assert "runs" in logged["kinds"]
    assert [r["bucket_start"] for r in (await snapshot(pool))["job_stats_hourly"]] == [
        T0 + timedelta(days=3)]

    # A second prune, a day later: nothing more of the busy job goes (its newest 100 and the
    # stuck one are left).
    more = await pruning.prune(pool, settings, now + timedelta(days=1))
    assert more is not None and more.deleted["runs"] == 0
    await project_all(pool)
    live = await snapshot(pool)
    async with pool.connection() as conn:
        await conn.execute("UPDATE runs SET error = 'damaged', version = version + 7")
        await conn.execute("DELETE FROM job_stats_daily")
        await conn.commit()
    await rebuild(pool, now + timedelta(days=1))
    await project_all(pool)
    rebuilt = await snapshot(pool)
    for table in live:
        assert rebuilt[table] == live[table], table
    assert len([r for r in rebuilt["runs"] if r["job_id"] == busy]) == 101


async def test_a_leaf_whose_lock_is_not_granted_stays_and_log_pruned_says_so(
        fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings,
        monkeypatch: pytest.MonkeyPatch) -> None:
    settings = short(settings)
    monkeypatch.setattr(pruning, "LOCK_ATTEMPTS", 2)
    await ensure_partitions(fresh_pool, T0, 1)
    before = await leaf_names(fresh_pool)
    later = T0 + timedelta(days=5)
    planned = {p.leaf.name for p in (await pruning.plan(fresh_pool, settings, later)).planned}
    held = "events_pings_p20261120"
    assert {held, "monitor_ping_bodies_p20261120"} <= planned
    with psycopg.connect(fresh_dsn) as other:  # a long reader of that day's pings
        other.execute(f"LOCK TABLE {held} IN ACCESS SHARE MODE")
        result = await pruning.prune(fresh_pool, settings, later)
    assert result is not None
    # The pings leaf stays, and so does its day's bodies leaf (its pings' copies need them).
    assert set(result.deferred) == {held, "monitor_ping_bodies_p20261120"}
    dropped = {p.leaf.name for p in result.planned}
    assert dropped == planned - set(result.deferred)
    assert await leaf_names(fresh_pool) == before - dropped
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT data FROM events WHERE event_type = 'log.pruned'")
        logged = (await cur.fetchone())["data"]
    assert {n for k in logged["kinds"].values() for n in k["partitions"]} == dropped
    assert set(logged["deferred"]) == set(result.deferred)
    again = await pruning.prune(fresh_pool, settings, later)
    assert again is not None and {p.leaf.name for p in again.planned} == set(result.deferred)
    assert await leaf_names(fresh_pool) == before - planned
