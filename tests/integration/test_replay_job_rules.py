"""The what-if replay of a job covers its run-time bounds and ``alert_on`` (docs/ledger.md,
*What-if replay*): a proposed ``min_duration``, ``max_duration`` or ``alert_on`` shows the
alerts it adds or removes over the recorded runs, and replaying the current definition gives
the alerts that were queued. Real PostgreSQL, the real worker, claim and confirmation service
against a local sink, a frozen clock.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

from litestar.testing import AsyncTestClient

from core.actor import Actor
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.db import ConnectionPool
from core.jobs.commands import update_job
from core.replay.jobs import simulate_job
from core.runs.claim import claim_due
from core.runs.confirm import HEADER, ConfirmTimeouts, confirm
from core.runs.worker import Worker
from tests.helpers import add_job, new_actor
from tests.sink import Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)


async def _setup(pool: ConnectionPool, sealer: AesGcmSealer, sink: Sink,
                 **fields: Any) -> tuple[Actor, uuid.UUID]:
    actor = await new_actor(pool)
    channel, _ = await create_channel(pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/services/T/B/C")}, T0)
    job = await add_job(pool, actor, T0, sink.url("/work"), "* * * * *", name="export",
                        channels=[str(channel)], **fields)
    return actor, job


async def _simulate(pool: ConnectionPool, actor: Actor, job: uuid.UUID,
                    changes: dict[str, Any], end: datetime) -> dict[str, Any]:
    return await simulate_job(pool, actor, job, changes, T0, end, end)


def _events(side: dict[str, Any]) -> list[tuple[datetime, str]]:
    return [(a["at"], a["event"]) for a in side["alerts"]]


async def _run(worker: Worker, clock: FrozenClock, at: datetime) -> None:
    clock.set(at)
    await worker.run_once()
    await worker.settle()


async def test_a_proposed_min_duration_fails_the_quick_runs_and_replays_the_live_one(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    actor, job = await _setup(fresh_pool, sealer, sink)
    for n in (1, 2):
        await _run(worker, clock, T0 + n * MIN)
    end = T0 + 3 * MIN
    answer = await _simulate(fresh_pool, actor, job, {"min_duration": "1m"}, end)
    assert _events(answer["simulated"]) == [(T0 + MIN, "failed")]  # the streak alerts once
    assert answer["actual"]["alerts"] == []
    assert answer["changes"] == {"min_duration": 60}

    await update_job(fresh_pool, actor, job, {"min_duration": 60}, end)
    await _run(worker, clock, T0 + 4 * MIN)  # fails too_short, live
    end = T0 + 5 * MIN
    current = await _simulate(fresh_pool, actor, job, {}, end)
    assert _events(current["simulated"]) == _events(current["actual"]) == [
        (T0 + 4 * MIN, "failed")]
    without = await _simulate(fresh_pool, actor, job, {"min_duration": None}, end)
    assert without["simulated"]["alerts"] == []  # the too_short failure was a success
    assert without["summary"]["false_alarms_avoided"] == 0  # still open: not avoided


async def test_a_proposed_max_duration_says_too_long_at_the_deadline_as_live_does(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    actor, job = await _setup(fresh_pool, sealer, sink, confirm={"timeout_seconds": 86400})
    slot = T0 + MIN
    await _run(worker, clock, slot)
    [hit] = sink.hits_for("/work")
    token = urlsplit(hit.headers[HEADER]).path.rsplit("/", 1)[1]
    assert await confirm(fresh_pool, token, failed=False, exit_status=None,
                         now=slot + timedelta(hours=3)) == "succeeded"
    end = slot + timedelta(hours=4)
    answer = await _simulate(fresh_pool, actor, job, {"max_duration": "2h"}, end)
    assert _events(answer["simulated"]) == [(slot + timedelta(hours=2), "too_long")]
    assert answer["actual"]["alerts"] == []

    # live, with the bound set: the alert while it ran, and the replay of it
    await update_job(fresh_pool, actor, job, {"max_duration": "2h", "schedule": "@daily"},
                     end)
    clock.set(end)
    async with fresh_pool.connection() as conn:
        await conn.execute("UPDATE due_jobs SET due_at = %s WHERE job_id = %s",
                           (end + MIN, job))
    await _run(worker, clock, end + MIN)
    timeouts = ConfirmTimeouts(fresh_pool, None, clock)
    deadline = await timeouts.next_deadline()
    assert deadline == end + MIN + timedelta(hours=2)
    await timeouts.run_once(deadline)
    [second] = [h for h in sink.hits_for("/work") if h is not hit]
    token = urlsplit(second.headers[HEADER]).path.rsplit("/", 1)[1]
    await confirm(fresh_pool, token, failed=False, exit_status=None,
                  now=end + MIN + timedelta(hours=3))
    last = end + timedelta(hours=4)
    current = await _simulate(fresh_pool, actor, job, {}, last)
    assert _events(current["simulated"]) == _events(current["actual"]) == [
        (deadline, "too_long")]


async def test_a_proposed_alert_on_alerts_the_recorded_skipped_slot(
    fresh_pool: ConnectionPool, sealer: AesGcmSealer, sink: Sink,
) -> None:
    actor, job = await _setup(fresh_pool, sealer, sink, overlap="skip", timeout_seconds=600)
    for n in (1, 2):  # slot 1 runs and stays in flight, slot 2 is skipped
        await claim_due(fresh_pool, T0 + n * MIN, limit=100, lookahead=0, worker_id="w1",
                        lease_margin=30)
    end = T0 + 3 * MIN
    answer = await _simulate(fresh_pool, actor, job, {"alert_on": ["skipped"]}, end)
    assert _events(answer["simulated"]) == [(T0 + 2 * MIN, "skipped")]
    assert answer["actual"]["alerts"] == []
    assert (await _simulate(fresh_pool, actor, job, {"alert_on": ["missed"]},
                            end))["simulated"]["alerts"] == []

    await update_job(fresh_pool, actor, job, {"alert_on": ["skipped"]}, end)
    await claim_due(fresh_pool, T0 + 4 * MIN, limit=100, lookahead=0, worker_id="w1",
                    lease_margin=30)
    current = await _simulate(fresh_pool, actor, job, {}, T0 + 5 * MIN)
    assert _events(current["simulated"]) == _events(current["actual"]) == [
        (T0 + 4 * MIN, "skipped")]


async def test_the_proposals_through_the_api(
    frozen_api: AsyncTestClient, team: Team,
) -> None:
    auth = team.auth
    r = await frozen_api.post("/v1/jobs", headers=auth, json={
        "name": "export", "schedule": "@hourly", "request": {"url": "https://example.com/"},
        "max_duration": "3h"})
    job = r.json()["id"]
    url = f"/v1/jobs/{job}/simulate"
    r = await frozen_api.post(url, headers=auth, json={"changes": {
        "min_duration": "2m", "max_duration": "1h", "alert_on": ["missed", "skipped"]}})
    assert r.status_code == 200, r.text
    assert r.json()["changes"] == {"min_duration": 120, "max_duration": 3600,
                                   "alert_on": ["skipped", "missed"]}
    r = await frozen_api.post(url, headers=auth, json={"changes": {"min_duration": "4h"}})
    assert r.status_code == 422 and "changes.min_duration" in r.text  # above the max
    r = await frozen_api.post(url, headers=auth, json={"changes": {"alert_on": ["late"]}})
    assert r.status_code in (400, 422) and "alert_on" in r.text
