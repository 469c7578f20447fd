"""A slot claimed in several batches has the connections of all its attempts opened ahead, not
only those of the last batch (core/runs/worker.py, ``Worker._preconnect``)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta

from psycopg_pool import AsyncConnectionPool

from core.clock import FrozenClock
from core.config import Settings
from core.runs.dispatch import Dispatch, Prepared
from tests.helpers import eventually, make_worker

BOUND = 20  # seconds: far from any real timing, only so that a failure does not hang


class CountingExecutor:
    """Stands in for the executor: records how many attempts each preconnect was asked for."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def prepare(self, dispatch: Dispatch) -> Prepared:
        return Prepared(dispatch, {"method": "GET", "url": "http://x.invalid/", "headers": {},
                                   "body": None})

    async def preconnect(self, prepared: list[Prepared]) -> int:
        self.asked.append(len(prepared))
        return 0

    async def transmit(self, prepared: Prepared) -> None:
        await asyncio.Event().wait()  # never answers: the test cancels the attempts

    async def aclose(self) -> None:
        return None


def _dispatch(slot: datetime) -> Dispatch:
    return Dispatch(run_id=uuid.uuid4(), job_id=uuid.uuid4(), team_id=uuid.uuid4(),
                    scheduled_for=slot, trigger="schedule", attempt=1, max_attempts=1,
                    lease_token=uuid.uuid4(), version=1,
                    request={"method": "GET", "url": "http://x.invalid/"}, timeout_seconds=5,
                    retry={})


async def test_each_batch_of_a_slot_preconnects_every_attempt_claimed_for_it(
    fresh_pool: AsyncConnectionPool, fresh_dsn: str, settings: Settings, clock: FrozenClock
) -> None:
    worker = make_worker(fresh_pool, fresh_dsn, settings, clock)
    counting = CountingExecutor()
    worker.executor = counting  # type: ignore[assignment]
    slot = clock.now() + timedelta(seconds=1)
    worker._start([_dispatch(slot) for _ in range(3)])  # the first claim batch
    worker._start([_dispatch(slot) for _ in range(2)])  # the second, of the same slot
    await eventually(lambda: len(counting.asked) == 2, BOUND, 0.01, what="two preconnects")
    assert counting.asked == [3, 5]
    later = slot + timedelta(seconds=10)
    clock.set(slot)
    worker._open_gate(slot)  # the slot is released: its list is dropped
    assert slot not in worker._ahead
    worker._start([_dispatch(later)])  # the next slot starts its own count
    await eventually(lambda: len(counting.asked) == 3, BOUND, 0.01, what="the next preconnect")
    assert counting.asked[-1] == 1
    for task in list(worker.inflight):
        task.cancel()
    await asyncio.gather(*worker.inflight, return_exceptions=True)
