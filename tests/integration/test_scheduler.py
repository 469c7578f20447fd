"""The scheduler against a real database and a real local HTTP server, on a frozen clock."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import psycopg
from psycopg_pool import AsyncConnectionPool

from core.clock import FrozenClock
from core.config import Settings
from core.jobs.commands import set_paused, trigger_job, update_job
from core.runs.worker import Worker
from tests.helpers import (
    add_job,
    due_at,
    eventually,
    make_worker,
    new_actor,
    run_events,
    runs_of,
)
from tests.sink import Reply, Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


async def tick(worker: Worker, clock: FrozenClock, at: datetime) -> int:
    clock.set(at)
    claimed = await worker.run_once()
    await worker.settle()
    return claimed


async def test_job_fires_at_its_slot_with_headers(
    fresh_pool: AsyncConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/a"), "* * * * *",
                        request={"method": "POST", "body": '{"x":1}',
                                 "headers": {"X-Custom": "yes"}})
    assert await due_at(fresh_pool, job) == T0 + timedelta(minutes=1)
    assert await tick(worker, clock, T0 + timedelta(seconds=59)) == 0
    assert sink.hits == []
    await tick(worker, clock, T0 + timedelta(minutes=1, milliseconds=120))
    [hit] = sink.hits
    assert hit.method == "POST" and hit.body == b'{"x":1}'
    assert hit.headers["X-Custom"] == "yes"
    assert hit.headers["User-Agent"].startswith("cronledger/")
    assert hit.headers["X-Cronledger-Job-Id"] == str(job)
    assert hit.headers["X-Cronledger-Scheduled-For"] == "2026-11-30T12:01:00Z"
    assert hit.headers["X-Cronledger-Attempt"] == "1"
    [run] = await runs_of(fresh_pool, job)
    assert hit.headers["Idempotency-Key"] == str(run["id"])
    assert run["status"] == "succeeded" and run["trigger"] == "schedule"
    assert run["response_status"] == 200 and run["lateness_ms"] == 120
    assert [e["event_type"] for e in await run_events(fresh_pool, run["id"])] == [
        "run.started", "run.succeeded"]
    assert await due_at(fresh_pool, job) == T0 + timedelta(minutes=2)


async def test_each_slot_fires_once_even_when_claimed_again(
    fresh_pool: AsyncConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/a"), "* * * * *")
    await tick(worker, clock, T0 + timedelta(minutes=1))
    # Simulate a worker that read the due row before the advance: put it back.
    async with fresh_pool.connection() as conn:
        await conn.execute("UPDATE due_jobs SET due_at = %s", (T0 + timedelta(minutes=1),))
    await tick(worker, clock, T0 + timedelta(minutes=1, seconds=1))
    assert len(sink.hits) == 1
    assert len(await runs_of(fresh_pool, job)) == 1


async def test_pause_resume_trigger(
    fresh_pool: AsyncConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/p"), "* * * * *")
    await set_paused(fresh_pool, actor, job, True, T0 + timedelta(seconds=30))
    assert await due_at(fresh_pool, job) is None
    await tick(worker, clock, T0 + timedelta(minutes=3))
    assert sink.hits == []
    run_id = await trigger_job(fresh_pool, actor, job, T0 + timedelta(minutes=3))
    await tick(worker, clock, T0 + timedelta(minutes=3, seconds=1))
    assert len(sink.hits) == 1 and sink.hits[0].headers["Idempotency-Key"] == str(run_id)
    await set_paused(fresh_pool, actor, job, False, T0 + timedelta(minutes=3, seconds=2))
    assert await due_at(fresh_pool, job) == T0 + timedelta(minutes=4)
    await tick(worker, clock, T0 + timedelta(minutes=4))
    runs = await runs_of(fresh_pool, job)
    assert [(r["trigger"], r["status"]) for r in runs] == [
        ("manual", "succeeded"), ("schedule", "succeeded")]
    assert len(sink.hits) == 2


async def test_failure_is_recorded_with_class_and_body(
    fresh_pool: AsyncConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    sink.reply("/fail", Reply(status=500, body=b"boom"))
    job = await add_job(fresh_pool, actor, T0, sink.url("/fail"), "* * * * *")
    refused = await add_job(fresh_pool, actor, T0, "http://127.0.0.1:9/closed", "* * * * *")
    await tick(worker, clock, T0 + timedelta(minutes=1))
    [run] = await runs_of(fresh_pool, job)
    assert (run["status"], run["error_class"], run["response_status"]) == (
        "failed", "http_status", 500)
    [other] = await runs_of(fresh_pool, refused)
    assert (other["status"], other["error_class"]) == ("failed", "connect")
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM run_attempts WHERE run_id = %s", (run["id"],))
        attempt = await cur.fetchone()
    assert bytes(attempt["response_body"]) == b"boom"
    assert attempt["request"]["headers"]["Idempotency-Key"] == str(run["id"])


async def test_retries_are_durable(
    fresh_pool: AsyncConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    fresh_dsn: str, settings: Settings,
) -> None:
    actor = await new_actor(fresh_pool)
    sink.reply("/flaky", Reply(status=503), Reply(status=503), Reply(status=200))
    job = await add_job(fresh_pool, actor, T0, sink.url("/flaky"), "0 * * * *",
                        retry={"attempts": 3, "backoff": "fixed", "delay_seconds": 30,
                               "max_delay_seconds": 30})
    await tick(worker, clock, T0 + timedelta(hours=1))
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "queued" and run["attempt"] == 1
    assert T0 + timedelta(hours=1) <= run["available_at"] <= T0 + timedelta(hours=1, seconds=30)
    # A different worker (a restart) finds the pending retry in the database.
    other = make_worker(fresh_pool, fresh_dsn, settings, clock, "second-worker")
    try:
        await tick(other, clock, T0 + timedelta(hours=1, seconds=31))
        await tick(other, clock, T0 + timedelta(hours=1, seconds=62))
    finally:
        await other.executor.aclose()
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "succeeded" and run["attempt"] == 3
    assert [h.headers["X-Cronledger-Attempt"] for h in sink.hits] == ["1", "2", "3"]
    assert len({h.headers["Idempotency-Key"] for h in sink.hits}) == 1
    kinds = [e["event_type"] for e in await run_events(fresh_pool, run["id"])]
    assert kinds == ["run.started", "run.retry_scheduled", "run.started",
                     "run.retry_scheduled", "run.started", "run.succeeded"]


async def test_expired_lease_is_redispatched_with_same_run(
    fresh_pool: AsyncConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/l"), "0 * * * *", timeout_seconds=10)
    clock.set(T0 + timedelta(hours=1))
    from core.runs.claim import claim_due

    _, [lost] = await claim_due(fresh_pool, clock.now(), limit=10, lookahead=0,
                                worker_id="dead", lease_margin=5)  # claimed, never sent
    assert await tick(worker, clock, T0 + timedelta(hours=1, seconds=14)) == 0
    assert sink.hits == []
    await tick(worker, clock, T0 + timedelta(hours=1, seconds=16))
    [hit] = sink.hits
    assert hit.headers["Idempotency-Key"] == str(lost.run_id)
    assert hit.headers["X-Cronledger-Attempt"] == "1"
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "succeeded"
    started = [e for e in await run_events(fresh_pool, run["id"])
               if e["event_type"] == "run.started"]
    assert [e["data"]["redispatch"] for e in started[1:]] == [True]


async def test_edit_during_claim_keeps_the_slot(
    fresh_pool: AsyncConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/e"), "* * * * *")
    await update_job(fresh_pool, actor, job, {"name": "edited"}, T0 + timedelta(seconds=59))
    await tick(worker, clock, T0 + timedelta(minutes=1))
    await update_job(fresh_pool, actor, job, {"request": {"url": sink.url("/e2")}},
                     T0 + timedelta(minutes=1, seconds=1))
    await tick(worker, clock, T0 + timedelta(minutes=1, seconds=2))
    assert [h.path for h in sink.hits] == ["/e"]
    await tick(worker, clock, T0 + timedelta(minutes=2))
    assert [h.path for h in sink.hits] == ["/e", "/e2"]


async def test_a_command_during_a_claim_waits_for_it_instead_of_deadlocking(
    fresh_pool: AsyncConnectionPool, fresh_dsn: str
) -> None:
    """The claim locks a job's ``due_jobs`` row, then its ``jobs`` row (the run insert's
    foreign-key check, ``FOR KEY SHARE``). A command (pause, edit, delete) takes the same two
    in the same order, so it waits for the claim to commit; in the opposite order the two
    deadlocked (one failed with ``deadlock detected``)."""
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, "http://127.0.0.1:9/x", "* * * * *")
    async with await psycopg.AsyncConnection.connect(fresh_dsn) as claim, \
            await psycopg.AsyncConnection.connect(fresh_dsn, autocommit=True) as watch:
        await claim.execute("SELECT 1 FROM due_jobs WHERE job_id = %s FOR UPDATE OF due_jobs",
                            (job,))
        pause = asyncio.create_task(set_paused(fresh_pool, actor, job, True, T0))

        async def pause_waits() -> bool:
            cur = await watch.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                                      "current_database() AND wait_event_type = 'Lock'")
            return (await cur.fetchone())[0] == 1

        await eventually(pause_waits, 10, what="the pause waiting for the claim's lock")
        async with asyncio.timeout(10):  # a deadlock would be detected after 1 s
            await claim.execute("SELECT 1 FROM jobs WHERE id = %s FOR KEY SHARE", (job,))
        await claim.commit()
        await asyncio.wait_for(pause, 10)
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT status FROM jobs WHERE id = %s", (job,))
        assert (await cur.fetchone())["status"] == "paused"
