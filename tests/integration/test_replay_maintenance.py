"""Maintenance windows in the what-if replay (docs/ledger.md, *What-if replay*): the replay of
the current definition over a period with recorded windows reproduces the alerts the live
path held and released; proposed windows (``changes.maintenance``) hold alerts and release one
at the close over HTTP; invalid windows are 422 on their field and nothing is written.

Real PostgreSQL, the real ping path, checker, release service and worker on a frozen clock.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar.testing import AsyncTestClient

from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock, rfc3339
from core.db import ConnectionPool
from core.maintenance.commands import create_window
from core.maintenance.release import MaintenanceRelease
from core.monitors.checker import Checker
from core.monitors.ping import PingPool
from core.replay.jobs import simulate_job
from core.replay.monitors import simulate_monitor
from core.runs.worker import Worker
from tests.helpers import add_job, new_actor
from tests.monitor_helpers import add_monitor, advance, ping
from tests.sink import Reply, Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
PROBLEM = "application/problem+json"
MARK = {"suppressed": "suppressed", "pending": "released"}  # outbox status -> replay mark


async def _outbox(pool: ConnectionPool, subject: uuid.UUID) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT event, status, created_at FROM notifications "
                                 "WHERE subject_id = %s ORDER BY created_at, id", (subject,))
        return await cur.fetchall()


async def _event_count(pool: ConnectionPool, team_id: uuid.UUID) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM events WHERE team_id = %s",
                                 (team_id,))
        return (await cur.fetchone())["n"]


async def test_replaying_the_current_definition_reproduces_held_and_released_alerts(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer, clock: FrozenClock,
) -> None:
    actor = await new_actor(fresh_pool)
    slack, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/services/T0/B0/replay")}, T0)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "10m", name="backup",
                                       grace_seconds=60, channels=[str(slack)])
    await create_window(fresh_pool, actor, {"from": T0, "to": T0 + timedelta(hours=1),
                                            "monitors": [monitor]}, T0)
    assert await ping(ping_pool, token, T0) == "up"
    await advance(checker, fresh_pool, T0 + timedelta(minutes=12))  # down, held
    release = MaintenanceRelease(fresh_pool, None, clock)
    assert await release.run_once(T0 + timedelta(hours=1)) == 1  # the one released
    end = T0 + timedelta(hours=2)
    await advance(checker, fresh_pool, end)
    queued = await _outbox(fresh_pool, monitor)
    assert [(r["event"], r["status"]) for r in queued] == [("down", "suppressed"),
                                                           ("down", "pending")]

    answer = await simulate_monitor(fresh_pool, actor, monitor, {}, T0, end, end)
    assert answer["simulated"] == answer["actual"]
    assert [(a["at"], a["event"], a["maintenance"]) for a in answer["actual"]["alerts"]] == [
        (r["created_at"], r["event"], MARK[r["status"]]) for r in queued]
    assert answer["summary"] == {"would_alert": 1, "did_alert": 1,
                                 "false_alarms_avoided": 0, "outages_missed": 0}
    # ignoring the recorded window: the down alert goes out when it happened
    bare = await simulate_monitor(fresh_pool, actor, monitor,
                                  {"recorded_maintenance": "ignore"}, T0, end, end)
    assert [(a["at"], a["maintenance"]) for a in bare["simulated"]["alerts"]] == [
        (queued[0]["created_at"], None)]
    assert bare["actual"] == answer["actual"]  # what happened does not change


async def test_a_recorded_window_holding_job_alerts_is_reproduced_and_a_runs_window_skips(
    fresh_pool: ConnectionPool, worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    hook, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "hook", "kind": "webhook", "url": sink.url("/receiver")}, T0)
    path = f"/job/{uuid.uuid4().hex}"
    sink.reply(path, *(Reply(status=s) for s in (500, 200, 500, 200)))
    job = await add_job(fresh_pool, actor, T0, sink.url(path), "0 * * * *",
                        channels=[str(hook)])
    await create_window(fresh_pool, actor, {
        "from": T0, "to": T0 + timedelta(hours=2, minutes=30), "jobs": [job]}, T0)
    for hour in range(1, 5):
        clock.set(T0 + timedelta(hours=hour))
        await worker.run_once()
        await worker.settle()
    end = T0 + timedelta(hours=4, minutes=1)
    queued = await _outbox(fresh_pool, job)
    assert [(r["event"], r["status"]) for r in queued] == [
        ("failed", "suppressed"), ("recovered", "suppressed"), ("failed", "pending"),
        ("recovered", "pending")]

    answer = await simulate_job(fresh_pool, actor, job, {}, T0, end, end)
    assert answer["simulated"] == answer["actual"]
    assert [a["maintenance"] for a in answer["actual"]["alerts"]] == [
        "suppressed", "suppressed", None, None]
    assert answer["summary"]["would_alert"] == answer["summary"]["did_alert"] == 1
    # a proposed runs window over the third slot: its failure is skipped, nothing alerts
    skip = await simulate_job(fresh_pool, actor, job, {"maintenance": [
        {"from": T0 + timedelta(hours=2, minutes=50), "to": T0 + timedelta(hours=3, minutes=10),
         "suppress": "runs"}], "recorded_maintenance": "keep"}, T0, end, end)
    assert skip["outcomes"] == {"succeeded": 2, "failed": 2, "would_skip": 1}
    assert [(a["event"], a["maintenance"]) for a in skip["simulated"]["alerts"]] == [
        ("failed", "suppressed"), ("recovered", "suppressed")]
    assert skip["summary"] == {"would_alert": 0, "did_alert": 1, "false_alarms_avoided": 1,
                               "outages_missed": 0}


async def test_proposed_windows_over_http(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
    pool: ConnectionPool,
) -> None:
    t0 = clock.now()
    r = await frozen_api.post("/v1/monitors", json={"name": "backup", "schedule": "1h",
                                                    "grace_seconds": 600}, headers=team.auth)
    assert r.status_code == 201, r.text
    monitor = r.json()
    url = f"/ping/{monitor['ping_token']}"
    for minutes, suffix in ((1, ""), (20, "/fail")):  # down at 0:20, never back
        clock.set(t0 + timedelta(minutes=minutes))
        assert (await frozen_api.get(url + suffix)).status_code == 200
    clock.set(t0 + timedelta(minutes=50))
    path = f"/v1/monitors/{monitor['id']}/simulate"
    period = {"from": rfc3339(t0), "to": rfc3339(clock.now())}
    before = await _event_count(pool, team.actor.team_id)

    def window(a: int, b: int, **more: Any) -> dict[str, Any]:
        return {"from": rfc3339(t0 + timedelta(minutes=a)),
                "to": rfc3339(t0 + timedelta(minutes=b)), **more}

    r = await frozen_api.post(path, json={"changes": {"maintenance": [window(10, 30)]},
                                          **period}, headers=team.auth)
    assert r.status_code == 200, r.text
    held = r.json()
    assert [(a["at"], a["event"], a["maintenance"]) for a in held["simulated"]["alerts"]] == [
        (rfc3339(t0 + timedelta(minutes=20)), "down", "suppressed"),
        (rfc3339(t0 + timedelta(minutes=30)), "down", "released")]
    assert held["actual"]["alerts"][0]["maintenance"] is None
    assert held["summary"] == {"would_alert": 1, "did_alert": 1, "false_alarms_avoided": 0,
                               "outages_missed": 0}
    assert held["changes"]["maintenance"][0]["suppress"] == "alerts"
    # a window still open at the period's end: held, nothing released, the outage missed
    r = await frozen_api.post(path, json={"changes": {"maintenance": [window(10, 120)]},
                                          **period}, headers=team.auth)
    assert r.status_code == 200, r.text
    assert [a["maintenance"] for a in r.json()["simulated"]["alerts"]] == ["suppressed"]
    assert r.json()["summary"]["would_alert"] == 0
    assert r.json()["summary"]["outages_missed"] == 1

    for changes, field in [
        ({"maintenance": [window(30, 10)]}, "changes.maintenance.0.to"),
        ({"maintenance": [window(10, 30), {"schedule": "0 3 * * *"}]},
         "changes.maintenance.1.duration_seconds"),
        ({"maintenance": [window(10, 30, suppress="everything")]},
         "changes.maintenance.0.suppress"),
        ({"maintenance": [window(10, 30, monitors=[monitor["id"]])]},
         "changes.maintenance.0.monitors"),  # the subject is implicit
        ({"recorded_maintenance": "merge"}, "changes.recorded_maintenance"),
    ]:
        r = await frozen_api.post(path, json={"changes": changes, **period},
                                  headers=team.auth)
        assert r.status_code == 422, (changes, r.text)
        assert r.headers["content-type"].startswith(PROBLEM)
        assert [e["field"] for e in r.json()["errors"]] == [field], (changes, r.json())
    assert await _event_count(pool, team.actor.team_id) == before  # nothing written
