"""A job's spread on the real scheduler (docs/schedules.md, *Spread*): each slot fires at slot +
offset exactly once, across a worker restart and an outage, inside or outside a maintenance
window by its fire time; an edit of the spread keeps the pending slot; the rebuild agrees.

Real PostgreSQL, a real local HTTP server (tests/sink.py), a frozen clock.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from core.actor import Actor
from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.errors import InvalidInput
from core.jobs.commands import update_job
from core.maintenance.commands import create_window
from core.replay.jobs import simulate_job
from core.runs.worker import Worker
from core.schedule.spread import offset_seconds
from tests.helpers import add_job, due_at, make_worker, new_actor, run_events, runs_of
from tests.processes import run_cli
from tests.sink import Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)
# Jobs are created here: the 12:00 slot's window (to 12:15) is over, the next slot is 13:00.
CREATED = T0 + timedelta(minutes=30)


async def tick(worker: Worker, clock: FrozenClock, at: datetime) -> int:
    clock.set(at)
    claimed = await worker.run_once()
    await worker.settle()
    return claimed


async def spread_job(pool: ConnectionPool, actor: Actor, sink: Sink, path: str,
                     **fields: object) -> tuple[uuid.UUID, timedelta]:
    """An hourly job with a 15-minute spread whose offset is at least 20 s (the tests need
    room either side of the fire time): ids are drawn until one fits."""
    while True:
        job = await add_job(pool, actor, CREATED, sink.url(path), "0 * * * *", spread="15m",
                            **fields)
        offset = timedelta(seconds=offset_seconds(job, 900))
        if offset >= timedelta(seconds=20):
            return job, offset
        await update_job(pool, actor, job, {"name": f"unused {job}", "paused": True}, CREATED)


def slots(runs: list[dict[str, object]]) -> list[tuple[object, object, object]]:
    return [(r["scheduled_for"], r["trigger"], r["status"]) for r in runs]


async def test_a_spread_job_fires_at_slot_plus_offset_exactly_once(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    job, offset = await spread_job(fresh_pool, actor, sink, "/spread")
    plain = await add_job(fresh_pool, actor, CREATED, sink.url("/plain"), "0 * * * *")
    slot = T0 + HOUR
    fire = slot + offset
    assert await due_at(fresh_pool, job) == fire
    # The plain job fires at the slot; the spread one not before its fire time.
    await tick(worker, clock, slot)
    assert [h.path for h in sink.hits] == ["/plain"]
    await tick(worker, clock, fire - timedelta(seconds=2))
    assert [h.path for h in sink.hits] == ["/plain"]
    await tick(worker, clock, fire + timedelta(milliseconds=150))
    [_, hit] = sink.hits
    assert hit.path == "/spread"
    # The slot stays the identity of the run: its header, its key, its row.
    assert hit.headers["X-Cronledger-Scheduled-For"] == "2026-11-30T13:00:00Z"
    [run] = await runs_of(fresh_pool, job)
    assert hit.headers["Idempotency-Key"] == str(run["id"])
    assert (run["scheduled_for"], run["trigger"], run["status"]) == (slot, "schedule",
                                                                     "succeeded")
    assert run["lateness_ms"] == 150  # measured from the fire time, not the slot
    [started, _] = await run_events(fresh_pool, run["id"])
    assert started["data"]["fire_at"] == fire.isoformat().replace("+00:00", "Z")
    assert await due_at(fresh_pool, job) == fire + HOUR
    # Claimed again at the same instant (the due row put back): still one run, one request.
    async with fresh_pool.connection() as conn:
        await conn.execute("UPDATE due_jobs SET due_at = %s WHERE job_id = %s", (fire, job))
    await tick(worker, clock, fire + timedelta(seconds=1))
    assert len(await runs_of(fresh_pool, job)) == 1 and len(sink.hits) == 2
    assert "fire_at" not in (await run_events(
        fresh_pool, (await runs_of(fresh_pool, plain))[0]["id"]))[0]["data"]


async def test_a_worker_restart_neither_repeats_nor_drops_a_slot(
    fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings, clock: FrozenClock,
    sink: Sink,
) -> None:
    actor = await new_actor(fresh_pool)
    job, offset = await spread_job(fresh_pool, actor, sink, "/r")
    first = make_worker(fresh_pool, fresh_dsn, settings, clock, "worker-a")
    await tick(first, clock, T0 + HOUR + offset)
    await first.executor.aclose()
    second = make_worker(fresh_pool, fresh_dsn, settings, clock, "worker-b")
    try:
        assert await tick(second, clock, T0 + HOUR + offset + timedelta(seconds=5)) == 0
        assert await tick(second, clock, T0 + 2 * HOUR + offset - timedelta(seconds=3)) == 0
        await tick(second, clock, T0 + 2 * HOUR + offset)
    finally:
        await second.executor.aclose()
    assert slots(await runs_of(fresh_pool, job)) == [
        (T0 + HOUR, "schedule", "succeeded"), (T0 + 2 * HOUR, "schedule", "succeeded")]
    assert [h.headers["X-Cronledger-Scheduled-For"] for h in sink.hits] == [
        "2026-11-30T13:00:00Z", "2026-11-30T14:00:00Z"]


@pytest.mark.parametrize(("catchup", "expected"), [
    ("latest", [("13", "schedule", "missed"), ("14", "schedule", "missed"),
                ("15", "catchup", "succeeded")]),
    ("skip", [("13", "schedule", "missed"), ("14", "schedule", "missed"),
              ("15", "schedule", "missed")]),
])
async def test_an_outage_is_caught_up_by_fire_times(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    catchup: str, expected: list[tuple[str, str, str]],
) -> None:
    actor = await new_actor(fresh_pool)
    job, offset = await spread_job(fresh_pool, actor, sink, "/o", catchup=catchup)
    # Nothing ran from 12:00 until 16:00 + offset - 5 s: the 13, 14 and 15 o'clock slots'
    # fire times passed; the 16 o'clock slot's fire time is still 5 s ahead (not late, not
    # claimed: the slot after the outage is computed from the fire times).
    back = T0 + 4 * HOUR + offset - timedelta(seconds=5)
    await tick(worker, clock, back)
    runs = await runs_of(fresh_pool, job)
    assert [(f"{r['scheduled_for']:%H}", r["trigger"], r["status"]) for r in runs] == expected
    assert await due_at(fresh_pool, job) == T0 + 4 * HOUR + offset
    await tick(worker, clock, T0 + 4 * HOUR + offset)
    last = (await runs_of(fresh_pool, job))[-1]
    assert (last["scheduled_for"], last["trigger"]) == (T0 + 4 * HOUR, "schedule")


async def test_a_maintenance_window_holds_the_slots_whose_fire_time_it_covers(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    job, offset = await spread_job(fresh_pool, actor, sink, "/m")
    # The window covers the 13:00 slot itself but closes before its fire time; it covers the
    # 14:00 slot's fire time but not the slot.
    await create_window(fresh_pool, actor, {
        "from": T0 + HOUR, "to": T0 + HOUR + offset - timedelta(seconds=10), "jobs": [job],
        "suppress": "runs"}, CREATED)
    await create_window(fresh_pool, actor, {
        "from": T0 + 2 * HOUR + timedelta(seconds=10), "to": T0 + 2 * HOUR + offset
        + timedelta(seconds=10), "jobs": [job], "suppress": "runs"}, CREATED)
    await tick(worker, clock, T0 + HOUR + offset)
    await tick(worker, clock, T0 + 2 * HOUR + offset)
    runs = await runs_of(fresh_pool, job)
    assert [(r["scheduled_for"], r["status"], r["reason"]) for r in runs] == [
        (T0 + HOUR, "succeeded", None), (T0 + 2 * HOUR, "skipped", "maintenance")]


async def test_changing_the_spread_keeps_the_pending_slot(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    job, offset = await spread_job(fresh_pool, actor, sink, "/e")
    await update_job(fresh_pool, actor, job, {"spread": "30m"}, CREATED + timedelta(minutes=1))
    wider = timedelta(seconds=offset_seconds(job, 1800))
    assert await due_at(fresh_pool, job) == T0 + HOUR + wider
    await update_job(fresh_pool, actor, job, {"spread": None}, CREATED + timedelta(minutes=2))
    assert await due_at(fresh_pool, job) == T0 + HOUR
    await update_job(fresh_pool, actor, job, {"spread": 900}, CREATED + timedelta(minutes=3))
    assert await due_at(fresh_pool, job) == T0 + HOUR + offset
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT event_type, data FROM events WHERE stream_id = %s ORDER BY stream_version",
            (job,))
        events = await cur.fetchall()
    assert [(e["event_type"], e["data"]["changes"].get("spread")) for e in events[1:]] == [
        ("job.updated", 1800), ("job.updated", None), ("job.updated", 900)]
    await tick(worker, clock, T0 + HOUR + offset)
    assert slots(await runs_of(fresh_pool, job)) == [(T0 + HOUR, "schedule", "succeeded")]


async def test_spread_longer_than_the_schedule_allows_is_refused(
    fresh_pool: ConnectionPool, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    with pytest.raises(InvalidInput) as refused:
        await add_job(fresh_pool, actor, CREATED, sink.url("/x"), "*/5 * * * *", spread="6m")
    assert [e.field for e in refused.value.errors] == ["spread"]
    job = await add_job(fresh_pool, actor, CREATED, sink.url("/x"), "0 * * * *", spread="1h")
    with pytest.raises(InvalidInput) as refused:
        await update_job(fresh_pool, actor, job, {"schedule": "*/30 * * * *"}, CREATED)
    assert [e.field for e in refused.value.errors] == ["spread"]


async def test_the_rebuild_gives_the_same_due_fire_times(
    fresh_pool: ConnectionPool, fresh_dsn: str, worker: Worker, clock: FrozenClock,
    sink: Sink,
) -> None:
    actor = await new_actor(fresh_pool)
    fired, offset = await spread_job(fresh_pool, actor, sink, "/f")
    edited, _ = await spread_job(fresh_pool, actor, sink, "/g")
    await tick(worker, clock, T0 + HOUR + offset)
    await update_job(fresh_pool, actor, edited, {"spread": "20m"}, T0 + HOUR + offset)

    async def due_rows() -> list[dict[str, object]]:
        async with fresh_pool.connection() as conn:
            cur = await conn.execute("SELECT job_id, due_at FROM due_jobs ORDER BY job_id")
            return await cur.fetchall()

    live = await due_rows()
    async with fresh_pool.connection() as conn:
        await conn.execute("UPDATE due_jobs SET due_at = due_at + interval '1 day'")
    run_cli("projections", "rebuild", env={"DATABASE_URL": fresh_dsn})
    assert await due_rows() == live


async def test_a_replay_judges_spread_runs_at_their_fire_time(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    job, offset = await spread_job(fresh_pool, actor, sink, "/s")
    for hour in (1, 2):
        await tick(worker, clock, T0 + hour * HOUR + offset)
    end = T0 + 2 * HOUR + offset + timedelta(minutes=1)
    # A proposed window over the 13:00 slot that closes before its fire time skips nothing;
    # one over 14:00's fire time (and not the slot) skips that run.
    before_fire = await simulate_job(fresh_pool, actor, job, {"maintenance": [
        {"from": T0 + HOUR - timedelta(minutes=1), "to": T0 + HOUR + offset
         - timedelta(seconds=5), "suppress": "runs"}]}, T0, end, end)
    assert before_fire["outcomes"]["would_skip"] == 0
    at_fire = await simulate_job(fresh_pool, actor, job, {"maintenance": [
        {"from": T0 + 2 * HOUR + timedelta(seconds=5), "to": T0 + 2 * HOUR + offset
         + timedelta(seconds=5), "suppress": "runs"}]}, T0, end, end)
    assert at_fire["outcomes"] == {"succeeded": 2, "failed": 0, "would_skip": 1}
