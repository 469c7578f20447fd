"""Claiming ahead of the slot, on the real clock: requests are built and their connections opened
during the lookahead, and no request leaves before its slot."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from core.clock import FrozenClock, SystemClock
from core.config import Settings
from core.db import ConnectionPool
from tests.helpers import add_job, eventually, make_worker, new_actor, runs_of
from tests.sink import counting_server

JOBS = 5


@pytest.mark.parametrize("claim_batch", [100, 2], ids=["one claim", "three claims"])
async def test_slots_claimed_ahead_are_sent_at_the_slot_on_connections_opened_ahead(
    fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings, claim_batch: int
) -> None:
    """Claimed in one batch or in several, the slot's attempts find a connection each opened
    ahead of it: no batch takes the connections opened for another."""
    clock = SystemClock()
    worker = make_worker(fresh_pool, fresh_dsn, replace(settings, claim_batch=claim_batch),
                         clock)
    worker.lookahead = 0.5
    actor = await new_actor(fresh_pool)
    try:
        async with counting_server() as (base, connections):
            # Created early in a second, every job is due at the next whole second.
            while time.time() % 1 > 0.2:
                await asyncio.sleep(0.01)
            now = datetime.now(UTC)
            ids = [await add_job(fresh_pool, actor, now, f"{base}/job/{i}", "* * * * * *")
                   for i in range(JOBS)]
            async with fresh_pool.connection() as conn:
                cur = await conn.execute("SELECT min(due_at) AS slot, max(due_at) AS last "
                                         "FROM due_jobs")
                row = await cur.fetchone()
            slot: datetime = row["slot"]
            assert row["last"] == slot
            await asyncio.sleep(max(0.0, (slot - timedelta(seconds=0.4)
                                          - datetime.now(UTC)).total_seconds()))
            claimed = await worker.run_once()
            assert claimed == JOBS and datetime.now(UTC) < slot  # claimed ahead of the slot
            await eventually(lambda: len(connections) == JOBS, 5, 0.01,
                             what="the connections opened ahead of the slot")
            assert time.time() < slot.timestamp()  # before the slot: connections open...
            assert sum(c.requests for c in connections) == 0  # ...nothing sent
            await worker.settle()
        arrivals = [at for c in connections for at in c.arrivals]
        assert len(arrivals) == JOBS and min(arrivals) >= slot.timestamp()
        assert len(connections) == JOBS  # the requests used the connections opened ahead
        for job_id in ids:
            [run] = [r for r in await runs_of(fresh_pool, job_id) if r["scheduled_for"] == slot]
            assert run["status"] == "succeeded" and run["lateness_ms"] < 1000
    finally:
        await worker.executor.aclose()


async def test_the_gate_of_a_slot_opens_at_the_slot_never_before(
    fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings
) -> None:
    """The gate's timer fires ahead of the slot and the rest is waited out: the attempts it
    releases still never start before the slot."""
    worker = make_worker(fresh_pool, fresh_dsn, settings, SystemClock())
    try:
        for offset in (0.0, 0.0005, 0.0015, 0.003, 0.02):
            slot = datetime.now(UTC) + timedelta(seconds=offset)
            await asyncio.wait_for(worker._gate(slot).wait(), 5)
            assert datetime.now(UTC) >= slot
            assert slot not in worker._gates
    finally:
        await worker.executor.aclose()


async def test_the_gate_waits_for_a_clock_that_stands_still(
    fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings
) -> None:
    """On an injected clock that does not move, the gate stays shut (its short wait on the CPU
    gives up) until the clock reaches the slot."""
    clock = FrozenClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    worker = make_worker(fresh_pool, fresh_dsn, settings, clock)
    try:
        slot = clock.now() + timedelta(milliseconds=1)
        gate = worker._gate(slot)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(asyncio.shield(gate.wait()), 0.05)
        assert not gate.is_set()
        clock.set(slot)
        await asyncio.wait_for(gate.wait(), 5)
    finally:
        await worker.executor.aclose()
