"""Database outages seen by the worker (issue #11), driven by the frozen clock and by a TCP
proxy between the pool and PostgreSQL that the test cuts (tests/proxy.py); never by sleeping.

- the claim instant is read after the pool hands out a connection (a stale clock fired a slot
  28 s late as an ordinary ``schedule`` run);
- catch-up after an outage follows docs/schedules.md (10 s on-time grace, then the policy);
- a finished exchange whose recording is being retried does not make the next slot ``skipped``;
- a result discarded because its lease was lost is logged.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from psycopg_pool import AsyncConnectionPool

from core.clock import FrozenClock
from core.config import Settings
from core.db import open_pool
from core.worker import Worker
from tests.helpers import add_job, make_worker, new_actor, runs_of
from tests.sink import Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
S = timedelta(seconds=1)


async def until(check, what: str, timeout: float = 10.0) -> None:  # noqa: ANN001
    """Wait for ``check()`` to be true: a bounded loop on a condition, not a sleep."""
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.01)


def summary(runs: list[dict]) -> list[tuple[float, str, str]]:
    return [((r["scheduled_for"] - T0) / S, r["trigger"], r["status"]) for r in runs]


# -- catch-up after an outage (docs/schedules.md, "Catch-up") ----------------------------------
@pytest.mark.parametrize(("policy", "overlap", "expected"), [
    ("latest", "allow",
     [(t, "schedule", "missed") for t in (2, 4, 6, 8)] + [(10, "catchup", "succeeded")]
     + [(t, "schedule", "succeeded") for t in (12, 14, 16, 18, 20)]),
    ("skip", "allow",
     [(t, "schedule", "missed") for t in (2, 4, 6, 8, 10)]
     + [(t, "schedule", "succeeded") for t in (12, 14, 16, 18, 20)]),
    ("all", "allow",
     [(t, "catchup", "succeeded") for t in (2, 4, 6, 8, 10)]
     + [(t, "schedule", "succeeded") for t in (12, 14, 16, 18, 20)]),
    # overlap skip: the catch-up run is in flight when the on-time slots come
    ("latest", "skip",
     [(t, "schedule", "missed") for t in (2, 4, 6, 8)] + [(10, "catchup", "succeeded")]
     + [(t, "schedule", "skipped") for t in (12, 14, 16, 18, 20)]),
])
async def test_catchup_after_a_20_second_outage(
    fresh_pool: AsyncConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    policy: str, overlap: str, expected: list[tuple[float, str, str]],
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/c"), "*/2 * * * * *",
                        catchup=policy, overlap=overlap)
    clock.set(T0 + 20.5 * S)  # slots 2..20 s passed; the grace reaches back to 10.5 s
    await worker.run_once()
    await worker.settle()
    runs = await runs_of(fresh_pool, job)
    assert summary(runs) == expected
    ran = [r for r in runs if r["status"] == "succeeded"]
    assert len(sink.hits) == len(ran)
    for run in ran:  # lateness is measured from each run's own slot
        assert run["lateness_ms"] == (T0 + 20.5 * S - run["scheduled_for"]) / S * 1000


@pytest.mark.parametrize("late", [2, 5, 8, 10])
async def test_a_slot_at_most_10_s_late_is_on_time_under_every_policy(
    fresh_pool: AsyncConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    late: float,
) -> None:
    actor = await new_actor(fresh_pool)
    jobs = {policy: await add_job(fresh_pool, actor, T0, sink.url(f"/{policy}"), "0 * * * *",
                                  catchup=policy, name=policy)
            for policy in ("latest", "skip", "all")}
    clock.set(T0 + timedelta(hours=1) + late * S)
    await worker.run_once()
    await worker.settle()
    for job in jobs.values():
        [run] = await runs_of(fresh_pool, job)
        assert (run["trigger"], run["status"], run["lateness_ms"]) == (
            "schedule", "succeeded", late * 1000)


@pytest.mark.parametrize(("policy", "expected"), [
    ("latest", ("catchup", "succeeded")), ("skip", ("schedule", "missed")),
    ("all", ("catchup", "succeeded"))])
async def test_a_slot_more_than_10_s_late_goes_through_catchup(
    fresh_pool: AsyncConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    policy: str, expected: tuple[str, str],
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/x"), "0 * * * *", catchup=policy)
    clock.set(T0 + timedelta(hours=1, seconds=10, milliseconds=1))
    await worker.run_once()
    await worker.settle()
    [run] = await runs_of(fresh_pool, job)
    assert (run["trigger"], run["status"]) == expected


# -- the claim instant is read once the connection is obtained ---------------------------------
async def test_claim_uses_the_instant_after_waiting_for_the_pool(
    fresh_dsn: str, settings: Settings, clock: FrozenClock, sink: Sink
) -> None:
    pool = await open_pool(fresh_dsn, min_size=2, max_size=2)
    worker = make_worker(pool, fresh_dsn, settings, clock)
    try:
        actor = await new_actor(pool)
        job = await add_job(pool, actor, T0, sink.url("/stale"), "0 * * * *",
                            timeout_seconds=30)
        clock.set(T0 + timedelta(hours=1, seconds=1))  # on time when the claim starts...
        held = [await pool.getconn() for _ in range(2)]  # ...but the pool has nothing to give
        claiming = asyncio.create_task(worker.run_once())
        async with asyncio.timeout(10):
            while pool.get_stats().get("requests_waiting", 0) == 0:
                await asyncio.sleep(0.01)
        clock.advance(20)  # the wait lasted 20 s (an outage)
        for conn in held:
            await pool.putconn(conn)
        await claiming
        async with pool.connection() as conn:
            cur = await conn.execute("SELECT trigger, created_at, lease_expires_at "
                                     "FROM runs WHERE job_id = %s", (job,))
            [row] = await cur.fetchall()
        claimed_at = T0 + timedelta(hours=1, seconds=21)
        assert row["created_at"] == claimed_at
        assert row["trigger"] == "catchup"  # 21 s late: catch-up decides, not "schedule"
        assert row["lease_expires_at"] == claimed_at + timedelta(
            seconds=30 + settings.lease_margin_seconds)
        await worker.settle()
        [run] = await runs_of(pool, job)
        assert run["lateness_ms"] == 21_000
    finally:
        await worker.settle()
        await worker.executor.aclose()
        await pool.close()
