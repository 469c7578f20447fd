"""Database outages seen by the worker (docs/operations.md, "Database outages"), driven by the
frozen clock and by a TCP
proxy between the pool and PostgreSQL that the test cuts (tests/proxy.py); never by sleeping.

- the claim instant is read after the pool hands out a connection (a stale clock fired a slot
  28 s late as an ordinary ``schedule`` run);
- catch-up after an outage follows docs/schedules.md (10 s on-time grace, then the policy);
- a finished exchange whose recording is being retried does not make the next slot ``skipped``;
- a result discarded because its lease was lost is logged.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool, open_pool
from core.monitors.ping import PingPool
from core.runs.worker import Worker
from tests.helpers import add_job, eventually, make_worker, new_actor, runs_of
from tests.sink import Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
S = timedelta(seconds=1)


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
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
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
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
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
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
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
        await eventually(lambda: pool.get_stats().get("requests_waiting", 0) > 0, 10, 0.01,
                         "the claim waiting for a pool connection")
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


# -- a finished exchange whose recording is retried does not hold the next slot ----------------
async def test_next_slot_fires_while_the_previous_result_is_still_being_recorded(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/r"), "* * * * *", overlap="skip")
    record = worker.recorder.record
    failures = 0
    broken = True

    async def failing(results, now):  # noqa: ANN001, ANN202 - the recorder's signature
        nonlocal failures
        if broken:
            failures += 1
            raise psycopg.OperationalError("connection to server lost (injected)")
        return await record(results, now)

    worker.recorder.record = failing  # type: ignore[method-assign]
    clock.set(T0 + timedelta(minutes=1))
    await worker.run_once()
    await asyncio.gather(*worker.inflight)  # slot 1: the exchange is over
    recording = asyncio.create_task(worker.drain())
    await eventually(lambda: failures >= 2, 10, 0.01, "the recording of slot 1 to fail twice")
    clock.set(T0 + timedelta(minutes=2))
    await worker.run_once()  # slot 2 is claimed while slot 1's result is not recorded yet
    runs = await runs_of(fresh_pool, job)
    assert [(r["scheduled_for"] - T0, r["status"]) for r in runs] == [
        (timedelta(minutes=1), "running"), (timedelta(minutes=2), "running")]
    broken = False
    async with asyncio.timeout(10):
        await recording
    await worker.settle()
    runs = await runs_of(fresh_pool, job)
    assert [(r["scheduled_for"] - T0, r["status"]) for r in runs] == [
        (timedelta(minutes=1), "succeeded"), (timedelta(minutes=2), "succeeded")]
    assert len(sink.hits) == 2
    assert worker.unrecorded == {}


async def test_a_finished_exchange_is_not_taken_over_by_its_own_worker(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    """The outage outlasted the lease: the worker that holds the result does not send the
    request again; it records the result once the database is back."""
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/own"), "0 * * * *",
                        timeout_seconds=10)
    clock.set(T0 + timedelta(hours=1))
    await worker.run_once()
    await asyncio.gather(*worker.inflight)
    clock.advance(60)  # past the lease (10 s + margin 5 s); the result is still in memory
    await worker.run_once()
    assert worker.inflight == {}
    await worker.settle()
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "succeeded" and run["lateness_ms"] == 0
    assert len(sink.hits) == 1


# -- a lost lease: the discarded result is logged, the first send's lateness kept --------------
async def test_redispatched_run_keeps_the_first_send_lateness_and_logs_the_discard(
    fresh_pool: ConnectionPool, fresh_dsn: str, worker: Worker, settings: Settings,
    clock: FrozenClock, sink: Sink, caplog: pytest.LogCaptureFixture,
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/frozen"), "0 * * * *",
                        timeout_seconds=10)
    frozen = make_worker(fresh_pool, fresh_dsn, settings, clock, worker_id="frozen")
    try:
        clock.set(T0 + timedelta(hours=1))
        await frozen.run_once()
        await asyncio.gather(*frozen.inflight)  # sent on time, then the worker froze
        clock.advance(16)  # the lease (10 s + 5 s) expired: another worker takes the run over
        assert await worker.run_once() == 1
        await asyncio.gather(*worker.inflight)
        with caplog.at_level(logging.WARNING, logger="cronledger.recorder"):
            await frozen.drain()  # the frozen worker wakes up: its lease is gone
        [run] = await runs_of(fresh_pool, job)
        lost = [r for r in caplog.records if "lease was lost" in r.getMessage()]
        assert len(lost) == 1
        assert str(run["id"]) in lost[0].getMessage() and str(job) in lost[0].getMessage()
        await worker.settle()
    finally:
        await frozen.executor.aclose()
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "succeeded" and run["worker_id"] == "test-worker"
    assert run["lateness_ms"] == 0  # the first send was on time; the re-send was 16 s late
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT data FROM events WHERE stream_id = %s "
                                 "AND event_type = 'run.succeeded'", (run["id"],))
        [event] = await cur.fetchall()
        cur = await conn.execute("SELECT lateness_ms, worker_id FROM run_attempts "
                                 "WHERE run_id = %s", (run["id"],))
        [attempt] = await cur.fetchall()
    assert event["data"]["lateness_ms"] == 0  # the log says the same (a rebuild agrees)
    # the re-sent attempt's own lateness is measured from the lease expiry (15 s after the slot)
    assert attempt == {"lateness_ms": 1000, "worker_id": "test-worker"}


# -- reconnection after an outage --------------------------------------------------------------
def test_reconnect_backoff_is_capped() -> None:
    from core.db import RECONNECT_MAX_DELAY, _CappedBackoff

    attempt = _CappedBackoff(timeout=300)
    delays = []
    for now in range(10):
        attempt.update_delay(float(now))
        delays.append(attempt.delay)
    assert delays[0] < 0.1 and max(delays) == RECONNECT_MAX_DELAY


async def test_pool_serves_within_a_second_of_postgresql_coming_back(fresh_dsn: str) -> None:
    from tests.proxy import Proxy

    async with Proxy.for_dsn(fresh_dsn) as proxy:
        pool = await open_pool(proxy.dsn(fresh_dsn), min_size=1, max_size=2)
        try:
            proxy.cut()
            with pytest.raises(psycopg.OperationalError):
                async with pool.connection(timeout=2) as conn:
                    await conn.execute("SELECT 1")
            # psycopg_pool alone waits 1, 2, 4, 8 s between attempts: 4 refusals take 7 s.
            await eventually(lambda: proxy.refused >= 4, 5, 0.01, "4 refused connections")
            proxy.restore()
            loop = asyncio.get_running_loop()
            back = loop.time()
            async with pool.connection(timeout=5) as conn:
                await conn.execute("SELECT 1")
            assert loop.time() - back < 1.0
        finally:
            await pool.close()


def test_service_loops_retry_quickly() -> None:
    from core.backoff import LOOP_RETRY_MAX, LoopRetry

    retry = LoopRetry()
    delays = [retry.next_delay() for _ in range(8)]
    assert delays[:3] == [0.05, 0.1, 0.2] and max(delays) == LOOP_RETRY_MAX <= 0.25
    retry.reset()
    assert retry.next_delay() == 0.05


async def test_checker_decides_with_the_instant_after_waiting_for_the_pool(
    fresh_dsn: str, fresh_pool: ConnectionPool, ping_pool: PingPool,
    clock: FrozenClock,
) -> None:
    from core.monitors.checker import Checker
    from tests.monitor_helpers import add_monitor, monitor_row, ping

    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "1h", grace_seconds=60)
    await ping(ping_pool, token, T0)
    alert_at = (await monitor_row(fresh_pool, monitor))["alert_at"]
    pool = await open_pool(fresh_dsn, min_size=1, max_size=1)
    try:
        checker = Checker(pool, "", clock)
        clock.set(alert_at - S)  # nothing is due when the check starts...
        held = await pool.getconn()
        checking = asyncio.create_task(checker.run_once())
        await eventually(lambda: pool.get_stats().get("requests_waiting", 0) > 0, 10, 0.01,
                         "the checker to wait for a connection")
        clock.advance(10)  # ...but it gets its connection 10 s later, after the deadline
        await pool.putconn(held)
        counts = await checking
    finally:
        await pool.close()
    assert counts.claimed == 1
    row = await monitor_row(fresh_pool, monitor)
    assert row["status"] == "late"  # decided at the later instant (the stale one: still up)
