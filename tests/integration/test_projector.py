"""The asynchronous projector: horizon, checkpoint, concurrency, wake-up, and its read models."""

from __future__ import annotations

import asyncio
import math
import random
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from core.clock import SystemClock
from core.db import Connection, ConnectionPool, transaction
from core.events import NewEvent, append_events, notify_wakeup
from core.projections import histogram
from core.projections.projector import CheckpointMoved, Projector, project_batch
from core.queries import Q
from tests.helpers import MonitorStream, eventually, new_actor, project_all, signal_on

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
async def conns(fresh_dsn: str) -> AsyncIterator[list[Connection]]:
    opened = [await psycopg.AsyncConnection.connect(fresh_dsn, row_factory=dict_row)
              for _ in range(2)]
    yield opened
    for conn in opened:
        await conn.close()


async def _pings(pool: ConnectionPool, monitor_id: uuid.UUID) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT coalesce(sum(pings), 0)::int AS n FROM monitor_pings_daily "
            "WHERE monitor_id = %s", (monitor_id,))
        return (await cur.fetchone())["n"]


async def _checkpoint(pool: ConnectionPool) -> dict[str, Any]:
    async with pool.connection() as conn:
        cur = await conn.execute(Q["projection_checkpoint_get"], {"name": "reporting"})
        return await cur.fetchone()


def outcome_events(team_id: uuid.UUID, job_id: uuid.UUID, slot: datetime,
                   outcomes: list[tuple[str, int, int]]) -> list[NewEvent]:
    """One finished run per ``(kind, duration_ms, lateness_ms)``, each on its own stream."""
    events = []
    for kind, duration, lateness in outcomes:
        data = {"job_id": job_id, "scheduled_for": slot, "trigger": "schedule", "attempt": 1,
                "duration_ms": duration, "lateness_ms": lateness, "finished_at": slot}
        if kind in ("run.skipped", "run.missed"):
            data = {"job_id": job_id, "scheduled_for": slot, "trigger": "schedule",
                    "reason": "test", "finished_at": slot}
        events.append(NewEvent("run", uuid.uuid4(), 1, kind, team_id, slot, data))
    return events


async def test_an_older_transaction_committing_late_is_still_applied(
    fresh_pool: ConnectionPool, conns: list[Connection]
) -> None:
    team = (await new_actor(fresh_pool)).team_id
    late, early = MonitorStream(team), MonitorStream(team)
    await late.append(fresh_pool, T0, ("monitor.created", {"name": "late"}))
    await early.append(fresh_pool, T0, ("monitor.created", {"name": "early"}))
    await project_all(fresh_pool)
    older, younger = conns
    # `older` takes its transaction id first; `younger` then appends first (lower position)
    # and commits last. A projector that followed global_position alone would skip its event.
    await older.execute("SELECT pg_current_xact_id()")
    [late_position] = await append_events(
        younger, late.events(T0 + timedelta(seconds=1), ("monitor.pinged", {"kind": "success"})))
    [early_position] = await append_events(
        older, early.events(T0 + timedelta(seconds=2), ("monitor.pinged", {"kind": "success"})))
    assert early_position > late_position
    await older.commit()
    await project_all(fresh_pool, positions=[early_position])
    assert (await _pings(fresh_pool, early.id), await _pings(fresh_pool, late.id)) == (1, 0)
    assert (await _checkpoint(fresh_pool))["global_position"] == early_position
    await younger.commit()
    await project_all(fresh_pool)
    assert (await _pings(fresh_pool, early.id), await _pings(fresh_pool, late.id)) == (1, 1)
    checkpoint = await _checkpoint(fresh_pool)
    assert checkpoint["global_position"] == late_position < early_position  # (tx, position) order
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM events")
        assert checkpoint["events_applied"] == (await cur.fetchone())["n"]


