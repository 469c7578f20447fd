"""Overlap and catch-up policies (docs/schedules.md), driven by the frozen clock, never by
sleeping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.clock import FrozenClock, rfc3339
from core.db import ConnectionPool
from core.jobs.queries import get_job
from core.runs.worker import Worker
from tests.helpers import add_job, due_at, new_actor, run_events, runs_of
from tests.sink import Reply, Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)


def summary(runs: list[dict]) -> list[tuple[timedelta, str, str]]:
    return [(r["scheduled_for"] - T0, r["trigger"], r["status"]) for r in runs]


@pytest.mark.parametrize(("policy", "expected"), [
    ("skip", [(MIN, "succeeded"), (2 * MIN, "skipped"), (3 * MIN, "skipped")]),
    ("allow", [(MIN, "succeeded"), (2 * MIN, "succeeded"), (3 * MIN, "succeeded")]),
    ("queue", [(MIN, "succeeded"), (2 * MIN, "succeeded"), (3 * MIN, "skipped")]),
])
async def test_run_longer_than_interval(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    policy: str, expected: list[tuple[timedelta, str]],
) -> None:
    actor = await new_actor(fresh_pool)
    sink.reply("/slow", Reply(delay=1.0))
    # A long timeout: the frozen clock jumps minutes while the request is in flight, and the
    # lease (timeout + margin) must not expire meanwhile.
    job = await add_job(fresh_pool, actor, T0, sink.url("/slow"), "* * * * *", overlap=policy,
                        timeout_seconds=600)
    for minute in (1, 2, 3):  # slots 2 and 3 come while slot 1's request is still in flight
        clock.set(T0 + minute * MIN)
        await worker.run_once()
    await worker.settle()
    clock.set(T0 + 3 * MIN + timedelta(seconds=1))
    await worker.run_once()  # a buffered run is released when the running one ended
    await worker.settle()
    runs = await runs_of(fresh_pool, job)
    assert [(r["scheduled_for"] - T0, r["status"]) for r in runs] == expected
    assert len(sink.hits) == sum(1 for _, status in expected if status == "succeeded")
    for run in runs:
        if run["status"] == "skipped":
            assert "overlap policy skip" in run["reason"]
            [event] = await run_events(fresh_pool, run["id"])
            assert event["event_type"] == "run.skipped" and event["data"]["reason"]


@pytest.mark.parametrize(("schedule", "down_until", "policy", "fired", "missed"), [
    ("0 * * * *", timedelta(hours=3, minutes=30), "latest", 1, 2),
    ("0 * * * *", timedelta(hours=3, minutes=30), "skip", 0, 3),
    ("0 * * * *", timedelta(hours=3, minutes=30), "all", 3, 0),
    ("* * * * *", timedelta(hours=3, seconds=30), "latest", 1, 179),
    ("* * * * *", timedelta(hours=3, seconds=30), "skip", 0, 180),
    ("* * * * *", timedelta(hours=3, seconds=30), "all", 100, 80),
])
async def test_three_hours_of_downtime(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    schedule: str, down_until: timedelta, policy: str, fired: int, missed: int,
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/c"), schedule, catchup=policy)
    clock.set(T0 + down_until)  # the scheduler comes back after three hours
    await worker.run_once()
    await worker.settle()
    runs = await runs_of(fresh_pool, job)
    ran = [r for r in runs if r["status"] == "succeeded"]
    assert len(ran) == fired and len(sink.hits) == fired
    assert all(r["trigger"] == "catchup" for r in ran)
    lost = [r for r in runs if r["status"] == "missed"]
    assert len(lost) == missed
    assert len(runs) == fired + missed
    if ran:  # the most recent slot is always among the runs (latest and all)
        assert max(r["scheduled_for"] for r in ran) == max(r["scheduled_for"] for r in runs)
        assert sorted(h.headers["X-Cronledger-Scheduled-For"] for h in sink.hits) == sorted(
            rfc3339(r["scheduled_for"]) for r in ran)
    for run in lost[:3]:
        [event] = await run_events(fresh_pool, run["id"])
        assert event["event_type"] == "run.missed" and policy in event["data"]["reason"]
    # The next slot is computed from now: no backlog is fired later.
    step = timedelta(hours=1) if schedule.startswith("0") else MIN
    assert await due_at(fresh_pool, job) == T0 + (down_until // step + 1) * step
    clock.set(T0 + down_until + timedelta(seconds=1))
    await worker.run_once()
    await worker.settle()
    assert len(await runs_of(fresh_pool, job)) == fired + missed


async def test_slot_late_within_grace_is_not_missed(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/g"), "0 * * * *", catchup="skip")
    clock.set(T0 + timedelta(hours=1, seconds=5))
    await worker.run_once()
    await worker.settle()
    [run] = await runs_of(fresh_pool, job)
    assert (run["trigger"], run["status"], run["lateness_ms"]) == ("schedule", "succeeded", 5000)


async def test_one_shot_fires_once_then_completes(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    at = T0 + timedelta(hours=1)
    job = await add_job(fresh_pool, actor, T0, sink.url("/once"), f"@at {rfc3339(at)}")
    assert await due_at(fresh_pool, job) == at
    for offset in (timedelta(0), timedelta(seconds=1), timedelta(hours=1)):
        clock.set(at + offset)
        await worker.run_once()
        await worker.settle()
    assert len(sink.hits) == 1
    assert await due_at(fresh_pool, job) is None
    state = await get_job(fresh_pool, actor, job)
    assert state["status"] == "completed" and state["next_run_at"] is None
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT event_type FROM events WHERE stream_id = %s ORDER BY stream_version", (job,))
        kinds = [r["event_type"] for r in await cur.fetchall()]
    assert kinds == ["job.created", "job.completed"]
