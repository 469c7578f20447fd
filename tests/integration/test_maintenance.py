"""Maintenance windows (docs/ledger.md): alerts held inside a window and the one
released at its close, slots skipped by a ``suppress: runs`` window, the snooze, the API.

Real PostgreSQL, a real local Slack endpoint (tests/sink.py), a frozen clock.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar.testing import AsyncTestClient

from core.actor import Actor
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.db import ConnectionPool
from core.maintenance.commands import create_window, end_window
from core.maintenance.release import MaintenanceRelease
from core.monitors.checker import Checker
from core.monitors.ping import PingPool
from core.runs.worker import Worker
from tests.helpers import add_job, new_actor, runs_of
from tests.monitor_helpers import add_monitor, advance, monitor_row, ping
from tests.sink import Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
HOOK = "/services/T0/B0/maintenance"


async def outbox(pool: ConnectionPool, subject: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM notifications WHERE subject_id = %s "
                                 "ORDER BY created_at, id", (subject,))
        return await cur.fetchall()


async def event_types(pool: ConnectionPool, stream_type: str) -> list[str]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT event_type FROM events WHERE stream_type = %s "
                                 "ORDER BY global_position", (stream_type,))
        return [row["event_type"] for row in await cur.fetchall()]


async def _monitor(pool: ConnectionPool, sealer: AesGcmSealer,
                   sink: Sink) -> tuple[Actor, uuid.UUID, str]:
    actor = await new_actor(pool)
    slack, _ = await create_channel(pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url(HOOK)}, T0)
    monitor, token = await add_monitor(pool, actor, T0, "10m", name="backup",
                                       grace_seconds=60, channels=[str(slack)])
    return actor, monitor, token


async def test_window_holds_the_down_alert_and_releases_exactly_one_at_its_close(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer, clock: FrozenClock,
) -> None:
    actor, monitor, token = await _monitor(fresh_pool, sealer, sink)
    await create_window(fresh_pool, actor, {"from": T0, "to": T0 + timedelta(hours=1),
                                            "monitors": [monitor]}, T0)
    release = MaintenanceRelease(fresh_pool, None, clock)
    assert await release.next_deadline() == T0 + timedelta(hours=1)
    assert await ping(ping_pool, token, T0) == "up"
    await advance(checker, fresh_pool, T0 + timedelta(minutes=12))
    assert (await monitor_row(fresh_pool, monitor))["status"] == "down"
    [held] = await outbox(fresh_pool, monitor)
    assert (held["event"], held["status"]) == ("down", "suppressed")
    assert "notification.suppressed" in await event_types(fresh_pool, "notification")
    assert await release.run_once(T0 + timedelta(minutes=59)) == 0  # still inside
    assert await release.run_once(T0 + timedelta(hours=1)) == 1  # the close
    assert await release.run_once(T0 + timedelta(hours=2)) == 0  # never twice
    rows = await outbox(fresh_pool, monitor)
    assert [(r["event"], r["status"]) for r in rows] == [("down", "suppressed"),
                                                         ("down", "pending")]
    assert rows[1]["message"]["since"] == rows[0]["message"]["since"]
    assert await release.next_deadline() is None


async def test_a_monitor_back_up_before_the_close_gets_no_alert(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer, clock: FrozenClock,
) -> None:
    actor, monitor, token = await _monitor(fresh_pool, sealer, sink)
    window = await create_window(fresh_pool, actor, {"from": T0,
                                                     "to": T0 + timedelta(hours=1)}, T0)
    await ping(ping_pool, token, T0)
    await advance(checker, fresh_pool, T0 + timedelta(minutes=12))
    assert await ping(ping_pool, token, T0 + timedelta(minutes=20)) == "up"
    assert [r["status"] for r in await outbox(fresh_pool, monitor)] == ["suppressed",
                                                                       "suppressed"]
    await end_window(fresh_pool, actor, window, T0 + timedelta(minutes=30))
    release = MaintenanceRelease(fresh_pool, None, clock)
    assert await release.run_once(T0 + timedelta(minutes=31)) == 0
    assert len(await outbox(fresh_pool, monitor)) == 2
    # After the window, a new outage alerts as usual.
    await advance(checker, fresh_pool, T0 + timedelta(minutes=32))
    assert [r["status"] for r in await outbox(fresh_pool, monitor)][-1] == "pending"


async def test_ended_early_window_releases_at_the_end(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer, clock: FrozenClock,
) -> None:
    actor, monitor, token = await _monitor(fresh_pool, sealer, sink)
    window = await create_window(fresh_pool, actor, {
        "schedule": "0 12 * * *", "duration_seconds": 7200, "monitors": [monitor]},
        T0 - timedelta(minutes=1))
    await ping(ping_pool, token, T0)
    await advance(checker, fresh_pool, T0 + timedelta(minutes=12))
    assert [r["status"] for r in await outbox(fresh_pool, monitor)] == ["suppressed"]
    await end_window(fresh_pool, actor, window, T0 + timedelta(minutes=40))
    release = MaintenanceRelease(fresh_pool, None, clock)
    assert await release.run_once(T0 + timedelta(minutes=41)) == 1
    assert [r["status"] for r in await outbox(fresh_pool, monitor)] == ["suppressed", "pending"]


async def test_suppress_runs_skips_slots_with_reason_maintenance(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
) -> None:
    actor = await new_actor(fresh_pool)
    job = await add_job(fresh_pool, actor, T0, sink.url("/a"), "* * * * *")
    other = await add_job(fresh_pool, actor, T0, sink.url("/b"), "* * * * *", name="other")
    await create_window(fresh_pool, actor, {
        "from": T0, "to": T0 + timedelta(minutes=2, seconds=30), "jobs": [job],
        "suppress": "runs"}, T0)
    for minute in (1, 2, 3):
        clock.set(T0 + timedelta(minutes=minute))
        await worker.run_once()
        await worker.settle()
    runs = await runs_of(fresh_pool, job)
    assert [(r["status"], r["reason"]) for r in runs] == [
        ("skipped", "maintenance"), ("skipped", "maintenance"), ("succeeded", None)]
    assert [r["status"] for r in await runs_of(fresh_pool, other)] == ["succeeded"] * 3
    assert [h.path for h in sink.hits].count("/a") == 1


async def test_api_create_list_change_end_and_errors(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
) -> None:
    h = team.auth
    now = clock.now()
    monitor = (await frozen_api.post("/v1/monitors", headers=h, json={
        "name": "m", "schedule": "10m"})).json()
    assert monitor["in_maintenance_until"] is None
    body = {"from": now.isoformat(), "to": (now + timedelta(hours=1)).isoformat(),
            "monitors": [monitor["id"]]}
    r = await frozen_api.post("/v1/maintenance", headers=h, json=body)
    assert r.status_code == 201, r.text
    window = r.json()
    assert window["suppress"] == "alerts" and window["in_effect_until"] is not None
    got = (await frozen_api.get(f"/v1/monitors/{monitor['id']}", headers=h)).json()
    assert got["in_maintenance_until"] == window["to"]
    page = (await frozen_api.get("/v1/maintenance", headers=h)).json()
    assert [w["id"] for w in page["items"]] == [window["id"]]
    r = await frozen_api.patch(f"/v1/maintenance/{window['id']}", headers=h,
                               json={"comment": "db upgrade", "version": window["version"]})
    assert r.status_code == 200 and r.json()["comment"] == "db upgrade"
    r = await frozen_api.post(f"/v1/maintenance/{window['id']}/end", headers=h)
    assert r.status_code == 200 and r.json()["ended_at"] is not None
    assert r.json()["in_effect_until"] is None
    assert (await frozen_api.post(f"/v1/maintenance/{window['id']}/end",
                                  headers=h)).status_code == 409
    assert (await frozen_api.delete(f"/v1/maintenance/{uuid.uuid4()}",
                                    headers=h)).status_code == 404
    got = (await frozen_api.get(f"/v1/monitors/{monitor['id']}", headers=h)).json()
    assert got["in_maintenance_until"] is None
    bad = [
        {"from": now.isoformat()},  # no to
        {"from": now.isoformat(), "to": now.isoformat()},  # empty
        {"schedule": "0 3 * * *"},  # no duration
        {"schedule": "nonsense", "duration_seconds": 60},
        {"schedule": "0 3 * * *", "duration_seconds": 60, "timezone": "Mars/Base"},
        {"from": now.isoformat(), "to": (now + timedelta(hours=1)).isoformat(),
         "jobs": [str(uuid.uuid4())]},  # not a job of the team
        {"from": now.isoformat(), "to": (now + timedelta(hours=1)).isoformat(),
         "suppress": "everything"},
        {"from": now.isoformat(), "to": (now + timedelta(hours=1)).isoformat(),
         "schedule": "0 3 * * *", "duration_seconds": 60},  # both kinds
    ]
    for payload in bad:
        r = await frozen_api.post("/v1/maintenance", headers=h, json=payload)
        assert r.status_code == 422, (payload, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")
    assert len((await frozen_api.get("/v1/maintenance", headers=h)).json()["items"]) == 1


async def test_a_window_whose_monitor_was_deleted_can_still_be_edited(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
) -> None:
    """A deleted monitor stays in the windows that name it; an edit that keeps it is not
    refused for it (the request does not name it), a new id must still be live."""
    h, now = team.auth, clock.now()
    monitor = (await frozen_api.post("/v1/monitors", headers=h, json={
        "name": "gone", "schedule": "10m"})).json()
    window = (await frozen_api.post("/v1/maintenance", headers=h, json={
        "from": now.isoformat(), "to": (now + timedelta(hours=1)).isoformat(),
        "monitors": [monitor["id"]]})).json()
    assert (await frozen_api.delete(f"/v1/monitors/{monitor['id']}", headers=h)
            ).status_code == 204
    r = await frozen_api.patch(f"/v1/maintenance/{window['id']}", headers=h,
                               json={"comment": "kept"})
    assert r.status_code == 200, r.text
    assert r.json()["monitors"] == [monitor["id"]]
    stranger = str(uuid.uuid4())
    r = await frozen_api.patch(f"/v1/maintenance/{window['id']}", headers=h,
                               json={"monitors": [monitor["id"], stranger]})
    assert r.status_code == 422 and [e["field"] for e in r.json()["errors"]] == ["monitors.1"]


async def test_snooze_is_a_one_off_window_on_the_monitor(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
    pool: ConnectionPool,
) -> None:
    h = team.auth
    monitor = (await frozen_api.post("/v1/monitors", headers=h, json={
        "name": "m", "schedule": "10m"})).json()
    r = await frozen_api.post(f"/v1/monitors/{monitor['id']}/snooze", headers=h,
                              json={"for": "2h"})
    assert r.status_code == 200, r.text
    window = r.json()
    assert window["monitors"] == [monitor["id"]] and window["comment"] == "snooze"
    until = clock.now() + timedelta(hours=2)
    assert datetime.fromisoformat(window["to"]) == until
    got = (await frozen_api.get(f"/v1/monitors/{monitor['id']}", headers=h)).json()
    assert datetime.fromisoformat(got["in_maintenance_until"]) == until
    for payload in ({"for": "2 hours"}, {"for": "10s"}, {"for": "90d"}, {}):
        r = await frozen_api.post(f"/v1/monitors/{monitor['id']}/snooze", headers=h,
                                  json=payload)
        assert r.status_code in (400, 422), (payload, r.text)
    r = await frozen_api.post(f"/v1/monitors/{uuid.uuid4()}/snooze", headers=h,
                              json={"for": "1h"})
    assert r.status_code == 404
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT e.event_type, e.metadata FROM events e WHERE e.stream_type = 'maintenance'"
            " AND e.stream_id = %s", (uuid.UUID(window["id"]),))
        [event] = await cur.fetchall()
    assert event["event_type"] == "maintenance.created" and event["metadata"]["actor"]


async def test_a_window_naming_tags_covers_the_jobs_and_monitors_carrying_them(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
) -> None:
    h = team.auth
    now = clock.now()
    tagged = (await frozen_api.post("/v1/monitors", headers=h, json={
        "name": "db backup", "schedule": "10m", "tags": ["db", "nightly"]})).json()
    other = (await frozen_api.post("/v1/monitors", headers=h, json={
        "name": "web", "schedule": "10m", "tags": ["web"]})).json()
    job = (await frozen_api.post("/v1/jobs", headers=h, json={
        "name": "vacuum", "schedule": "0 3 * * *", "tags": ["db"],
        "request": {"url": "https://example.com/vacuum"}})).json()
    r = await frozen_api.post("/v1/maintenance", headers=h, json={
        "from": now.isoformat(), "to": (now + timedelta(hours=1)).isoformat(),
        "tags": ["db"]})
    assert r.status_code == 201, r.text
    until = r.json()["to"]
    got = (await frozen_api.get(f"/v1/monitors/{tagged['id']}", headers=h)).json()
    assert got["in_maintenance_until"] == until
    got = (await frozen_api.get(f"/v1/monitors/{other['id']}", headers=h)).json()
    assert got["in_maintenance_until"] is None
    got = (await frozen_api.get(f"/v1/jobs/{job['id']}", headers=h)).json()
    assert got["in_maintenance_until"] == until
    bad = await frozen_api.post("/v1/maintenance", headers=h, json={
        "from": now.isoformat(), "to": (now + timedelta(hours=1)).isoformat(),
        "tags": ["has space"]})
    assert bad.status_code in (400, 422), bad.text  # the tag rule of core/tags.py
