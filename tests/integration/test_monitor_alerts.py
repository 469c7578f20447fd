"""Monitors notify through the outbox: down (checker or /fail), up after down, still_down every
``realert_every`` while down; the alert commits with the event that causes it.

Real PostgreSQL, a real local Slack endpoint (tests/sink.py), a frozen clock.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.actor import Actor
from core.apikeys import create_api_key
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.monitors import commands
from core.monitors.checker import Checker
from core.monitors.ping import PingPool
from core.notifications.notifier import Notifier
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor, advance, monitor_row, ping
from tests.notifying import DictSecrets, make_notifier
from tests.sink import Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
HOOK = "/services/T0/B0/monitors"


@pytest.fixture
async def notifier(fresh_pool: ConnectionPool, settings: Settings, clock: FrozenClock,
                   sealer: AesGcmSealer) -> AsyncIterator[Notifier]:
    n = make_notifier(fresh_pool, replace(settings, public_url="https://cron.example.com"),
                      clock, sealer, DictSecrets())
    yield n
    await n.delivery.client.aclose()


async def outbox(pool: ConnectionPool) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM notifications ORDER BY created_at, id")
        return await cur.fetchall()


async def tx_ids(pool: ConnectionPool, monitor_id: uuid.UUID) -> dict[str, list[Any]]:
    """tx_id of the monitor's status events and of the notification.queued events."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT event_type, tx_id FROM events WHERE (stream_id = %s AND event_type IN "
            "('monitor.down', 'monitor.up')) OR event_type = 'notification.queued' "
            "ORDER BY global_position", (monitor_id,))
        out: dict[str, list[Any]] = {}
        for row in await cur.fetchall():
            out.setdefault(row["event_type"], []).append(row["tx_id"])
        return out


async def _setup(pool: ConnectionPool, sealer: AesGcmSealer, sink: Sink,
                 **fields: Any) -> tuple[Actor, uuid.UUID, str]:
    actor = await new_actor(pool)
    slack, _ = await create_channel(pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url(HOOK)}, T0)
    monitor, token = await add_monitor(pool, actor, T0, "10m", name="nightly-backup",
                                       grace_seconds=60, channels=[str(slack)], **fields)
    return actor, monitor, token


async def test_down_then_up_alerts_commit_with_their_events_and_reach_slack(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    notifier: Notifier, clock: FrozenClock, sink: Sink, sealer: AesGcmSealer,
) -> None:
    _, monitor, token = await _setup(fresh_pool, sealer, sink)
    assert await ping(ping_pool, token, T0) == "up"
    assert await outbox(fresh_pool) == []  # an ordinary ping says nothing
    down_at = T0 + timedelta(minutes=11, seconds=1)
    await advance(checker, fresh_pool, down_at)
    assert (await monitor_row(fresh_pool, monitor))["status"] == "down"
    [row] = await outbox(fresh_pool)
    assert (row["subject_type"], row["subject_id"], row["event"]) == ("monitor", monitor, "down")
    tx = await tx_ids(fresh_pool, monitor)
    assert tx["monitor.down"] == tx["notification.queued"]  # one transaction

    clock.set(down_at)
    assert await notifier.run_once() == 1
    [hit] = sink.hits_for(HOOK)
    payload = json.loads(hit.body)
    assert "nightly-backup" in payload["text"]
    header = payload["blocks"][0]
    assert header["text"]["text"] == "Monitor \u201cnightly-backup\u201d is down"
    assert "2026-11-30T12:11:00Z" in json.dumps(payload)  # down since the deadline

    # Further checker runs and pings while down: no more "down".
    await advance(checker, fresh_pool, down_at + timedelta(hours=1))
    assert len(await outbox(fresh_pool)) == 1
    up_at = down_at + timedelta(hours=1)
    assert await ping(ping_pool, token, up_at, body=b"back again") == "up"
    rows = await outbox(fresh_pool)
    assert [r["event"] for r in rows] == ["down", "up"]
    assert rows[1]["message"]["since"] == rows[0]["message"]["since"]
    assert rows[1]["message"]["last_ping"]["body"] == "back again"
    tx = await tx_ids(fresh_pool, monitor)
    assert tx["monitor.up"][-1:] == tx["notification.queued"][1:]  # [0]: new -> up
    clock.set(up_at)
    assert await notifier.run_once() == 1
    assert json.loads(sink.hits_for(HOOK)[1].body)["blocks"][0]["text"]["text"] == \
        "Monitor \u201cnightly-backup\u201d is up"
    # Up again and pinging: silence.
    assert await ping(ping_pool, token, up_at + timedelta(minutes=5)) == "up"
    assert len(await outbox(fresh_pool)) == 2


async def test_a_fail_ping_alerts_down_in_the_ping_transaction(
    fresh_pool: ConnectionPool, ping_pool: PingPool, sink: Sink,
    sealer: AesGcmSealer,
) -> None:
    _, monitor, token = await _setup(fresh_pool, sealer, sink)
    await ping(ping_pool, token, T0)
    assert await ping(ping_pool, token, T0 + timedelta(minutes=1), "fail",
                      exit_status=3) == "down"
    assert await ping(ping_pool, token, T0 + timedelta(minutes=2), "fail") == "down"
    [row] = await outbox(fresh_pool)
    assert row["event"] == "down" and row["message"]["last_ping"]["exit_status"] == 3
    tx = await tx_ids(fresh_pool, monitor)
    assert tx["monitor.down"] == tx["notification.queued"]


