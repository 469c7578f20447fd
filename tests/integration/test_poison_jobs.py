"""Poison jobs (docs/api.md, "Broken jobs"): a stored definition that no longer evaluates is
isolated.

The poison is injected with SQL into the real database, as a tzdata upgrade or a hand edit
would leave it; the worker marks the job broken (event, row, alert), skips it, and every other
job keeps firing; the API reads it without a 500; a PATCH repairs it.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.actor import Actor
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.db import ConnectionPool
from core.jobs.commands import set_paused, trigger_job, update_job
from core.runs.worker import Worker
from tests.helpers import add_job, due_at, new_actor, runs_of
from tests.sink import Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


async def tick(worker: Worker, clock: FrozenClock, at: datetime) -> int:
    clock.set(at)
    claimed = await worker.run_once()
    await worker.settle()
    return claimed


async def sql(pool: ConnectionPool, query: str, *args: Any) -> None:
    async with pool.connection() as conn:
        await conn.execute(query, args)


async def job_row(pool: ConnectionPool, job_id: uuid.UUID) -> dict[str, Any]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM jobs WHERE id = %s", (job_id,))
        return await cur.fetchone()


async def job_stream(pool: ConnectionPool, job_id: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT * FROM events WHERE stream_id = %s ORDER BY stream_version", (job_id,))
        return await cur.fetchall()


async def three_jobs(pool: ConnectionPool, actor: Actor, sink: Sink,
                     **poison_fields: Any) -> tuple[uuid.UUID, uuid.UUID, uuid.UUID]:
    a = await add_job(pool, actor, T0, sink.url("/a"), "* * * * *")
    poison = await add_job(pool, actor, T0, sink.url("/p"), "* * * * *", **poison_fields)
    b = await add_job(pool, actor, T0, sink.url("/b"), "* * * * *")
    return a, poison, b


async def test_bad_zone_marks_the_job_broken_and_the_others_keep_firing(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    hook, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "hook", "kind": "webhook", "url": sink.url("/hook")}, T0)
    a, poison, b = await three_jobs(fresh_pool, actor, sink, channels=[str(hook)])
    await sql(fresh_pool, "UPDATE jobs SET timezone = 'Mars/Base' WHERE id = %s", poison)

    assert await tick(worker, clock, T0 + timedelta(minutes=1)) == 3
    assert sorted(h.path for h in sink.hits) == ["/a", "/b"]
    assert await runs_of(fresh_pool, poison) == []
    row = await job_row(fresh_pool, poison)
    assert row["broken_at"] == T0 + timedelta(minutes=1)
    assert "Mars/Base" in row["broken_reason"]
    assert row["status"] == "active" and row["version"] == 2
    assert await due_at(fresh_pool, poison) is None
    events = await job_stream(fresh_pool, poison)
    assert [e["event_type"] for e in events] == ["job.created", "job.broken"]
    assert events[-1]["data"] == {"reason": row["broken_reason"]}
    assert events[-1]["metadata"]["actor"] == "worker:test-worker"
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT event, message, channel_id FROM notifications WHERE subject_id = %s",
            (poison,))
        [alert] = await cur.fetchall()
    assert alert["event"] == "broken" and alert["channel_id"] == hook
    assert alert["message"]["event"] == "job.broken"
    assert "Mars/Base" in alert["message"]["text"]

    # Later claims: the others keep firing, the broken job is neither claimed nor re-alerted.
    await tick(worker, clock, T0 + timedelta(minutes=2))
    assert sorted(h.path for h in sink.hits) == ["/a", "/a", "/b", "/b"]
    assert len(await job_stream(fresh_pool, poison)) == 2

    # A PATCH that fixes the definition repairs it and re-arms its next slot.
    await update_job(fresh_pool, actor, poison, {"timezone": "UTC"},
                     T0 + timedelta(minutes=2, seconds=30))
    row = await job_row(fresh_pool, poison)
    assert row["broken_at"] is None and row["broken_reason"] is None
    assert [e["event_type"] for e in await job_stream(fresh_pool, poison)][-2:] == [
        "job.updated", "job.repaired"]
    assert await due_at(fresh_pool, poison) == T0 + timedelta(minutes=3)
    await tick(worker, clock, T0 + timedelta(minutes=3))
    assert [h.path for h in sink.hits].count("/p") == 1


async def test_unparsable_schedule_and_bad_request_are_isolated(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
) -> None:
    actor = await new_actor(fresh_pool)
    a, bad_schedule, b = await three_jobs(fresh_pool, actor, sink)
    bad_request = await add_job(fresh_pool, actor, T0, sink.url("/r"), "* * * * *")
    await sql(fresh_pool, "UPDATE jobs SET schedule = '61 * * * *' WHERE id = %s", bad_schedule)
    await sql(fresh_pool, """UPDATE jobs SET request = '{"method": "GET"}' WHERE id = %s""",
              bad_request)
    await tick(worker, clock, T0 + timedelta(minutes=1))
    assert sorted(h.path for h in sink.hits) == ["/a", "/b"]
    assert "61 * * * *" in (await job_row(fresh_pool, bad_schedule))["broken_reason"]
    assert "url" in (await job_row(fresh_pool, bad_request))["broken_reason"]
    assert await runs_of(fresh_pool, bad_schedule) == []
    assert await runs_of(fresh_pool, bad_request) == []


async def test_a_request_that_cannot_be_built_fails_its_run_and_breaks_the_job(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
) -> None:
    actor = await new_actor(fresh_pool)
    good = await add_job(fresh_pool, actor, T0, sink.url("/g"), "* * * * *")
    bad = await add_job(fresh_pool, actor, T0, sink.url("/x"), "* * * * *")
    await trigger_job(fresh_pool, actor, good, T0 + timedelta(seconds=10))
    await trigger_job(fresh_pool, actor, bad, T0 + timedelta(seconds=10))
    # Queued manual runs are claimed without the job's schedule: the executor meets the poison.
    await sql(fresh_pool, """UPDATE jobs SET request = '{"method": "GET"}' WHERE id = %s""", bad)
    await tick(worker, clock, T0 + timedelta(seconds=10))
    assert [h.path for h in sink.hits] == ["/g"]
    [run] = await runs_of(fresh_pool, bad)
    assert run["status"] == "failed" and run["error_class"] == "invalid_request"
    row = await job_row(fresh_pool, bad)
    assert "request cannot be built" in row["broken_reason"]
    assert await due_at(fresh_pool, bad) is None
    # The loop goes on: the good job's slot still fires.
    await tick(worker, clock, T0 + timedelta(minutes=1))
    assert [h.path for h in sink.hits] == ["/g", "/g"]


async def test_resume_and_trigger_of_a_broken_job_are_refused_until_it_evaluates(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
) -> None:
    from core.errors import Conflict

    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/p"), "* * * * *")
    await sql(fresh_pool, "UPDATE jobs SET timezone = 'Mars/Base' WHERE id = %s", job)
    await tick(worker, clock, T0 + timedelta(minutes=1))
    for call in (set_paused(fresh_pool, actor, job, False, T0 + timedelta(minutes=1)),
                 trigger_job(fresh_pool, actor, job, T0 + timedelta(minutes=1))):
        with pytest.raises(Conflict, match="broken"):  # not resumed, not triggered
            await call
    # The zone is back (say tzdata was restored): a resume repairs it.
    await sql(fresh_pool, "UPDATE jobs SET timezone = 'UTC' WHERE id = %s", job)
    await set_paused(fresh_pool, actor, job, False, T0 + timedelta(minutes=1, seconds=5))
    assert (await job_row(fresh_pool, job))["broken_reason"] is None
    assert await due_at(fresh_pool, job) == T0 + timedelta(minutes=2)
    events = [e["event_type"] for e in await job_stream(fresh_pool, job)]
    assert events == ["job.created", "job.broken", "job.repaired"]


async def test_api_reads_a_poison_job_without_a_500(
    api: AsyncTestClient, team: Team, pool: ConnectionPool, sink: Sink,
) -> None:
    auth = team.auth
    created = (await api.post("/v1/jobs", headers=auth, json={
        "name": "poison", "schedule": "0 3 * * *", "timezone": "Europe/Paris",
        "request": {"url": sink.url("/p")}})).json()
    await sql(pool, "UPDATE jobs SET timezone = 'Mars/Base' WHERE id = %s",
              uuid.UUID(created["id"]))
    listed = await api.get("/v1/jobs", headers=auth)
    assert listed.status_code == 200, listed.text
    [item] = listed.json()["items"]
    assert item["schedule_description"] == "0 3 * * * (Mars/Base, no longer valid)"
    assert "Mars/Base" in item["broken_reason"] and item["broken_at"] is None
    one = await api.get(f"/v1/jobs/{created['id']}", headers=auth)
    assert one.status_code == 200 and one.json()["broken_reason"] == item["broken_reason"]
    assert created["broken_reason"] is None and created["broken_at"] is None
    # A PATCH that does not fix it is refused with a 4xx naming the field; one that does works.
    bad = await api.patch(f"/v1/jobs/{created['id']}", headers=auth, json={"name": "x"})
    assert bad.status_code == 422 and "timezone" in bad.text
    fixed = await api.patch(f"/v1/jobs/{created['id']}", headers=auth,
                            json={"timezone": "Europe/Paris"})
    assert fixed.status_code == 200 and fixed.json()["broken_reason"] is None
