"""Failure tolerance of monitors (docs/notifications.md, *Failure tolerance*): the down alert
after ``alert_after_failures`` failed pings or missed slots in a row, the up alert after
``recover_after_successes`` good pings in a row, the rule jobs share. Real PostgreSQL, the real
ping statement and checker, a frozen clock; the API, ``apply``, export and ``simulate`` over
HTTP.
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
from tests.monitor_helpers import add_monitor, advance, monitor_row, ping
from tests.sink import Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)


async def _outbox(pool: ConnectionPool) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM notifications ORDER BY created_at, id")
        return await cur.fetchall()


async def _alert_states(pool: ConnectionPool) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM alert_states")
        return await cur.fetchall()


async def _setup(pool: ConnectionPool, sealer: AesGcmSealer, sink: Sink,
                 **fields: Any) -> tuple[Actor, uuid.UUID, str]:
    actor = await new_actor(pool)
    slack, _ = await create_channel(pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/hook")}, T0)
    monitor, token = await add_monitor(pool, actor, T0, "1h", name="sync", grace_seconds=300,
                                       channels=[str(slack)], **fields)
    return actor, monitor, token


async def test_three_failures_or_missed_slots_in_a_row_then_two_good_pings(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    """The example of docs/notifications.md, *Failure tolerance*."""
    _, monitor, token = await _setup(fresh_pool, sealer, sink, alert_after_failures=3,
                                     recover_after_successes=2)
    assert await ping(ping_pool, token, T0) == "up"
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=5))  # 11:05
    assert (await monitor_row(fresh_pool, monitor))["status"] == "down"  # status at once
    assert await _outbox(fresh_pool) == []  # failure 1: no message
    assert await ping(ping_pool, token, T0 + timedelta(hours=1, minutes=30), "fail") == "down"
    assert await _outbox(fresh_pool) == []  # failure 2
    await advance(checker, fresh_pool, T0 + timedelta(hours=2, minutes=34, seconds=59))
    assert await _outbox(fresh_pool) == []  # the next slot (12:30 + grace) not missed yet
    await advance(checker, fresh_pool, T0 + timedelta(hours=2, minutes=35))
    [down] = await _outbox(fresh_pool)
    assert down["event"] == "down"
    text = down["message"]["text"]
    assert "expected at 2026-11-30T12:30:00Z" in text and "down at 2026-11-30T12:35:00Z" in text
    assert "3 failures in a row (alert_after_failures)" in text
    assert down["message"]["since"] == "2026-11-30T11:05:00Z"  # the first of the three
    await advance(checker, fresh_pool, T0 + timedelta(hours=3))
    assert len(await _outbox(fresh_pool)) == 1  # counted no further once said
    assert await ping(ping_pool, token, T0 + timedelta(hours=3, minutes=10)) == "up"
    assert len(await _outbox(fresh_pool)) == 1  # one good ping of two
    assert await ping(ping_pool, token, T0 + timedelta(hours=4, minutes=10)) == "up"
    rows = await _outbox(fresh_pool)
    assert [r["event"] for r in rows] == ["down", "up"]
    assert rows[1]["message"]["since"] == "2026-11-30T11:05:00Z"
    assert await _alert_states(fresh_pool) == []


async def test_failures_short_of_the_threshold_end_silently(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    _, monitor, token = await _setup(fresh_pool, sealer, sink, alert_after_failures=2)
    await ping(ping_pool, token, T0)
    assert await ping(ping_pool, token, T0 + timedelta(minutes=10), "fail") == "down"
    assert [s["consecutive_failures"] for s in await _alert_states(fresh_pool)] == [1]
    assert await ping(ping_pool, token, T0 + timedelta(minutes=20)) == "up"
    await advance(checker, fresh_pool, T0 + timedelta(minutes=50))
    assert await _outbox(fresh_pool) == [] and await _alert_states(fresh_pool) == []
    # two in a row do alert: a fail, then the next slot missed (fail + 1 h + grace)
    assert await ping(ping_pool, token, T0 + timedelta(hours=1), "fail") == "down"
    await advance(checker, fresh_pool, T0 + timedelta(hours=2, minutes=4, seconds=59))
    assert await _outbox(fresh_pool) == []
    await advance(checker, fresh_pool, T0 + timedelta(hours=2, minutes=5))
    assert [(r["event"], r["message"]["facts"][1]["value"])
            for r in await _outbox(fresh_pool)] == [("down", "missed slot: no ping in time")]


async def test_a_failure_while_recovering_restarts_the_count_and_says_nothing_new(
    fresh_pool: ConnectionPool, ping_pool: PingPool, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    _, _, token = await _setup(fresh_pool, sealer, sink, recover_after_successes=2)
    await ping(ping_pool, token, T0)
    minute = timedelta(minutes=1)
    for n, kind in enumerate(("fail", "success", "fail", "success", "success"), start=1):
        await ping(ping_pool, token, T0 + n * minute, kind)
    assert [r["event"] for r in await _outbox(fresh_pool)] == ["down", "up"]
    assert (await _outbox(fresh_pool))[1]["created_at"] == T0 + 5 * minute


async def test_the_defaults_alert_as_before(
    fresh_pool: ConnectionPool, ping_pool: PingPool, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    _, _, token = await _setup(fresh_pool, sealer, sink)
    await ping(ping_pool, token, T0)
    for n, kind in enumerate(("fail", "fail", "success", "success", "fail"), start=1):
        await ping(ping_pool, token, T0 + timedelta(minutes=n), kind)
    assert [r["event"] for r in await _outbox(fresh_pool)] == ["down", "up", "down"]


async def test_tolerance_through_the_api_apply_export_and_simulate(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
) -> None:
    auth = team.auth
    r = await frozen_api.post("/v1/monitors", headers=auth, json={
        "name": "flaky", "schedule": "1h", "grace_seconds": 60})
    assert r.status_code == 201, r.text
    monitor = r.json()
    assert (monitor["alert_after_failures"], monitor["recover_after_successes"]) == (1, 1)
    for bad in ({"alert_after_failures": 0}, {"recover_after_successes": 1001},
                {"alert_after_failures": "3"}):
        r = await frozen_api.patch(f"/v1/monitors/{monitor['id']}", headers=auth, json=bad)
        assert r.status_code in (400, 422), r.text
        assert next(iter(bad)) in r.text
    r = await frozen_api.patch(f"/v1/monitors/{monitor['id']}", headers=auth,
                               json={"alert_after_failures": 2})
    assert r.status_code == 200 and r.json()["alert_after_failures"] == 2
    r = await frozen_api.get(f"/v1/monitors/{monitor['id']}/events", headers=auth)
    assert [e["data"]["changes"] for e in r.json()["items"]
            if e["event_type"] == "monitor.updated"] == [{"alert_after_failures": 2}]

    # one failed ping between good ones: with 2 in a row needed, no alert happened
    t0 = clock.now()
    url = f"/ping/{monitor['ping_token']}"
    for minutes, suffix in ((1, ""), (2, "/fail"), (3, "")):
        clock.set(t0 + timedelta(minutes=minutes))
        assert (await frozen_api.get(url + suffix)).status_code == 200
    clock.set(t0 + timedelta(minutes=10))
    window = {"from": rfc3339(t0), "to": rfc3339(clock.now())}
    r = await frozen_api.post(f"/v1/monitors/{monitor['id']}/simulate", headers=auth,
                              json={"changes": {"alert_after_failures": 1}, **window})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert [a["event"] for a in answer["simulated"]["alerts"]] == ["down", "up"]
    assert answer["actual"]["alerts"] == []
    assert answer["summary"]["would_alert"] == 1 and answer["summary"]["did_alert"] == 0
    r = await frozen_api.post(f"/v1/monitors/{monitor['id']}/simulate", headers=auth,
                              json={"changes": {"recover_after_successes": 0}, **window})
    assert r.status_code in (400, 422) and "recover_after_successes" in r.text

    document = {"monitors": [{"name": "nightly", "schedule": "1d", "alert_after_failures": 3,
                              "recover_after_successes": 2}]}
    r = await frozen_api.post("/v1/apply", headers=auth, json={**document, "digest": "ab" * 32})
    assert r.status_code == 200, r.text
    r = await frozen_api.get("/v1/export", headers=auth)
    [nightly] = [m for m in r.json()["monitors"] if m["name"] == "nightly"]
    assert (nightly["alert_after_failures"], nightly["recover_after_successes"]) == (3, 2)
