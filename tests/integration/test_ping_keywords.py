"""Keywords in HTTP ping bodies (docs/heartbeats.md, *Keywords in ping bodies*): healthchecks'
``filter_http_body`` rules over the real ping route and statement, alerts through the outbox,
``apply``, ``simulate`` over the stored bodies; a frozen clock, real PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from litestar.testing import AsyncTestClient

from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock, rfc3339
from core.db import ConnectionPool
from core.monitors.ping import PingPool
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor, monitor_row, ping, stream
from tests.sink import Sink
from tests.teams import Team


async def test_a_failure_keyword_in_the_body_is_a_fail_that_alerts(
    fresh_pool: ConnectionPool, ping_pool: PingPool, sink: Sink,
    sealer: AesGcmSealer, clock: FrozenClock,
) -> None:
    t0 = clock.now()
    actor = await new_actor(fresh_pool)
    slack, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/hook")}, t0)
    monitor, token = await add_monitor(fresh_pool, actor, t0, "1h", channels=[str(slack)],
                                       success_keywords=["backup done"],
                                       failure_keywords=["ERROR", "Traceback"])
    assert (await monitor_row(fresh_pool, monitor))["failure_keywords"] == ["ERROR", "Traceback"]
    assert await ping(ping_pool, token, t0, method="POST", body=b"backup done in 3 min",
                      body_size=20) == "up"
    # a success URL whose body says ERROR: down, in the ping's transaction, and said so
    assert await ping(ping_pool, token, t0 + timedelta(hours=1), method="POST",
                      body=b"pg_dump: ERROR: disk full", body_size=25) == "down"
    events = await stream(fresh_pool, monitor)
    assert events[-2]["data"]["kind"] == "fail" and events[-2]["data"]["requested"] == "success"
    assert events[-1]["event_type"] == "monitor.down"
    assert events[-1]["data"]["reason"] == "failure_keyword"
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT message FROM notifications")
        [row] = await cur.fetchall()
    assert row["message"]["text"] == \
        "Its ping's body contained one of the monitor's failure keywords."
    # case-sensitive: "error" is no keyword; nothing matches, so the ping is ignored
    assert await ping(ping_pool, token, t0 + timedelta(hours=2), method="POST",
                      body=b"no error", body_size=8) == "down"
    assert (await stream(fresh_pool, monitor))[-1]["data"]["kind"] == "ignored"


async def test_keywords_over_http_apply_and_simulate(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
) -> None:
    auth = team.auth
    r = await frozen_api.post("/v1/monitors", headers=auth, json={
        "name": "kw", "schedule": "1h", "success_keywords": ["OK"]})
    assert r.status_code == 201, r.text
    monitor = r.json()
    assert monitor["success_keywords"] == ["OK"] and monitor["failure_keywords"] == []
    for bad in ([""], ["a,b"], [" OK"], "OK"):
        r = await frozen_api.patch(f"/v1/monitors/{monitor['id']}", headers=auth,
                                   json={"failure_keywords": bad})
        assert r.status_code in (400, 422), bad
        assert "failure_keywords" in r.text
    url = f"/ping/{monitor['ping_token']}"
    t0 = clock.now()
    sent = [(1, "post", "all OK"), (2, "get", None), (3, "post", "FAILED: OK"),
            (4, "post", "FAILED")]
    for minutes, method, body in sent:
        clock.set(t0 + timedelta(minutes=minutes))
        r = await (frozen_api.post(url, content=body) if method == "post"
                   else frozen_api.get(url))
        assert r.status_code == 200 and r.text == "OK"
    r = await frozen_api.get(f"/v1/monitors/{monitor['id']}/pings", headers=auth)
    assert [p["kind"] for p in r.json()["items"]] == ["ignored", "success", "ignored", "success"]
    clock.set(t0 + timedelta(minutes=10))
    window = {"from": rfc3339(t0), "to": rfc3339(clock.now())}
    # had FAILED been a failure keyword: down at 00:03, that would have paged
    r = await frozen_api.post(f"/v1/monitors/{monitor['id']}/simulate", headers=auth, json={
        "changes": {"failure_keywords": ["FAILED"]}, **window})
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["changes"] == {"failure_keywords": ["FAILED"]}
    assert [(t["event_type"], t["reason"]) for t in answer["simulated"]["transitions"]] == [
        ("monitor.up", "ping"), ("monitor.down", "failure_keyword")]
    assert answer["summary"]["would_alert"] == 1 and answer["summary"]["did_alert"] == 0
    # no keywords at all: every ping as its URL said, the GET included
    r = await frozen_api.post(f"/v1/monitors/{monitor['id']}/simulate", headers=auth, json={
        "changes": {"success_keywords": []}, **window})
    assert [(t["event_type"]) for t in r.json()["simulated"]["transitions"]] == ["monitor.up"]

    document = {"monitors": [{"name": "nightly-kw", "schedule": "1d",
                              "failure_keywords": ["ERROR"], "start_keywords": ["begin"]}],
                "digest": "ab" * 32}
    r = await frozen_api.post("/v1/apply", headers=auth, json=document)
    assert r.status_code == 200, r.text
    r = await frozen_api.get("/v1/export", headers=auth)
    [nightly] = [m for m in r.json()["monitors"] if m["name"] == "nightly-kw"]
    assert nightly["failure_keywords"] == ["ERROR"] and nightly["start_keywords"] == ["begin"]
    assert "success_keywords" not in nightly  # defaults are left out
    r = await frozen_api.post("/v1/apply", headers=auth, json=document)
    changes = {(c["kind"], c["name"]): c["action"] for c in r.json()["changes"]}
    assert changes[("monitor", "nightly-kw")] == "unchanged"


async def test_healthchecks_v3_kw_fields_are_the_keyword_lists(
    api: AsyncTestClient, team: Team,
) -> None:
    key = {"X-Api-Key": team.write, "Content-Type": "application/json"}
    r = await api.post("/api/v3/checks/", headers=key, json={
        "name": "kw-v3", "timeout": 3600, "filter_http_body": True,
        "success_kw": "SUCCESS, all good", "failure_kw": "FAIL", "start_kw": ""})
    assert r.status_code == 201, r.text
    check = r.json()
    assert (check["success_kw"], check["failure_kw"], check["start_kw"]) == \
        ("SUCCESS,all good", "FAIL", "")
    assert check["filter_http_body"] is True and check["filter_default_fail"] is False
    r = await api.get(f"/v1/monitors/{check['uuid']}", headers=team.auth)
    assert r.json()["success_keywords"] == ["SUCCESS", "all good"]
    r = await api.post(f"/api/v3/checks/{check['uuid']}", headers=key,
                       json={"filter_default_fail": True})
    assert r.status_code == 400 and "filter_default_fail" in r.json()["error"]
    r = await api.post(f"/api/v3/checks/{check['uuid']}", headers=key,
                       json={"filter_http_body": False})
    assert r.status_code == 200, r.text
    assert r.json()["filter_http_body"] is False and r.json()["success_kw"] == ""
