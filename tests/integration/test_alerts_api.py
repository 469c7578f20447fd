"""Alerts as records (docs/notifications.md, *Alerts and why*): every alert raised for a job or
monitor with channels has an id, ``GET /v1/alerts`` lists them newest first (of one monitor or
job), ``GET /v1/alerts/{id}/explain`` says why from the log. Real PostgreSQL, the real ping
statement and checker, a frozen clock; the API over HTTP.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from litestar.testing import AsyncTestClient

from core.alerts.explain import explain_alert
from core.alerts.queries import list_alerts
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.db import ConnectionPool
from core.monitors.checker import Checker
from core.monitors.ping import PingPool
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor, advance, ping
from tests.sink import Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
SLACK = {"kind": "slack", "url": "https://hooks.slack.com/services/T0/B0/x"}


async def test_alerts_listed_newest_first_and_explained(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
) -> None:
    auth = team.auth
    r = await frozen_api.post("/v1/channels", headers=auth, json={"name": "ops", **SLACK})
    assert r.status_code == 201, r.text
    r = await frozen_api.post("/v1/monitors", headers=auth, json={
        "name": "backup", "schedule": "1h", "timezone": "Europe/Paris", "grace_seconds": 60,
        "channels": [r.json()["id"]]})
    monitor = r.json()
    url = f"/ping/{monitor['ping_token']}"
    t0 = clock.now()
    for minutes, suffix in ((1, ""), (2, "/fail"), (3, ""), (4, "/3")):
        clock.set(t0 + timedelta(minutes=minutes))
        assert (await frozen_api.get(url + suffix)).status_code == 200

    r = await frozen_api.get("/v1/alerts", headers=auth, params={"limit": 2})
    assert r.status_code == 200, r.text
    page = r.json()
    assert [(a["event"], a["rule"]["reason"]) for a in page["items"]] == [
        ("down", "fail"), ("up", "ping")]  # newest first
    assert page["items"][0]["created_at"] > page["items"][1]["created_at"]
    assert page["next_cursor"]
    r = await frozen_api.get("/v1/alerts", headers=auth, params={"cursor": page["next_cursor"]})
    assert [a["event"] for a in r.json()["items"]] == ["down"]
    newest = page["items"][0]
    assert newest["notifications"] == 1 and newest["subject_id"] == monitor["id"]
    r = await frozen_api.get("/v1/alerts", headers=auth, params={"monitor": monitor["id"]})
    assert len(r.json()["items"]) == 3
    r = await frozen_api.get("/v1/alerts", headers=auth, params={"job": monitor["id"]})
    assert r.json()["items"] == []
    r = await frozen_api.get("/v1/alerts", headers=auth,
                             params={"monitor": monitor["id"], "job": str(uuid.uuid4())})
    assert len(r.json()["items"]) == 3  # the alerts of either
    r = await frozen_api.get("/v1/alerts", headers=auth, params={"monitor": "nope"})
    assert r.status_code in (400, 422) and "monitor" in r.text

    # the notification links to the explanation, which says why from the log
    r = await frozen_api.get("/v1/notifications", headers=auth, params={"limit": 1})
    [row] = r.json()["items"]
    assert row["message"]["links"]["explain"] == f"/v1/alerts/{newest['id']}/explain"
    r = await frozen_api.get(f"/v1/alerts/{newest['id']}/explain", headers=auth)
    assert r.status_code == 200, r.text
    why = r.json()
    assert why["alert"]["id"] == newest["id"]
    assert why["rule"]["name"] == "monitor.down" and why["rule"]["reason"] == "fail"
    assert why["rule"]["text"] == "It reported a failure (exit status 3)."
    assert why["definition"]["timezone"] == "Europe/Paris"
    assert why["definition"]["grace_seconds"] == 60
    assert why["expected"] is None  # a failed ping is about no slot
    pinged = [e for e in why["around"] if e["kind"] == "monitor.pinged"]
    assert [(e["data"]["kind"], e["data"]["exit_status"]) for e in pinged][-2:] == [
        ("success", None), ("fail", 3)]
    assert why["around"][-1]["kind"] == "monitor.down"
    assert why["maintenance"] == {"held": False, "until": None}
    assert why["dependencies"] == {"considered": [], "held_by": None,
                                   "released_from": None}

    r = await frozen_api.get(f"/v1/alerts/{uuid.uuid4()}/explain", headers=auth)
    assert r.status_code == 404
    r = await frozen_api.get(f"/v1/alerts/{newest['id']}", headers=auth)
    assert r.status_code == 200 and r.json() == newest


async def test_an_overdue_alert_names_its_slot_in_the_monitors_zone(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    slack, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/hook")}, T0)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "0 3 * * *",
                                       timezone="America/New_York", grace_seconds=900,
                                       channels=[str(slack)])
    first = datetime(2026, 11, 30, 8, 0, 5, tzinfo=UTC)  # 03:00:05 in New York
    await ping(ping_pool, token, first)
    await advance(checker, fresh_pool, first + timedelta(days=1, minutes=20))
    [alert] = await list_alerts(fresh_pool, actor, limit=10, before=None, monitor=monitor)
    assert alert["event"] == "down" and alert["rule"]["reason"] == "overdue"
    why = await explain_alert(fresh_pool, actor, alert["id"])
    assert why["expected"] == {
        "slot": datetime(2026, 12, 1, 8, 0, tzinfo=UTC), "local": "2026-12-01T03:00:00-05:00",
        "timezone": "America/New_York", "grace_seconds": 900,
        "deadline": datetime(2026, 12, 1, 8, 15, tzinfo=UTC)}
    assert why["rule"]["text"].startswith("No ping arrived in time: expected at "
                                          "2026-12-01T08:00:00Z")
    # another team sees nothing of it
    stranger = await new_actor(fresh_pool)
    assert await list_alerts(fresh_pool, stranger, limit=10, before=None) == []
