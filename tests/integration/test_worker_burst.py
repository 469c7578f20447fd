"""A slot's burst is over for the record loop only once every attempt claimed ahead of the slot
has started its send (core/runs/worker.py, ``Worker._until_sent``)."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import replace
from datetime import timedelta

from psycopg_pool import AsyncConnectionPool

from core.clock import FrozenClock
from core.config import Settings
from core.runs.dispatch import AttemptResult, Dispatch, Prepared
from core.runs.worker import Worker
from tests.helpers import eventually, make_worker

BOUND = 20  # seconds: far from any real timing, only so that a failure does not hang


class HeldExecutor:
    """Stands in for the executor: each send waits for :attr:`go`; nothing leaves the process."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.sending: list[uuid.UUID] = []

    def prepare(self, dispatch: Dispatch) -> Prepared:
        return Prepared(dispatch, {"method": "GET", "url": "http://x.invalid/", "headers": {},
                                   "body": None})

    async def preconnect(self, prepared: list[Prepared]) -> int:
        return 0

    async def transmit(self, prepared: Prepared) -> AttemptResult:
        self.sending.append(prepared.dispatch.run_id)
        await self.go.wait()
        at = prepared.dispatch.scheduled_for
        result = AttemptResult(prepared.dispatch, at, at, 0, prepared.recorded)
        result.response_status = 200
        return result

    async def aclose(self) -> None:
        return None


def _dispatch(slot_at: object) -> Dispatch:
    return Dispatch(run_id=uuid.uuid4(), job_id=uuid.uuid4(), team_id=uuid.uuid4(),
                    scheduled_for=slot_at, trigger="schedule", attempt=1,  # type: ignore[arg-type]
                    max_attempts=1, lease_token=uuid.uuid4(), version=1,
                    request={"method": "GET", "url": "http://x.invalid/"}, timeout_seconds=5,
                    retry={})


def _worker(pool: AsyncConnectionPool, dsn: str, settings: Settings,
            clock: FrozenClock) -> tuple[Worker, HeldExecutor]:
    worker = make_worker(pool, dsn, replace(settings, max_concurrency=1), clock)
    held = HeldExecutor()
    worker.executor = held  # type: ignore[assignment]
    return worker, held


async def test_results_wait_until_every_attempt_of_the_slot_has_started_its_send(
    fresh_pool: AsyncConnectionPool, fresh_dsn: str, settings: Settings, clock: FrozenClock
) -> None:
    worker, held = _worker(fresh_pool, fresh_dsn, settings, clock)
    slot = clock.now() + timedelta(seconds=1)
    first, second = _dispatch(slot), _dispatch(slot)
    worker._start([first, second])  # claimed ahead: both wait for the slot
    assert worker._unsent == 2
    waiter = asyncio.create_task(worker._until_sent())
    clock.set(slot)
    worker._open_gate(slot)
    # One request in flight at a time: the first is being sent, the second waits its turn.
    await eventually(lambda: held.sending == [first.run_id], BOUND, 0.01,
                     what="the first attempt's send")
    assert worker._unsent == 1 and not waiter.done()
    held.go.set()  # the first answer comes back: the second attempt is sent
    await asyncio.wait_for(waiter, BOUND)
    assert held.sending == [first.run_id, second.run_id] and worker._unsent == 0
    await asyncio.gather(*worker.inflight)


async def test_an_attempt_cancelled_before_its_slot_is_no_longer_waited_for(
    fresh_pool: AsyncConnectionPool, fresh_dsn: str, settings: Settings, clock: FrozenClock
) -> None:
    worker, held = _worker(fresh_pool, fresh_dsn, settings, clock)
    slot = clock.now() + timedelta(seconds=1)
    worker._start([_dispatch(slot)])
    await eventually(lambda: slot in worker._gates, BOUND, 0.01, what="the attempt's gate")
    for task in list(worker.inflight):  # a stopping worker cancels what has not been sent
        task.cancel()
    await asyncio.gather(*worker.inflight, return_exceptions=True)
    assert worker._unsent == 0 and worker._sent.is_set() and held.sending == []
    await asyncio.wait_for(worker._until_sent(), BOUND)