async def test_realert_every_while_down_and_not_after_pause(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    actor, monitor, token = await _setup(fresh_pool, sealer, sink, realert_every="1h")
    await ping(ping_pool, token, T0)
    down_at = T0 + timedelta(minutes=11)
    await advance(checker, fresh_pool, down_at)
    assert [r["event"] for r in await outbox(fresh_pool)] == ["down"]
    await checker.run_once(down_at + timedelta(minutes=59, seconds=59))
    assert [r["event"] for r in await outbox(fresh_pool)] == ["down"]  # not before
    await checker.run_once(down_at + timedelta(hours=1))
    await checker.run_once(down_at + timedelta(hours=1, minutes=30))
    rows = await outbox(fresh_pool)
    assert [r["event"] for r in rows] == ["down", "still_down"]
    assert rows[1]["message"]["since"] == rows[0]["message"]["since"]
    await checker.run_once(down_at + timedelta(hours=2))
    assert [r["event"] for r in await outbox(fresh_pool)] == ["down", "still_down",
                                                               "still_down"]
    # PATCH of realert_every moves the pending re-alert: last alert (2h) + 3h.
    await commands.update_monitor(fresh_pool, actor, monitor, {"realert_every": 3 * 3600},
                                  down_at + timedelta(hours=2, minutes=1))
    await checker.run_once(down_at + timedelta(hours=4, minutes=59))
    assert len(await outbox(fresh_pool)) == 3
    await checker.run_once(down_at + timedelta(hours=5))
    assert len(await outbox(fresh_pool)) == 4
    # Paused while down: no more re-alerts, ever.
    await commands.set_paused(fresh_pool, actor, monitor, True, down_at + timedelta(hours=6))
    await checker.run_once(down_at + timedelta(days=3))
    assert len(await outbox(fresh_pool)) == 4
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM alert_states")
        assert (await cur.fetchone())["n"] == 0


async def test_twenty_concurrent_pings_to_a_down_monitor_alert_up_once(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    _, monitor, token = await _setup(fresh_pool, sealer, sink)
    await ping(ping_pool, token, T0)
    down_at = T0 + timedelta(minutes=11)
    await advance(checker, fresh_pool, down_at)
    statuses = await asyncio.gather(*[
        ping(ping_pool, token, down_at + timedelta(minutes=1, milliseconds=i))
        for i in range(20)])
    assert statuses == ["up"] * 20
    assert [r["event"] for r in await outbox(fresh_pool)] == ["down", "up"]
    tx = await tx_ids(fresh_pool, monitor)
    # new -> up (first ping), then down -> up exactly once
    assert len(tx["monitor.up"]) == 2 and tx["monitor.up"][1] == tx["notification.queued"][1]


async def test_foreign_or_unknown_channels_are_422_and_change_nothing(
    api: AsyncTestClient, team: Team, pool: ConnectionPool,
) -> None:
    other_key, _ = await create_api_key(pool, f"other-{uuid.uuid4().hex[:8]}", "write")
    slack = {"kind": "slack", "url": "https://hooks.slack.com/services/T0/B0/x"}
    r = await api.post("/v1/channels", json={"name": "theirs", **slack},
                       headers={"Authorization": f"Bearer {other_key}"})
    assert r.status_code == 201, r.text
    foreign = r.json()["id"]
    r = await api.post("/v1/channels", json={"name": "mine", **slack}, headers=team.auth)
    mine = r.json()["id"]
    body = {"name": "m", "schedule": "1h"}
    for channels in ([foreign], [mine, str(uuid.uuid4())]):
        r = await api.post("/v1/monitors", json={**body, "channels": channels},
                           headers=team.auth)
        assert r.status_code == 422, r.text
    r = await api.get("/v1/monitors", headers=team.auth)
    assert r.json()["items"] == []
    r = await api.post("/v1/monitors", json={**body, "channels": [mine],
                                             "realert_every": "2h"}, headers=team.auth)
    assert r.status_code == 201, r.text
    created = r.json()
    assert created["channels"] == [mine] and created["realert_every"] == 7200
    url = f"/v1/monitors/{created['id']}"
    r = await api.patch(url, json={"channels": [mine, foreign]}, headers=team.auth)
    assert r.status_code == 422 and "channels.1" in r.text
    r = await api.patch(url, json={"realert_every": 5}, headers=team.auth)
    assert r.status_code == 422
    after = (await api.get(url, headers=team.auth)).json()
    assert after == created  # the ping URL too: it is kept, readable again
    r = await api.patch(url, json={"channels": [], "realert_every": None}, headers=team.auth)
    assert r.status_code == 200
    assert (r.json()["channels"], r.json()["realert_every"]) == ([], None)