async def test_uncommitted_events_hold_the_projection_back(
    fresh_pool: ConnectionPool, conns: list[Connection]
) -> None:
    team = (await new_actor(fresh_pool)).team_id
    monitor = MonitorStream(team)
    await monitor.append(fresh_pool, T0, ("monitor.created", {"name": "m"}))
    await project_all(fresh_pool)
    blocker, _ = conns
    await append_events(blocker, monitor.events(T0, ("monitor.pinged", {"kind": "success"})))
    later = MonitorStream(team)
    await later.append(fresh_pool, T0, ("monitor.created", {"name": "n"}),
                       ("monitor.pinged", {"kind": "fail"}))
    async with transaction(fresh_pool) as conn:
        assert await project_batch(conn, SystemClock().now(), 100) == 0
    assert await _pings(fresh_pool, later.id) == 0
    await blocker.rollback()  # an aborted transaction's events never existed
    await project_all(fresh_pool)
    assert (await _pings(fresh_pool, monitor.id), await _pings(fresh_pool, later.id)) == (0, 1)


async def test_a_locked_checkpoint_is_skipped_and_never_moves_back(
    fresh_pool: ConnectionPool, conns: list[Connection]
) -> None:
    team = (await new_actor(fresh_pool)).team_id
    await MonitorStream(team).append(fresh_pool, T0, ("monitor.created", {"name": "m"}))
    holder, _ = conns
    await holder.execute(Q["projection_checkpoint_lock"], {"name": "reporting"})
    async with transaction(fresh_pool) as conn:
        assert await project_batch(conn, SystemClock().now(), 100) is None
    await holder.rollback()
    await project_all(fresh_pool)
    before = await _checkpoint(fresh_pool)
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(Q["projection_checkpoint_advance"], {
            "name": "reporting", "tx_id": "1", "position": 1, "count": 1, "now": T0})
        assert await cur.fetchone() is None
    assert await _checkpoint(fresh_pool) == before
    assert issubclass(CheckpointMoved, RuntimeError)


async def test_concurrent_projectors_apply_each_event_once(fresh_pool: ConnectionPool,
                                                           fresh_dsn: str) -> None:
    team = (await new_actor(fresh_pool)).team_id
    job = uuid.uuid4()
    for _ in range(6):
        async with transaction(fresh_pool) as conn:
            await append_events(conn, outcome_events(
                team, job, T0, [("run.succeeded", 10, 1)] * 500))
    projectors = [Projector(fresh_pool, fresh_dsn, SystemClock(), batch_size=100)
                  for _ in range(3)]
    await asyncio.gather(*(p.run_once() for p in projectors for _ in range(4)))
    await project_all(fresh_pool)
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT succeeded, duration_histogram FROM job_stats_hourly WHERE job_id = %s", (job,))
        row = await cur.fetchone()
    assert row["succeeded"] == 3000
    assert sum(row["duration_histogram"].values()) == 3000


async def _checkpoint_reached(pool: ConnectionPool, position: int) -> bool:
    return (await _checkpoint(pool))["global_position"] >= position


async def test_notify_wakes_the_projector(fresh_pool: ConnectionPool, fresh_dsn: str) -> None:
    team = (await new_actor(fresh_pool)).team_id
    projector = Projector(fresh_pool, fresh_dsn, SystemClock(), interval=3600)
    listened = signal_on(projector, "on_listening")
    asleep = signal_on(projector, "sleep_until", after=listened)  # idle, and a NOTIFY would wake it
    task = asyncio.create_task(projector.run())
    try:
        await eventually(asleep.is_set, what="the projector asleep (up to an hour)")
        monitor = MonitorStream(team)
        async with transaction(fresh_pool) as conn:
            [position] = await append_events(conn, monitor.events(
                T0, ("monitor.created", {"name": "woken"})))
            await notify_wakeup(conn, "test")
        await eventually(lambda: _checkpoint_reached(fresh_pool, position),
                         what="the projector's checkpoint past the new event")
    finally:
        projector.stop()
        await task


