"""The worker's wake-up: a NOTIFY or a stop that arrives during a claim round is not lost."""

from __future__ import annotations

import asyncio
from datetime import datetime

from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from tests.helpers import eventually, make_worker, signal_on

# Without work the worker would sleep MAX_IDLE_SLEEP (60 s): finishing well within this bound
# shows that the wake-up was seen. A bound far from any real timing, not a performance check.
BOUND = 20


async def test_stop_during_a_claim_round_ends_the_worker_promptly(
    fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings, clock: FrozenClock
) -> None:
    worker = make_worker(fresh_pool, fresh_dsn, settings, clock)

    async def claim_then_signal(now: datetime | None = None) -> int:
        worker.stop()  # SIGTERM arrives while the worker is claiming
        return 0

    worker.run_once = claim_then_signal  # type: ignore[method-assign]
    try:
        await asyncio.wait_for(worker.run(), BOUND)  # a TimeoutError if the stop was lost
    finally:
        await worker.executor.aclose()
    assert worker.stopping.is_set()


async def test_notify_during_a_claim_round_triggers_another_round(
    fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings, clock: FrozenClock
) -> None:
    worker = make_worker(fresh_pool, fresh_dsn, settings, clock)
    listened = signal_on(worker, "on_listening")
    rounds = 0

    async def claim(now: datetime | None = None) -> int:
        nonlocal rounds
        rounds += 1
        if rounds == 1:  # the listener's own first wake-up lands in this round
            await eventually(listened.is_set, what="the worker's LISTEN up")
            worker.wake.set()  # a job was created meanwhile (NOTIFY)
        else:
            worker.stop()
        return 0

    worker.run_once = claim  # type: ignore[method-assign]
    try:
        await asyncio.wait_for(worker.run(), BOUND)
    finally:
        await worker.executor.aclose()
    assert rounds == 2
