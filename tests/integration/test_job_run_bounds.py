"""Run-time bounds of jobs (docs/notifications.md, *Run-time bounds of jobs*): a successful
attempt sooner than ``min_duration`` is a failed one (``too_short``, retried like any failure);
a run still going past ``max_duration`` alerts while it runs, once, and goes on. Real
PostgreSQL, the real worker against a local HTTP sink, the confirmation service, a frozen clock.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.actor import Actor
from core.alerts.explain import explain_alert
from core.alerts.queries import list_alerts
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.db import ConnectionPool
from core.errors import InvalidInput
from core.job_definition import Request, RetryPolicy
from core.jobs.commands import update_job
from core.runs.bounds import too_short
from core.runs.confirm import ConfirmTimeouts
from core.runs.dispatch import AttemptResult, Dispatch
from core.runs.worker import Worker
from tests.helpers import add_job, new_actor, run_events, runs_of
from tests.sink import Reply, Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
SLOT = T0 + timedelta(minutes=1)


async def _setup(pool: ConnectionPool, sealer: AesGcmSealer, sink: Sink,
                 **fields: Any) -> tuple[Actor, uuid.UUID]:
    actor = await new_actor(pool)
    channel, _ = await create_channel(pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/services/T/B/C")}, T0)
    job = await add_job(pool, actor, T0, sink.url("/work"), "* * * * *", name="backup",
                        channels=[str(channel)], **fields)
    return actor, job


async def _run_at(worker: Worker, clock: FrozenClock, at: datetime) -> None:
    clock.set(at)
    await worker.run_once()
    await worker.settle()


async def _notifications(pool: ConnectionPool, job: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT event, message FROM notifications "
                                 "WHERE subject_id = %s ORDER BY created_at, id", (job,))
        return await cur.fetchall()


async def test_an_answer_sooner_than_min_duration_is_a_failure_retried_then_alerted(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    """The backup endpoint answers 200 at once (its dump was empty): two attempts, both too
    short, the run fails and alerts."""
    actor, job = await _setup(fresh_pool, sealer, sink, min_duration="2m",
                              retry={"attempts": 2, "backoff": "fixed", "delay_seconds": 5})
    clock.set(SLOT)
    await worker.run_once()
    await worker.settle()
    [run] = await runs_of(fresh_pool, job)
    assert (run["status"], run["error_class"]) == ("queued", "too_short")
    assert run["error"].endswith("expected at least 2 min (min_duration)")
    assert run["error"].startswith("finished in ")
    clock.set(SLOT + timedelta(seconds=5))
    await worker.run_once()
    await worker.settle()
    [run] = await runs_of(fresh_pool, job)
    assert (run["status"], run["error_class"], run["attempt"]) == ("failed", "too_short", 2)
    assert [e["event_type"] for e in await run_events(fresh_pool, run["id"])] == [
        "run.started", "run.retry_scheduled", "run.started", "run.failed"]
    [alert] = await _notifications(fresh_pool, job)
    assert alert["event"] == "failed" and "(min_duration)" in alert["message"]["text"]
    [record] = await list_alerts(fresh_pool, actor, limit=5, before=None, job=job)
    why = await explain_alert(fresh_pool, actor, record["id"])
    assert why["definition"]["min_duration"] == 120


def _result(duration_ms: int, min_duration: int | None, error_class: str | None = None
            ) -> AttemptResult:
    dispatch = Dispatch(run_id=uuid.uuid4(), job_id=uuid.uuid4(), team_id=uuid.uuid4(),
                        scheduled_for=SLOT, trigger="schedule", attempt=1, max_attempts=1,
                        lease_token=uuid.uuid4(), version=1, request=Request.from_json({}),
                        timeout_seconds=30, retry=RetryPolicy.from_json({}),
                        min_duration=min_duration)
    return AttemptResult(dispatch, SLOT, SLOT + timedelta(milliseconds=duration_ms),
                         duration_ms, {}, response_status=200, error_class=error_class)


def test_the_bound_is_exclusive_and_leaves_failures_and_unbounded_jobs_alone() -> None:
    assert too_short(_result(3999, 4)).error_class == "too_short"
    assert too_short(_result(3999, 4)).error == (
        "finished in 3 s, expected at least 4 s (min_duration)")
    assert too_short(_result(4000, 4)).ok  # exactly the minimum is long enough
    assert too_short(_result(10, None)).ok
    assert too_short(_result(10, 4, "http_status")).error_class == "http_status"


async def test_a_run_past_max_duration_alerts_while_it_runs_once_and_goes_on(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    """A fire-and-confirm export may take up to a day to confirm; past 2 h it is late."""
    actor, job = await _setup(fresh_pool, sealer, sink, max_duration="2h",
                              confirm={"timeout_seconds": 86400})
    timeouts = ConfirmTimeouts(fresh_pool, None, clock)
    clock.set(SLOT)
    await worker.run_once()
    await worker.settle()
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "awaiting_confirmation"
    deadline = await timeouts.next_deadline()
    assert deadline == run["started_at"] + timedelta(hours=2)  # before the confirm timeout
    await timeouts.run_once(deadline - timedelta(microseconds=1))
    assert await _notifications(fresh_pool, job) == []
    await timeouts.run_once(deadline)
    [alert] = await _notifications(fresh_pool, job)
    assert alert["event"] == "too_long"
    assert alert["message"]["title"] == "Job \u201cbackup\u201d is still running after 2 h"
    assert "(max_duration)" in alert["message"]["text"]
    [run] = await runs_of(fresh_pool, job)
    assert run["status"] == "awaiting_confirmation"  # it goes on
    assert run["overran_at"] == deadline
    assert [e["event_type"] for e in await run_events(fresh_pool, run["id"])][-1] == \
        "run.overran"
    [record] = await list_alerts(fresh_pool, actor, limit=5, before=None, job=job)
    why = await explain_alert(fresh_pool, actor, record["id"])
    assert why["rule"]["reason"] == "max_duration"
    assert "past max_duration (7200 s)" in why["rule"]["text"]
    assert why["expected"]["slot"] == SLOT
    await timeouts.run_once(deadline + timedelta(hours=1))
    assert len(await _notifications(fresh_pool, job)) == 1  # said once
    assert await timeouts.next_deadline() == run["started_at"] + timedelta(days=1)


async def test_bounds_are_checked(fresh_pool: ConnectionPool) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, "https://example.com/", name="j")
    cases = [({"min_duration": "2h", "max_duration": "1h"}, "min_duration"),
             ({"max_duration": 0}, "max_duration"),
             ({"max_duration": "367d"}, "max_duration"),
             ({"min_duration": "1m", "confirm": {"timeout_seconds": 60}}, "min_duration")]
    for fields, field in cases:
        with pytest.raises(InvalidInput) as caught:
            await update_job(fresh_pool, actor, job, fields, T0)
        assert caught.value.errors[0].field == field
    await update_job(fresh_pool, actor, job, {"min_duration": 90, "max_duration": "6h"}, T0)
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT min_duration, max_duration FROM jobs WHERE id = %s",
                                 (job,))
        assert await cur.fetchone() == {"min_duration": 90, "max_duration": 21600}


async def test_bounds_through_the_api_apply_and_export(
    frozen_api: AsyncTestClient, team: Team,
) -> None:
    auth = team.auth
    body = {"name": "export", "schedule": "@daily", "request": {"url": "https://example.com/"}}
    r = await frozen_api.post("/v1/jobs", headers=auth, json={**body, "min_duration": "2m",
                                                              "max_duration": 7200})
    assert r.status_code == 201, r.text
    job = r.json()
    assert (job["min_duration"], job["max_duration"]) == (120, 7200)
    r = await frozen_api.patch(f"/v1/jobs/{job['id']}", headers=auth,
                               json={"max_duration": "1m"})
    assert r.status_code == 422 and "min_duration" in r.text
    r = await frozen_api.patch(f"/v1/jobs/{job['id']}", headers=auth,
                               json={"max_duration": 10**9})
    assert r.status_code in (400, 422) and "max_duration" in r.text
    r = await frozen_api.get("/v1/export", headers=auth)
    document = r.json()
    [exported] = document["jobs"]
    assert (exported["min_duration"], exported["max_duration"]) == (120, 7200)
    r = await frozen_api.post("/v1/apply", headers=auth, json={**document,
                                                              "digest": "ab" * 32})
    assert r.status_code == 200 and {c["action"] for c in r.json()["changes"]} == {"unchanged"}


async def test_recovered_after_two_good_runs_in_a_row(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    """Failure tolerance of jobs, its recovery half (docs/notifications.md, *Failure
    tolerance*): fail, ok, fail, ok, ok says failed once and recovered at the fifth run."""
    _, job = await _setup(fresh_pool, sealer, sink, recover_after_successes=2)
    sink.reply("/work", *(Reply(status=s) for s in (500, 200, 500, 200, 200)))
    for n in range(1, 6):
        await _run_at(worker, clock, T0 + n * timedelta(minutes=1))
    events = [row["event"] for row in await _notifications(fresh_pool, job)]
    assert events == ["failed", "recovered"]
    rows = await _notifications(fresh_pool, job)
    assert "after 2 failed runs" in rows[1]["message"]["text"]