async def test_job_stats_per_hour_and_day(fresh_pool: ConnectionPool) -> None:
    team = (await new_actor(fresh_pool)).team_id
    job = uuid.uuid4()
    rng = random.Random(5)
    durations = [rng.randint(1, 5000) for _ in range(200)]
    lateness = [rng.choice([0, 0, 3, 40, 900, 12000]) for _ in range(200)]
    slot = T0 + timedelta(minutes=5)
    outcomes = [("run.succeeded" if i % 4 else "run.failed", d, late)
                for i, (d, late) in enumerate(zip(durations, lateness, strict=True))]
    events = outcome_events(team, job, slot, outcomes)
    events += outcome_events(team, job, slot + timedelta(hours=1),
                             [("run.skipped", 0, 0), ("run.missed", 0, 0), ("run.missed", 0, 0)])
    events.append(NewEvent("run", uuid.uuid4(), 2, "run.retry_scheduled", team, slot, {
        "job_id": job, "scheduled_for": slot, "trigger": "schedule", "attempt": 1,
        "duration_ms": 7, "lateness_ms": 0, "available_at": slot}))
    async with transaction(fresh_pool) as conn:
        await append_events(conn, events)
    await project_all(fresh_pool)
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT * FROM job_stats_hourly WHERE job_id = %s ORDER BY bucket_start", (job,))
        hours = await cur.fetchall()
        cur = await conn.execute("SELECT * FROM job_stats_daily WHERE job_id = %s", (job,))
        [day] = await cur.fetchall()
        cur = await conn.execute("SELECT * FROM job_stats_weekly WHERE job_id = %s", (job,))
        [week] = await cur.fetchall()
        cur = await conn.execute("SELECT * FROM team_runs_hourly WHERE team_id = %s", (team,))
        team_rows = await cur.fetchall()
    assert [h["bucket_start"] for h in hours] == [T0, T0 + timedelta(hours=1)]
    assert (hours[0]["succeeded"], hours[0]["failed"], hours[0]["retries"]) == (150, 50, 1)
    assert (hours[1]["skipped"], hours[1]["missed"]) == (1, 2)
    assert day["bucket_start"] == datetime(2026, 11, 30, tzinfo=UTC)
    assert (day["succeeded"], day["failed"], day["skipped"], day["missed"]) == (150, 50, 1, 2)
    assert week["bucket_start"] == datetime(2026, 11, 30, tzinfo=UTC)  # a Monday
    assert {k: week[k] for k in ("succeeded", "duration_histogram", "p95_lateness_ms")} == {
        k: day[k] for k in ("succeeded", "duration_histogram", "p95_lateness_ms")}
    assert day["p95_duration_ms"] == histogram.percentile(day["duration_histogram"], 0.95)
    assert sorted((r["succeeded"], r["missed"]) for r in team_rows) == [(0, 2), (150, 0)]
    for samples, column in ((durations, "duration_histogram"), (lateness, "lateness_histogram")):
        for q in (0.5, 0.95):
            exact = sorted(samples)[math.ceil(q * len(samples)) - 1]
            estimate = histogram.percentile(day[column], q)
            assert abs(estimate - exact) <= 0.049 * exact + 0.5, (q, column)


def test_histogram_precision_against_exact_percentiles() -> None:
    rng = random.Random(7)
    for _ in range(200):
        samples = [int(rng.lognormvariate(rng.uniform(0, 12), rng.uniform(0.1, 2)))
                   for _ in range(rng.randint(1, 300))]
        h: histogram.Histogram = {}
        for value in samples:
            histogram.add(h, value)
        for q in (0.01, 0.5, 0.95, 0.99, 1.0):
            exact = sorted(samples)[max(1, math.ceil(q * len(samples))) - 1]
            estimate = histogram.percentile(h, q)
            assert estimate is not None
            if exact == 0:
                assert estimate == 0
            elif exact < histogram.RATIO ** (histogram.TOP - 1):
                assert abs(estimate - exact) <= 0.049 * exact + 0.5, (samples, q)
    assert histogram.percentile({}, 0.5) is None
    assert histogram.merge([{"1": 2}, {1: 1, 5: 1}]) == {1: 3, 5: 1}


