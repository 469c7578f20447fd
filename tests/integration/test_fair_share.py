"""The worker registry and the fair share of a claim (core/runs/registry.py): a claim takes at
most ceil(due / live workers) rows, so workers woken together for a big slot split it; a worker
left alone still claims the whole slot, in a few rounds, ahead of it."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from core.clock import FrozenClock
from core.db import ConnectionPool
from core.metrics import render_metrics
from core.runs import registry
from core.runs.claim import claim_due
from core.runs.registry import FORGET_SECONDS, LIVE_SECONDS, Registration, beat, live_workers
from core.runs.worker import Worker
from core.services.quiet import PER_REQUEST, QuietWindows
from tests.helpers import add_job, eventually, new_actor

JOBS = 90


async def _due_jobs(pool: ConnectionPool, clock: FrozenClock, count: int = JOBS) -> None:
    """``count`` jobs due at the next minute; the clock is moved to it."""
    actor = await new_actor(pool)
    for i in range(count):
        await add_job(pool, actor, clock.now(), f"http://127.0.0.1:9/{i}", "* * * * *")
    clock.advance(60)


async def _claim(pool: ConnectionPool, clock: FrozenClock, worker_id: str) -> int:
    claimed, _ = await claim_due(pool, clock.now(), limit=100, lookahead=0,
                                 worker_id=worker_id, lease_margin=5)
    return claimed


async def test_a_claim_takes_its_share_of_the_live_workers(
        fresh_pool: ConnectionPool, clock: FrozenClock) -> None:
    await _due_jobs(fresh_pool, clock)
    for other in ("b", "c"):
        await beat(fresh_pool, other, clock.now() - timedelta(seconds=LIVE_SECONDS - 1))
    await beat(fresh_pool, "a", clock.now())
    assert await live_workers(fresh_pool, clock.now()) == ["a", "b", "c"]
    assert await _claim(fresh_pool, clock, "a") == JOBS // 3
    # What is left is shared again: 60 due, 3 live workers.
    assert await _claim(fresh_pool, clock, "b") == 20


async def test_a_worker_missing_from_the_registry_counts_itself(
        fresh_pool: ConnectionPool, clock: FrozenClock) -> None:
    await _due_jobs(fresh_pool, clock)
    await beat(fresh_pool, "b", clock.now())
    assert await _claim(fresh_pool, clock, "a") == JOBS // 2  # a (not registered) and b


async def test_stale_workers_are_not_counted_and_forgotten_ones_are_deleted(
        fresh_pool: ConnectionPool, clock: FrozenClock) -> None:
    await _due_jobs(fresh_pool, clock)
    await beat(fresh_pool, "killed", clock.now() - timedelta(seconds=LIVE_SECONDS + 1))
    await beat(fresh_pool, "long gone", clock.now() - timedelta(seconds=FORGET_SECONDS + 1))
    assert await live_workers(fresh_pool, clock.now()) == []
    assert await _claim(fresh_pool, clock, "a") == JOBS  # alone: the whole slot
    await beat(fresh_pool, "a", clock.now())
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT worker_id FROM workers ORDER BY worker_id")
        assert [r["worker_id"] for r in await cur.fetchall()] == ["a", "killed"]


async def test_a_worker_whose_peer_never_claims_takes_the_slot_in_halving_rounds(
        fresh_pool: ConnectionPool, clock: FrozenClock, worker: Worker) -> None:
    """Nobody waits for a share: a peer that is counted but claims nothing (killed, not yet
    stale) costs a few more claims, not a late slot."""
    await _due_jobs(fresh_pool, clock, 100)
    await beat(fresh_pool, "silent", clock.now())
    rounds = []
    while (claimed := await worker.run_once()) > 0:
        rounds.append(claimed)
    assert rounds == [50, 25, 13, 6, 3, 2, 1]
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM runs")
        assert (await cur.fetchone())["n"] == 100


async def test_a_running_worker_is_registered_until_it_stops(
        fresh_pool: ConnectionPool, clock: FrozenClock, worker: Worker) -> None:
    task = asyncio.create_task(worker.run())
    try:
        await eventually(lambda: live_workers(fresh_pool, clock.now()), 10,
                         what="the worker's row in the registry")
        assert await live_workers(fresh_pool, clock.now()) == ["test-worker"]
    finally:
        worker.stop()
        await asyncio.wait_for(task, 30)
    assert await live_workers(fresh_pool, clock.now()) == []


async def test_metrics_count_the_live_workers(
        fresh_pool: ConnectionPool, clock: FrozenClock) -> None:
    await beat(fresh_pool, "a", clock.now())
    await beat(fresh_pool, "b", clock.now() - timedelta(seconds=LIVE_SECONDS - 1))
    await beat(fresh_pool, "stale", clock.now() - timedelta(seconds=LIVE_SECONDS + 1))
    text = (await render_metrics(fresh_pool, clock.now())).decode()
    assert "\ncronledger_workers_live 2.0\n" in text


async def test_a_beat_due_during_an_announced_burst_waits_for_its_end(
        fresh_pool: ConnectionPool, clock: FrozenClock,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The heartbeat keeps off the event loop while the worker sends a slot's burst."""
    loop = asyncio.get_running_loop()
    beats: list[float] = []

    async def counted_beat(*args: object) -> None:
        beats.append(loop.time())

    monkeypatch.setattr(registry, "beat", counted_beat)
    monkeypatch.setattr(registry, "BEAT_SECONDS", 0.01)
    quiet = QuietWindows()
    registration = Registration(fresh_pool, "a", clock, quiet)
    await registration.start()
    try:
        quiet.hold(0.0, 1000)  # a burst of 1,000 sends from now on
        burst_end = loop.time() + 1000 * PER_REQUEST
        started = len(beats)
        await eventually(lambda: len(beats) > started, 5, 0.01, what="a beat after the burst")
        assert beats[started] >= burst_end
    finally:
        await registration.stop()
