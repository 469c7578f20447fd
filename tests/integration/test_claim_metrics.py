"""``cronledger_claim_duration_seconds`` on ``/metrics`` (docs/healthchecks.md, *Prometheus*): a
worker's claims record their duration in the metadata of the events they append, and any API
process reads the recent ones from the log (core/metrics.py)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from core.clock import FrozenClock
from core.db import ConnectionPool
from core.jobs.commands import trigger_job
from core.metrics import render_metrics
from core.runs.worker import Worker
from tests.helpers import add_job, new_actor
from tests.integration.test_badges import _promtool
from tests.sink import Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
SAMPLE = re.compile(r'^cronledger_claim_duration_seconds\{percentile="([^"]+)"\} (\S+)$', re.M)


def _claims(text: str) -> tuple[float, dict[str, float]]:
    [count] = re.findall(r"^cronledger_claim_duration_claims (\S+)$", text, re.M)
    return float(count), {q: float(v) for q, v in SAMPLE.findall(text)}


async def test_claims_show_their_duration_on_metrics(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
) -> None:
    text = (await render_metrics(fresh_pool, clock.now())).decode()
    assert _claims(text) == (0.0, {})  # no claim yet: no percentile series
    _promtool(text.encode())

    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/a"), "* * * * *")
    clock.set(T0 + timedelta(minutes=1))
    assert await worker.run_once() == 1
    await worker.settle()
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT metadata FROM events WHERE event_type = 'run.started'")
        [started] = await cur.fetchall()
    seconds = started["metadata"]["claim_seconds"]
    assert isinstance(seconds, float) and 0 <= seconds < 30

    text = (await render_metrics(fresh_pool, clock.now())).decode()
    count, percentiles = _claims(text)
    assert count == 1.0
    assert set(percentiles) == {"50", "90", "99", "100"}
    assert all(v == seconds for v in percentiles.values())  # one claim: every percentile is it
    _promtool(text.encode())

    # a manual run is claimed by claim_ready: a second claim, percentiles in order
    await trigger_job(fresh_pool, actor, job, T0 + timedelta(minutes=1, seconds=10))
    clock.set(T0 + timedelta(minutes=1, seconds=10))
    assert await worker.run_once() == 1
    await worker.settle()
    count, percentiles = _claims((await render_metrics(fresh_pool, clock.now())).decode())
    assert count == 2.0
    values = [percentiles[q] for q in ("50", "90", "99", "100")]
    assert values == sorted(values) and values[0] >= 0 and values[-1] < 30


async def test_a_claim_of_many_runs_records_its_duration_once(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
) -> None:
    actor = await new_actor(fresh_pool)
    for n in range(5):
        await add_job(fresh_pool, actor, T0, sink.url(f"/{n}"), "* * * * *", name=f"many {n}")
    clock.set(T0 + timedelta(minutes=1))
    assert await worker.run_once() == 5
    await worker.settle()
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT count(*) FILTER (WHERE event_type = 'run.started') AS started,"
            "       count(*) FILTER (WHERE metadata ? 'claim_seconds') AS timed FROM events")
        counts = await cur.fetchone()
    assert counts == {"started": 5, "timed": 1}  # one sample per claim, not one per run
    count, _ = _claims((await render_metrics(fresh_pool, clock.now())).decode())
    assert count == 1.0