async def test_job_health_tracks_the_last_outcome(fresh_pool: ConnectionPool) -> None:
    actor = await new_actor(fresh_pool)
    job = uuid.uuid4()
    created = NewEvent("job", job, 1, "job.created", actor.team_id, T0, {
        "name": "nightly", "status": "active", "schedule": "@daily"})
    renamed = NewEvent("job", job, 2, "job.updated", actor.team_id, T0,
                       {"changes": {"name": "nightly export"}})
    async with transaction(fresh_pool) as conn:
        await append_events(conn, [created, renamed])
        await append_events(conn, outcome_events(actor.team_id, job, T0, [
            ("run.failed", 5, 0), ("run.failed", 5, 0), ("run.succeeded", 5, 0),
            ("run.failed", 5, 0), ("run.failed", 5, 0), ("run.missed", 0, 0)]))
        await append_events(conn, [NewEvent("job", job, 3, "job.paused", actor.team_id, T0)])
    await project_all(fresh_pool)
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM job_health WHERE job_id = %s", (job,))
        row = await cur.fetchone()
    assert (row["name"], row["status"], row["last_outcome"], row["consecutive_failures"]) == (
        "nightly export", "paused", "failed", 2)


async def test_monitor_status_pings_and_downtime(fresh_pool: ConnectionPool) -> None:
    team = (await new_actor(fresh_pool)).team_id
    m = MonitorStream(team)
    at = T0.replace(hour=23, minute=0)
    await m.append(fresh_pool, at, ("monitor.created", {"name": "backup"}))
    await m.append(fresh_pool, at, ("monitor.pinged", {"kind": "start"}),
                   ("monitor.pinged", {"kind": "success"}), ("monitor.up", {}))
    await m.append(fresh_pool, at + timedelta(hours=1), ("monitor.pinged", {"kind": "fail"}),
                   ("monitor.down", {}))
    await m.append(fresh_pool, at + timedelta(hours=2), ("monitor.down", {}))  # still the same
    await m.append(fresh_pool, at + timedelta(hours=3), ("monitor.pinged", {"kind": "success"}),
                   ("monitor.up", {}))
    await m.append(fresh_pool, at + timedelta(hours=4), ("monitor.late", {}), ("monitor.down", {}))
    await m.append(fresh_pool, at + timedelta(hours=5), ("monitor.paused", {}))
    await m.append(fresh_pool, at + timedelta(hours=6), ("monitor.resumed", {}),
                   ("monitor.updated", {"changes": {"name": "nightly backup"}}),
                   ("monitor.down", {}))
    await project_all(fresh_pool)
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM monitor_state WHERE monitor_id = %s", (m.id,))
        state = await cur.fetchone()
        cur = await conn.execute(
            "SELECT day, pings, success, start, fail, log FROM monitor_pings_daily "
            "WHERE monitor_id = %s ORDER BY day", (m.id,))
        days = await cur.fetchall()
        cur = await conn.execute(
            "SELECT started_at, ended_at, end_reason FROM monitor_downtime WHERE monitor_id = %s "
            "ORDER BY started_at", (m.id,))
        periods = await cur.fetchall()
    assert (state["name"], state["status"]) == ("nightly backup", "down")
    assert state["down_since"] == at + timedelta(hours=6)
    assert state["last_ping_at"] == at + timedelta(hours=3)
    assert [(d["day"], d["pings"], d["success"], d["start"], d["fail"]) for d in days] == [
        (date(2026, 11, 30), 2, 1, 1, 0), (date(2026, 12, 1), 2, 1, 0, 1)]
    assert [(p["started_at"], p["ended_at"], p["end_reason"]) for p in periods] == [
        (at + timedelta(hours=1), at + timedelta(hours=3), "up"),
        (at + timedelta(hours=4), at + timedelta(hours=5), "paused"),
        (at + timedelta(hours=6), None, None)]
