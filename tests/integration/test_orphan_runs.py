"""Runs leased to a worker that does not hold them are released at once and sent again with the
same Idempotency-Key (docs/operations.md, "High availability"): the worker's own runs it has no
attempt of in memory (their recording lost by an asynchronous failover, a previous process with
the same worker id), the runs of workers gone from the registry; and a worker frozen past its
lease never sends what it claimed ahead."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool, open_pool
from core.runs.claim import claim_due
from core.runs.registry import LIVE_SECONDS, beat
from core.runs.worker import Worker
from tests.dbproxy import DbProxy
from tests.helpers import add_job, eventually, make_worker, new_actor, run_events, runs_of
from tests.sink import Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
SLOT = T0 + timedelta(hours=1)


async def _claimed_elsewhere(pool: ConnectionPool, worker_id: str, clock: FrozenClock):
    """A run of the slot leased to ``worker_id`` and held by nobody in this process."""
    _, [lost] = await claim_due(pool, clock.now(), limit=10, lookahead=0, worker_id=worker_id,
                                lease_margin=30)
    return lost


async def test_a_run_this_worker_does_not_hold_is_sent_again_at_once(
        fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink) -> None:
    """As after an asynchronous failover that lost the commit recording the run's result: the
    new primary has it ``running``, leased to this (live) worker, which holds no attempt of it.
    Without the release every slot of the job is skipped until the lease expires."""
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/o"), "0 * * * *", timeout_seconds=10)
    clock.set(SLOT)
    lost = await _claimed_elsewhere(fresh_pool, worker.settings.worker_id, clock)
    await worker.run_once()
    await worker.settle()
    assert sink.hits == []  # leased to this worker: nothing is sent without the release
    await worker.on_start()  # a (re)start looks for orphans, as a registry beat does
    try:
        await worker.run_once()
        await worker.settle()
    finally:
        await worker.on_stop()
    [hit] = sink.hits
    assert hit.headers["Idempotency-Key"] == str(lost.run_id)
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "succeeded"
    started = [e["data"] for e in await run_events(fresh_pool, run["id"])
               if e["event_type"] == "run.started"]
    assert [s.get("redispatch", False) for s in started] == [False, True]


async def test_a_run_of_a_gone_worker_is_sent_again_and_a_live_ones_is_not(
        fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink) -> None:
    actor = await new_actor(fresh_pool)
    gone_job = await add_job(fresh_pool, actor, T0, sink.url("/gone"), "0 * * * *")
    clock.set(SLOT)
    gone = await _claimed_elsewhere(fresh_pool, "gone-worker", clock)
    await beat(fresh_pool, "gone-worker", SLOT - timedelta(seconds=LIVE_SECONDS + 1))
    live_job = await add_job(fresh_pool, actor, T0, sink.url("/live"), "0 * * * *")
    async with fresh_pool.connection() as conn:  # its slot: 13:00 again
        await conn.execute("UPDATE due_jobs SET due_at = %s WHERE job_id = %s",
                           (SLOT, live_job))
    live = await _claimed_elsewhere(fresh_pool, "live-worker", clock)
    await beat(fresh_pool, "live-worker", SLOT)
    await worker.on_start()
    try:
        await worker.run_once()
        await worker.settle()
    finally:
        await worker.on_stop()
    assert [h.path for h in sink.hits] == ["/gone"]
    assert sink.hits[0].headers["Idempotency-Key"] == str(gone.run_id)
    [run] = await runs_of(fresh_pool, gone_job)
    assert run["status"] == "succeeded"
    [held] = await runs_of(fresh_pool, live_job)
    assert held["id"] == live.run_id and held["status"] == "running"
    assert held["worker_id"] == "live-worker" and held["lease_expires_at"] > SLOT


async def test_orphans_are_looked_for_when_the_database_went_away(
        fresh_dsn: str, settings: Settings, clock: FrozenClock, sink: Sink) -> None:
    """The failover itself: the worker's pool finds its connections dead; the pass that
    follows releases the run whose recording the database lost."""
    with DbProxy(fresh_dsn) as proxy:
        pool = await open_pool(proxy.dsn, min_size=2, max_size=4)
        worker = make_worker(pool, fresh_dsn, settings, clock)
        try:
            actor = await new_actor(pool)
            await add_job(pool, actor, T0, sink.url("/f"), "0 * * * *", timeout_seconds=10)
            clock.set(SLOT)
            lost = await _claimed_elsewhere(pool, worker.settings.worker_id, clock)
            await worker.run_once()
            assert sink.hits == []
            proxy.refuse()  # PostgreSQL fails over: every connection is cut ...
            proxy.forward()  # ... and the new primary accepts connections
            await worker.run_once()
            await worker.settle()
            [hit] = sink.hits
            assert hit.headers["Idempotency-Key"] == str(lost.run_id)
        finally:
            await worker.settle()
            await worker.executor.aclose()
            await pool.close()


async def test_a_worker_frozen_past_its_lease_does_not_send_what_it_claimed_ahead(
        fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink) -> None:
    """SIGSTOP after a claim ahead of the slot: when the worker resumes, the lease no longer
    covers the attempt (another worker may have sent it); it is not sent but released, and
    the next claim sends it with the same Idempotency-Key under a lease of its own."""
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/frozen"), "0 * * * *",
                        timeout_seconds=10)
    worker.lookahead = 1.0
    clock.set(SLOT - timedelta(seconds=0.3))
    assert await worker.run_once() == 1  # claimed ahead: waits at the gate of its slot
    [run] = await runs_of(fresh_pool, job)
    lease = run["lease_expires_at"]
    clock.set(lease + timedelta(seconds=5))  # frozen meanwhile, past the whole lease
    await eventually(lambda: not worker.inflight, 5, what="the gate's attempt is over")
    assert sink.hits == []
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "running" and run["lease_expires_at"] == clock.now()
    await worker.run_once()
    await worker.settle()
    [hit] = sink.hits
    assert hit.headers["Idempotency-Key"] == str(run["id"])
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "succeeded"


async def test_a_lease_that_still_covers_the_attempt_is_sent(
        fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/late"), "0 * * * *",
                        timeout_seconds=10)
    worker.lookahead = 1.0
    clock.set(SLOT - timedelta(seconds=0.3))
    assert await worker.run_once() == 1
    clock.set(SLOT + timedelta(seconds=3))  # late, but 10 s of attempt fit in the lease (15 s)
    await worker.settle()
    assert [h.path for h in sink.hits] == ["/late"]
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "succeeded"
