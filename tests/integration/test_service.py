"""The service base (core/services/base.py): passes, the deadline sleep, wake-ups, a prompt stop and
the one error policy; and the worker's record loop under that policy. Every wait is on a
condition with a generous bound, never a sleep used as synchronisation."""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest

from core.clock import SystemClock
from core.db import ConnectionPool
from core.runs.worker import Worker
from core.services.base import Service
from core.services.listen import listen_statement

BOUND = 10  # seconds: far above any expected timing, only there to fail instead of hanging


class Toy(Service):
    """Counts its passes; each pass can raise the next queued exception; deadline on demand."""

    name = "toy"
    channel = "cronledger_toy"
    unexpected_retry_seconds = 0.01

    def __init__(self, dsn: str | None = None) -> None:
        super().__init__(SystemClock(), dsn)
        self.passes = 0
        self.raises: list[BaseException] = []
        self.deadline_in: float | None = None  # seconds after the pass; None: idle sleep
        self.changed = asyncio.Condition()
        self.stopped = False

    async def run_once(self, now: datetime | None = None) -> int:
        async with self.changed:
            self.passes += 1
            self.changed.notify_all()
        if self.raises:
            raise self.raises.pop(0)
        return 0

    async def next_deadline(self) -> datetime | None:
        if self.deadline_in is None:
            return None
        return self.clock.now() + timedelta(seconds=self.deadline_in)

    async def on_stop(self) -> None:
        self.stopped = True

    async def reach(self, passes: int) -> None:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(lambda: self.passes >= passes), BOUND)


async def _stopped(toy: Toy, task: asyncio.Task[None]) -> None:
    toy.stop()
    await asyncio.wait_for(task, BOUND)
    assert toy.stopped


async def test_a_pass_then_a_sleep_until_the_deadline() -> None:
    toy = Toy()
    toy.deadline_in = 0.05  # the idle sleep is 60 s: a second pass means the deadline was used
    task = asyncio.create_task(toy.run())
    await toy.reach(3)
    await _stopped(toy, task)
    assert toy.passes >= 3


async def test_wake_cuts_the_idle_sleep_short_and_stop_is_prompt() -> None:
    toy = Toy()
    task = asyncio.create_task(toy.run())
    await toy.reach(1)
    toy.wake.set()
    await toy.reach(2)
    await _stopped(toy, task)  # asleep for 60 s: the stop still ends it within the bound
    assert toy.passes == 2


async def test_an_unexpected_error_is_logged_with_its_traceback_and_the_loop_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    toy = Toy()
    toy.raises = [RuntimeError("a bug")]
    toy.deadline_in = 0.0
    with caplog.at_level(logging.INFO, logger="cronledger.toy"):
        task = asyncio.create_task(toy.run())
        await toy.reach(3)
        await _stopped(toy, task)
    [error] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "toy: pass failed" in error.getMessage()
    assert error.exc_info is not None and str(error.exc_info[1]) == "a bug"
    assert toy.unexpected_errors == 1


async def test_a_database_outage_logs_one_warning_for_many_retries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    toy = Toy()
    toy.raises = [psycopg.OperationalError("connection refused") for _ in range(5)]
    with caplog.at_level(logging.INFO, logger="cronledger.toy"):
        task = asyncio.create_task(toy.run())
        await toy.reach(6)  # five failed passes, retried after LoopRetry delays, then one good
        await _stopped(toy, task)
    lines = [(r.levelno, r.getMessage()) for r in caplog.records]
    warnings = [m for level, m in lines if level == logging.WARNING]
    assert len(warnings) == 1 and "connection refused" in warnings[0], lines
    assert not [r for r in caplog.records if r.exc_info], "no traceback for an outage"
    assert [m for level, m in lines if level == logging.INFO] == [
        "toy: database reachable again, resuming"]
    assert toy.unexpected_errors == 0


async def test_a_notify_on_the_channel_wakes_the_service(
    shared_dsn: str, pool: ConnectionPool,
) -> None:
    toy = Toy(shared_dsn)
    task = asyncio.create_task(toy.run())
    await toy.reach(2)  # the first pass, then the wake-up set once LISTEN is in place
    seen = toy.passes
    async with pool.connection() as conn:
        await conn.execute("SELECT pg_notify('cronledger_toy', '')")
        await conn.commit()
    await toy.reach(seen + 1)
    await _stopped(toy, task)
    assert toy.passes > seen


def test_the_listen_statement_quotes_the_channel() -> None:
    assert listen_statement('we"ird').as_string(None) == 'LISTEN "we""ird"'


class FlakyRecorder:
    """Raises a non-database error on its first call, then keeps the batches it is given."""

    def __init__(self) -> None:
        self.calls = 0
        self.recorded: list[Any] = []
        self.done = asyncio.Event()

    async def record(self, batch: list[Any], clock: object) -> None:
        self.calls += 1
        if self.calls == 1:
            raise ValueError("a bug in the recorder")
        self.recorded += batch
        self.done.set()


def _result() -> Any:
    return SimpleNamespace(dispatch=SimpleNamespace(run_id=uuid.uuid4()))


async def test_the_record_loop_survives_a_non_database_error(
    worker: Worker, caplog: pytest.LogCaptureFixture,
) -> None:
    worker.recorder = FlakyRecorder()  # type: ignore[assignment]
    first, second = _result(), _result()
    with caplog.at_level(logging.ERROR, logger="cronledger.worker"):
        await worker.on_start()  # starts the record loop, as run() does
        await worker.results.put(first)
        await asyncio.wait_for(_until(lambda: worker.recorder.calls >= 1), BOUND)
        await worker.results.put(second)
        await asyncio.wait_for(worker.recorder.done.wait(), BOUND)  # type: ignore[attr-defined]
        await worker.on_stop()
    assert worker.recorder.recorded == [second]  # type: ignore[attr-defined]
    [error] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "recording 1 results failed" in error.getMessage()
    assert error.exc_info is not None and isinstance(error.exc_info[1], ValueError)


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.01)  # polling a condition, bounded by the caller's wait_for
