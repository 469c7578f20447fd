"""``cronledger_slots_not_run{reason}`` on ``/metrics`` (docs/healthchecks.md, *Prometheus*):
slots held by a maintenance window and slots missed beyond the catch-up policy, made by the
real claim on a frozen clock, counted by reason; the exposition passes ``promtool check
metrics``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from core.clock import FrozenClock
from core.db import ConnectionPool
from core.maintenance.commands import create_window
from core.metrics import render_metrics
from core.runs.worker import Worker
from tests.helpers import add_job, new_actor
from tests.integration.test_badges import _promtool
from tests.sink import Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
SAMPLE = re.compile(r'^cronledger_slots_not_run\{reason="([^"]+)"\} (\S+)$', re.M)


async def _slots(pool: ConnectionPool, now: datetime) -> dict[str, float]:
    text = (await render_metrics(pool, now)).decode()
    _promtool(text.encode())
    return {reason: float(n) for reason, n in SAMPLE.findall(text)}


async def test_held_and_missed_slots_are_counted_by_reason(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
) -> None:
    assert await _slots(fresh_pool, T0) == {"skipped": 0.0, "missed": 0.0, "held": 0.0}
    actor = await new_actor(fresh_pool)
    held = await add_job(fresh_pool, actor, T0, sink.url("/a"), "* * * * *")
    await add_job(fresh_pool, actor, T0, sink.url("/b"), "* * * * *", name="late",
                  catchup="latest")
    await create_window(fresh_pool, actor, {
        "from": T0, "to": T0 + timedelta(minutes=2, seconds=30), "jobs": [held],
        "suppress": "runs"}, T0)
    clock.set(T0 + timedelta(minutes=1))
    await worker.run_once()
    await worker.settle()
    # The worker was away: each job misses 12:02 and 12:03 (catch-up "latest" fires 12:04),
    # and 12:05, claimed in the same pass, is skipped by the overlap policy; the window held
    # the first job's 12:01.
    clock.set(T0 + timedelta(minutes=5))
    await worker.run_once()
    await worker.settle()
    assert await _slots(fresh_pool, clock.now()) == {"skipped": 2.0, "missed": 4.0,
                                                     "held": 1.0}
