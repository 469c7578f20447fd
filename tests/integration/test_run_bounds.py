"""Run-time bounds of monitors (docs/heartbeats.md, *Run-time bounds*): a success sooner than
``min_duration`` after its ``/start`` is a failure, a run still going at ``start +
max_duration`` is down while it runs, and a late start and a long run are told apart in the
alert. Real PostgreSQL, the real ping statement and checker, a frozen clock; the API, ``apply``
and ``simulate`` over HTTP.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from litestar.testing import AsyncTestClient

from core.actor import Actor
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock, rfc3339
from core.db import ConnectionPool
from core.monitors.checker import Checker
from core.monitors.ping import PingPool
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor, advance, monitor_row, ping, stream
from tests.sink import Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


async def _outbox(pool: ConnectionPool) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM notifications ORDER BY created_at, id")
        return await cur.fetchall()


async def _setup(pool: ConnectionPool, sealer: AesGcmSealer, sink: Sink,
                 **fields: Any) -> tuple[Actor, uuid.UUID, str]:
    actor = await new_actor(pool)
    slack, _ = await create_channel(pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/hook")}, T0)
    monitor, token = await add_monitor(pool, actor, T0, "1h", name="backup",
                                       grace_seconds=300, channels=[str(slack)], **fields)
    return actor, monitor, token


def _downs(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["event_type"] == "monitor.down"]


async def test_a_success_sooner_than_min_duration_is_a_failure_that_says_so(
    fresh_pool: ConnectionPool, ping_pool: PingPool, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    _, monitor, token = await _setup(fresh_pool, sealer, sink, min_duration="2m")
    assert (await monitor_row(fresh_pool, monitor))["min_duration"] == 120
    # a run of 3 minutes is fine
    assert await ping(ping_pool, token, T0, "start") == "new"
    assert await ping(ping_pool, token, T0 + timedelta(minutes=3)) == "up"
    # the backup that piped an empty dump: finished 4 s after its start
    start = T0 + timedelta(hours=1)
    assert await ping(ping_pool, token, start, "start") == "up"
    assert await ping(ping_pool, token, start + timedelta(seconds=4, milliseconds=500)) == "down"
    events = await stream(fresh_pool, monitor)
    assert events[-2]["event_type"] == "monitor.pinged"
    assert events[-2]["data"]["kind"] == "success"  # the ping as sent, with its duration
    assert events[-2]["data"]["duration_ms"] == 4500
    assert _downs(events) == [{"previous_status": "up", "reason": "too_short",
                               "duration_ms": 4500, "min_duration": 120}]
    [alert] = await _outbox(fresh_pool)
    assert alert["event"] == "down"
    assert alert["message"]["text"] == \
        "The run finished in 4 s, expected at least 2 min (min_duration)."
    assert {"name": "Reason", "value": "run too short"} in alert["message"]["facts"]
    # a success without a start has no duration: not judged; it brings the monitor back up
    assert await ping(ping_pool, token, start + timedelta(minutes=1)) == "up"
    # nor is a success whose rid pairs with no start
    await ping(ping_pool, token, start + timedelta(minutes=2), "start", rid=uuid.UUID(int=1))
    assert await ping(ping_pool, token, start + timedelta(minutes=2, seconds=1),
                      rid=uuid.UUID(int=2)) == "up"


async def test_a_run_past_max_duration_is_down_while_it_runs_not_at_its_late_end(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    _, monitor, token = await _setup(fresh_pool, sealer, sink, max_duration="2h")
    assert await ping(ping_pool, token, T0) == "up"  # next expected 13:00, down at 13:05
    start = T0 + timedelta(hours=1)  # started on time
    assert await ping(ping_pool, token, start, "start") == "up"
    # the schedule's deadline passes while the run goes on: the start was on time
    await advance(checker, fresh_pool, start + timedelta(minutes=30))
    row = await monitor_row(fresh_pool, monitor)
    assert row["status"] == "up" and row["alert_at"] == start + timedelta(hours=2)
    await advance(checker, fresh_pool, start + timedelta(hours=2) - timedelta(microseconds=1))
    assert (await monitor_row(fresh_pool, monitor))["status"] == "up"
    await advance(checker, fresh_pool, start + timedelta(hours=2))
    assert (await monitor_row(fresh_pool, monitor))["status"] == "down"
    [down] = _downs(await stream(fresh_pool, monitor))
    assert down == {"previous_status": "up", "reason": "too_long",
                    "started_at": rfc3339(start), "deadline": rfc3339(start + timedelta(hours=2)),
                    "max_duration": 7200}
    [alert] = await _outbox(fresh_pool)
    assert alert["message"]["text"] == (
        "The run started at 2026-11-30T13:00:00Z is still going after 2 h, expected at most "
        "2 h (max_duration).")
    assert {"name": "Reason", "value": "run too long"} in alert["message"]["facts"]


async def test_a_late_start_is_overdue_and_told_apart_from_a_long_run(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    _, monitor, token = await _setup(fresh_pool, sealer, sink, max_duration="2h")
    assert await ping(ping_pool, token, T0) == "up"
    # no start by 13:00 + 5 min of grace: the start is late
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=5))
    [down] = _downs(await stream(fresh_pool, monitor))
    assert down["reason"] == "overdue"
    [alert] = await _outbox(fresh_pool)
    assert alert["message"]["text"] == (
        "No ping arrived in time: expected at 2026-11-30T13:00:00Z, down at "
        "2026-11-30T13:05:00Z after the grace period.")
    assert {"name": "Reason", "value": "late start: no ping in time"} in \
        alert["message"]["facts"]
    # without max_duration a start still answers to the grace (healthchecks' rule)
    _, other, token2 = await _setup(fresh_pool, sealer, sink)
    await ping(ping_pool, token2, T0, "start")
    await advance(checker, fresh_pool, T0 + timedelta(minutes=5))
    assert _downs(await stream(fresh_pool, other))[0]["reason"] == "start_timeout"


async def test_bounds_through_the_api_apply_and_simulate(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
) -> None:
    auth = team.auth
    r = await frozen_api.post("/v1/monitors", headers=auth, json={
        "name": "dump", "schedule": "1h", "min_duration": "2m", "max_duration": 3600})
    assert r.status_code == 201, r.text
    monitor = r.json()
    assert (monitor["min_duration"], monitor["max_duration"]) == (120, 3600)
    r = await frozen_api.patch(f"/v1/monitors/{monitor['id']}", headers=auth,
                               json={"min_duration": "2h"})
    assert r.status_code == 422
    assert "min_duration" in r.text and "less than max_duration" in r.text
    r = await frozen_api.patch(f"/v1/monitors/{monitor['id']}", headers=auth,
                               json={"max_duration": "soon"})
    assert r.status_code == 400 or r.status_code == 422
    assert "max_duration" in r.text
    r = await frozen_api.patch(f"/v1/monitors/{monitor['id']}", headers=auth,
                               json={"min_duration": None})
    assert r.status_code == 200 and r.json()["min_duration"] is None
    r = await frozen_api.get(f"/v1/monitors/{monitor['id']}/events", headers=auth)
    updates = [e["data"]["changes"] for e in r.json()["items"]
               if e["event_type"] == "monitor.updated"]
    assert updates == [{"min_duration": None}]  # every rule change is an event

    # pings: a 4-second run, recorded as it happened (no min_duration now)
    t0 = clock.now()
    url = f"/ping/{monitor['ping_token']}"
    for seconds, suffix in ((60, "/start"), (64, "")):
        clock.set(t0 + timedelta(seconds=seconds))
        assert (await frozen_api.get(url + suffix)).status_code == 200
    clock.set(t0 + timedelta(minutes=10))
    window = {"from": rfc3339(t0), "to": rfc3339(clock.now())}
    r = await frozen_api.post(f"/v1/monitors/{monitor['id']}/simulate", headers=auth,
                              json={"changes": {"min_duration": "2m"}, **window})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["changes"] == {"min_duration": 120}
    assert [(t["event_type"], t["reason"]) for t in answer["simulated"]["transitions"]] == [
        ("monitor.down", "too_short")]
    assert [(t["event_type"], t["reason"]) for t in answer["actual"]["transitions"]] == [
        ("monitor.up", "ping")]
    assert answer["summary"]["would_alert"] == 1 and answer["summary"]["did_alert"] == 0

    # apply files carry the same keys, and export gives them back
    document = {"monitors": [{"name": "nightly", "schedule": "1d", "min_duration": "30s",
                              "max_duration": "6h"}]}
    r = await frozen_api.post("/v1/apply", headers=auth, json={**document, "digest": "ab" * 32})
    assert r.status_code == 200, r.text
    r = await frozen_api.get("/v1/export", headers=auth)
    assert r.status_code == 200, r.text
    [nightly] = [m for m in r.json()["monitors"] if m["name"] == "nightly"]
    assert (nightly["min_duration"], nightly["max_duration"]) == (30, 21600)


async def test_a_prune_snapshot_copied_before_the_bounds_existed_rebuilds(
    fresh_pool: ConnectionPool,
) -> None:
    from core.projections import monitor_rows

    actor = await new_actor(fresh_pool)
    monitor, _ = await add_monitor(fresh_pool, actor, T0, min_duration=60)
    row = await monitor_row(fresh_pool, monitor)
    new = ("min_duration", "max_duration", "start_keywords", "success_keywords",
           "failure_keywords")
    old = {k: v for k, v in row.items() if k not in new}  # a copy made before migration 0022
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT pg_current_snapshot()::text AS s")
        snapshot = (await cur.fetchone())["s"]
        assert await monitor_rows.rebuild(conn, T0, None, {monitor: old}, snapshot) == 1
    rebuilt = await monitor_row(fresh_pool, monitor)
    assert rebuilt["min_duration"] is None and rebuilt["success_keywords"] == []
    assert rebuilt["version"] == row["version"]
