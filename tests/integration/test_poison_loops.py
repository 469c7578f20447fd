"""Poison items in the projector, notifier and checker (docs/operations.md, "Poison items"): each
one is isolated and
recorded with a reason, and the loop keeps working for the other items. Poisons are injected
with SQL into the real database."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar.testing import AsyncTestClient

from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool, transaction
from core.events import append_events
from core.maintenance.queries import held_alerts
from core.monitors.checker import Checker
from core.monitors.commands import update_monitor
from core.monitors.ping import PingPool
from core.notifications import messages
from core.notifications.outbox import Alert, enqueue
from core.rebuild import rebuild
from tests.helpers import add_job, new_actor, project_all
from tests.integration.test_projector import outcome_events
from tests.monitor_helpers import add_monitor, advance, monitor_row, ping, stream
from tests.notifying import DictSecrets, make_notifier
from tests.sink import Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


async def rows(pool: ConnectionPool, query: str, *args: Any) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(query, args)
        return await cur.fetchall()


async def test_a_poison_event_is_skipped_recorded_and_projections_go_on(
    fresh_pool: ConnectionPool,
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


async def test_a_poison_notification_fails_with_its_error_and_the_others_are_sent(
    fresh_pool: ConnectionPool, settings: Settings, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    hook, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "hook", "kind": "webhook", "url": sink.url("/hook")}, T0)
    bot, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "bot", "kind": "telegram", "token_secret": "BOT", "chat_id": "42"}, T0)
    async with transaction(fresh_pool) as conn:
        ids = await enqueue(conn, [
            Alert(actor.team_id, "channel", channel, "test", [channel],
                  messages.test_message(channel, name, T0))
            for channel, name in ((hook, "a"), (hook, "b"), (bot, "c"), (hook, "d"))], T0,
            hold=held_alerts)
    bad_message, bad_channel = ids[1], ids[2]
    async with fresh_pool.connection() as conn:
        await conn.execute("UPDATE notifications SET message = '{}' WHERE id = %s",
                           (bad_message,))
        await conn.execute("UPDATE channels SET config = '{}' WHERE id = %s", (bot,))
    notifier = make_notifier(fresh_pool, settings, clock, sealer, DictSecrets())
    try:
        assert await notifier.run_once() == 4
    finally:
        await notifier.delivery.client.aclose()
    assert len(sink.hits) == 2  # a and d
    by_id = {r["id"]: r for r in await rows(fresh_pool, "SELECT * FROM notifications")}
    assert by_id[ids[0]]["status"] == "sent" and by_id[ids[3]]["status"] == "sent"
    for poison in (bad_message, bad_channel):
        row = by_id[poison]
        assert row["status"] == "failed" and row["last_error_class"] == "internal"
        assert "cannot be built" in row["last_error"]
        [event] = await rows(fresh_pool, "SELECT * FROM events WHERE stream_id = %s "
                             "AND event_type = 'notification.failed'", poison)
        assert event["data"]["final"] is True


async def test_a_monitor_whose_schedule_breaks_is_marked_broken_and_the_others_are_checked(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
) -> None:
    actor = await new_actor(fresh_pool)
    made = [await add_monitor(fresh_pool, actor, T0, "0 * * * *", grace_seconds=60)
            for _ in range(3)]
    for _, token in made:
        await ping(ping_pool, token, T0 + timedelta(minutes=1))
    (a, _), (poison, poison_token), (c, _) = made
    async with fresh_pool.connection() as conn:
        await conn.execute("UPDATE monitors SET timezone = 'Mars/Base' WHERE id = %s", (poison,))
    counts = await checker.run_once(T0 + timedelta(minutes=1))
    assert counts.claimed == 3
    row = await monitor_row(fresh_pool, poison)
    assert "Mars/Base" in row["broken_reason"] and row["broken_at"] == T0 + timedelta(minutes=1)
    assert row["alert_at"] is None
    events = await stream(fresh_pool, poison)
    assert events[-1]["event_type"] == "monitor.broken"
    assert events[-1]["data"] == {"reason": row["broken_reason"]}
    assert events[-1]["metadata"]["actor"].startswith("checker:")
    for good in (a, c):
        assert (await monitor_row(fresh_pool, good))["next_expected_at"] == T0 + timedelta(hours=1)
    # The loop goes on: the good monitors go down when overdue; the broken one stays parked,
    # even when it is pinged again.
    await ping(ping_pool, poison_token, T0 + timedelta(minutes=2))
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=5))
    assert [(await monitor_row(fresh_pool, m))["status"] for m in (a, c)] == ["down", "down"]
    assert [e["event_type"] for e in await stream(fresh_pool, poison)].count(
        "monitor.broken") == 1
    assert (await monitor_row(fresh_pool, poison))["alert_at"] is None
    # A PATCH that fixes it repairs it, and it is checked again.
    await update_monitor(fresh_pool, actor, poison, {"timezone": "UTC"},
                         T0 + timedelta(hours=1, minutes=6))
    row = await monitor_row(fresh_pool, poison)
    assert row["broken_at"] is None and row["broken_reason"] is None
    assert row["alert_at"] is not None
    assert (await stream(fresh_pool, poison))[-1]["event_type"] == "monitor.repaired"


async def test_api_reads_a_poison_monitor_without_a_500(
    api: AsyncTestClient, team: Team, pool: ConnectionPool,
) -> None:
    created = (await api.post("/v1/monitors", headers=team.auth, json={
        "name": "m", "schedule": "0 3 * * *", "timezone": "Europe/Paris"})).json()
    async with pool.connection() as conn:
        await conn.execute("UPDATE monitors SET timezone = 'Mars/Base' WHERE id = %s",
                           (uuid.UUID(created["id"]),))
    listed = await api.get("/v1/monitors", headers=team.auth)
    assert listed.status_code == 200, listed.text
    [item] = listed.json()["items"]
    assert "Mars/Base" in item["broken_reason"] and item["broken_at"] is None
    assert item["schedule_description"].endswith("no longer valid)")
    paused = await api.post(f"/v1/monitors/{created['id']}/pause", headers=team.auth)
    assert paused.status_code < 500, paused.text
