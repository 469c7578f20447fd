"""Poison items in the projector, notifier and checker (issue #11): each one is isolated and
recorded with a reason, and the loop keeps working for the other items. Poisons are injected
with SQL into the real database."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from psycopg_pool import AsyncConnectionPool

from core.db import transaction
from core.events import append_events
from core.projections.rebuild import rebuild
from tests.helpers import add_job, new_actor, project_all
from tests.test_projector import outcome_events

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


async def rows(pool: AsyncConnectionPool, query: str, *args: Any) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(query, args)
        return await cur.fetchall()


async def test_a_poison_event_is_skipped_recorded_and_projections_go_on(
    fresh_pool: AsyncConnectionPool,
) -> None:
    actor = await new_actor(fresh_pool)
    team = actor.team_id
    job = await add_job(fresh_pool, actor, T0, "http://127.0.0.1:9/", "0 0 1 1 *")
    async with transaction(fresh_pool) as conn:
        await append_events(conn, outcome_events(team, job, T0, [("run.succeeded", 10, 1)]))
        # A bad payload, as a bug or a hand-written event could leave it in the log.
        cur = await conn.execute(
            "INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, "
            "data, occurred_at) VALUES ('run', %s, 1, 'run.succeeded', %s, %s::jsonb, %s) "
            "RETURNING global_position",
            (uuid.uuid4(), team, '{"job_id": "not-a-uuid", "scheduled_for": "yesterday"}', T0))
        [poison] = await cur.fetchall()
        await append_events(conn, outcome_events(team, job, T0 + timedelta(minutes=1),
                                                 [("run.failed", 20, 2)]))
    await project_all(fresh_pool)
    [stats] = await rows(fresh_pool, "SELECT * FROM job_stats_hourly WHERE job_id = %s", job)
    assert (stats["succeeded"], stats["failed"]) == (1, 1)
    [skipped] = await rows(fresh_pool, "SELECT * FROM projection_skipped")
    assert skipped["global_position"] == poison["global_position"]
    assert skipped["event_type"] == "run.succeeded" and skipped["name"] == "reporting"
    assert skipped["reason"]
    # Later events keep being projected.
    async with transaction(fresh_pool) as conn:
        await append_events(conn, outcome_events(team, job, T0 + timedelta(minutes=2),
                                                 [("run.succeeded", 10, 1)]))
    await project_all(fresh_pool)
    [stats] = await rows(fresh_pool, "SELECT * FROM job_stats_hourly WHERE job_id = %s", job)
    assert (stats["succeeded"], stats["failed"]) == (2, 1)
    # A rebuild skips the same event: it equals what the live projector built.
    live = await rows(fresh_pool, "SELECT * FROM job_stats_hourly ORDER BY job_id, bucket_start")
    await rebuild(fresh_pool, T0 + timedelta(days=1))
    assert await rows(fresh_pool,
                      "SELECT * FROM job_stats_hourly ORDER BY job_id, bucket_start") == live
    assert {(r["name"], r["global_position"]) for r in await rows(
        fresh_pool, "SELECT * FROM projection_skipped")} == {
        ("reporting", poison["global_position"]), ("rebuild:runs", poison["global_position"])}
