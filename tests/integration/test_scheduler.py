"""The scheduler against a real database and a real local HTTP server, on a frozen clock."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import psycopg
from psycopg.rows import dict_row

from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.events import to_json
from core.jobs.commands import set_paused, trigger_job, update_job
from core.queries import Q
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
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
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
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
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
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
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
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
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
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
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
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
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
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
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


def _claim_params(limit: int = 10) -> dict[str, object]:
    """``job_claim_due``'s parameters for a claim of everything due by a day after T0."""
    return {"horizon": T0 + timedelta(days=1), "limit": limit, "finished": [],
            "worker_id": "claim", "live_after": T0, "now": T0}


async def test_a_command_during_a_claim_waits_for_it_instead_of_deadlocking(
    fresh_pool: ConnectionPool, fresh_dsn: str
) -> None:
    """The claim (``job_claim_due``) locks both rows of each job it takes, ``due_jobs`` and
    ``jobs``; a command (pause, edit, delete) locks ``jobs`` first, then changes ``due_jobs``.
    A pause during a claim therefore waits for the claim to commit. When the claim locked
    only ``due_jobs`` and the command took ``jobs`` first, the claim's run insert (its
    foreign-key check) and the pause's change of ``due_jobs`` deadlocked."""
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, "http://127.0.0.1:9/x", "* * * * *")
    async with await psycopg.AsyncConnection.connect(fresh_dsn) as claim, \
            await psycopg.AsyncConnection.connect(fresh_dsn, autocommit=True) as watch:
        rows = await (await claim.execute(Q["job_claim_due"], _claim_params())).fetchall()
        assert [r[0] for r in rows] == [job]
        pause = asyncio.create_task(set_paused(fresh_pool, actor, job, True, T0))

        async def pause_waits() -> bool:
            cur = await watch.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                                      "current_database() AND wait_event_type = 'Lock'")
            return (await cur.fetchone())[0] == 1

        await eventually(pause_waits, 10, what="the pause waiting for the claim's lock")
        async with asyncio.timeout(10):  # a deadlock would be detected after 1 s
            await claim.execute("SELECT 1 FROM jobs WHERE id = %s FOR KEY SHARE", (job,))
            await claim.execute("UPDATE due_jobs SET due_at = due_at + interval '1 minute' "
                                "WHERE job_id = %s", (job,))
        await claim.commit()
        await asyncio.wait_for(pause, 10)
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT status FROM jobs WHERE id = %s", (job,))
        assert (await cur.fetchone())["status"] == "paused"


async def test_a_claim_skips_a_job_a_command_holds(
    fresh_pool: ConnectionPool, fresh_dsn: str
) -> None:
    """A command can hold a job before its ``due_jobs`` row exists or is visible (a pause
    racing a resume that is committing the row). A claim then skips the job instead of
    locking its due row and waiting for the ``jobs`` row (which deadlocked with the command's
    change of ``due_jobs``), and takes it once the command is done."""
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, "http://127.0.0.1:9/x", "* * * * *")
    other = await add_job(fresh_pool, actor, T0, "http://127.0.0.1:9/y", "* * * * *")
    async with await psycopg.AsyncConnection.connect(fresh_dsn, row_factory=dict_row) as cmd, \
            await psycopg.AsyncConnection.connect(fresh_dsn) as claim:
        state = await (await cmd.execute(Q["job_lock"], {"id": job, "team_id": actor.team_id})
                       ).fetchone()
        await cmd.execute(Q["job_upsert"], {**state, "request": to_json(state["request"]),
                                            "retry": to_json(state["retry"])})
        await claim.execute("SET lock_timeout = '5s'")  # a claim never waits for a command
        rows = await (await claim.execute(Q["job_claim_due"], _claim_params())).fetchall()
        assert [r[0] for r in rows] == [other]
        await claim.rollback()
        await cmd.commit()
        rows = await (await claim.execute(Q["job_claim_due"], _claim_params())).fetchall()
        assert sorted(r[0] for r in rows) == sorted([job, other])
        await claim.rollback()


async def test_a_slot_claimed_while_the_previous_run_is_in_flight_is_decided_at_the_slot(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    """With the claim lookahead (1 s), an every-second job's next slot enters the claim window
    while its current run is still in flight. Decided then, overlap ``skip`` skipped every
    other slot of the job; the slot is claimed at its slot instead, and fires there."""
    worker.lookahead = 1.0
    sink.reply("/s", Reply(delay=1.0), Reply())  # the first run stays in flight for a second
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/s"), "* * * * * *")
    clock.set(T0 + timedelta(seconds=0.5))
    assert await worker.run_once() == 1  # the slot at T0+1 s, claimed ahead
    clock.set(T0 + timedelta(seconds=1))
    assert await worker.run_once() == 0  # T0+2 s is in the window, but run 1 is in flight
    assert await worker.next_deadline() == T0 + timedelta(seconds=1.1)  # looked at again soon
    await worker.settle()
    await tick(worker, clock, T0 + timedelta(seconds=2))
    runs = await runs_of(fresh_pool, job)
    assert [(r["scheduled_for"], r["status"]) for r in runs] == [
        (T0 + timedelta(seconds=1), "succeeded"), (T0 + timedelta(seconds=2), "succeeded")]
    assert len(sink.hits) == 2


async def test_a_job_allowed_to_overlap_is_claimed_ahead_while_a_run_is_in_flight(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink
) -> None:
    worker.lookahead = 1.0
    sink.reply("/a", Reply(delay=1.0), Reply())
    actor = await new_actor(fresh_pool)
    await add_job(fresh_pool, actor, T0, sink.url("/a"), "* * * * * *", overlap="allow")
    clock.set(T0 + timedelta(seconds=0.5))
    assert await worker.run_once() == 1
    clock.set(T0 + timedelta(seconds=1))
    assert await worker.run_once() == 1  # no policy to decide: claimed ahead as usual
    clock.set(T0 + timedelta(seconds=2))  # its slot: the attempt claimed ahead is sent
    await worker.settle()
    assert len(sink.hits) == 2
