"""The history routes over HTTP (docs/ledger.md): what-if replay, ``?as_of=`` and
``/history``, their errors as problem+json, and that a replay writes nothing."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from litestar.testing import AsyncTestClient

from core.clock import FrozenClock, rfc3339
from core.db import ConnectionPool
from tests.teams import Team

PROBLEM = "application/problem+json"


async def _event_count(pool: ConnectionPool, team: Team) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM events WHERE team_id = %s",
                                 (team.actor.team_id,))
        return (await cur.fetchone())["n"]


async def _monitor(api: AsyncTestClient, team: Team, **over: Any) -> dict[str, Any]:
    r = await api.post("/v1/monitors", json={"name": "backup", "schedule": "1h",
                                             "grace_seconds": 600, **over},
                       headers=team.auth)
    assert r.status_code == 201, r.text
    return r.json()


async def test_monitor_replay_of_a_failure_and_a_proposal_that_misses_it(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock, pool: ConnectionPool,
) -> None:
    t0 = clock.now()
    monitor = await _monitor(frozen_api, team)
    url = f"/ping/{monitor['ping_token']}"
    for minutes, suffix in ((1, ""), (20, "/fail"), (30, "")):
        clock.set(t0 + timedelta(minutes=minutes))
        assert (await frozen_api.get(url + suffix)).status_code == 200
    clock.set(t0 + timedelta(minutes=40))
    window = {"from": rfc3339(t0), "to": rfc3339(clock.now())}
    before = await _event_count(pool, team)

    r = await frozen_api.post(f"/v1/monitors/{monitor['id']}/simulate",
                              json={"changes": {}, **window}, headers=team.auth)
    assert r.status_code == 200, r.text
    same = r.json()
    assert same["simulated"] == same["actual"]
    assert [(t["event_type"], t["reason"]) for t in same["actual"]["transitions"]] == [
        ("monitor.up", "ping"), ("monitor.down", "fail"), ("monitor.up", "ping")]
    assert [a["event"] for a in same["actual"]["alerts"]] == ["down", "up"]
    assert same["from"] == window["from"] and same["changes"] == {}

    r = await frozen_api.post(f"/v1/monitors/{monitor['id']}/simulate",
                              json={"changes": {"methods": "POST"}, **window},
                              headers=team.read_auth)
    assert r.status_code == 403  # a POST route: a read key may not, like every write route
    r = await frozen_api.post(f"/v1/monitors/{monitor['id']}/simulate",
                              json={"changes": {"methods": "POST"}, **window},
                              headers=team.auth)
    assert r.status_code == 200, r.text
    post_only = r.json()
    assert post_only["changes"] == {"methods": "post"}
    assert post_only["simulated"]["transitions"] == []  # every GET ping ignored
    assert post_only["summary"] == {"would_alert": 0, "did_alert": 1,
                                    "false_alarms_avoided": 0, "outages_missed": 1}
    assert await _event_count(pool, team) == before  # nothing written


async def test_replay_input_errors(frozen_api: AsyncTestClient, team: Team,
                                   clock: FrozenClock, pool: ConnectionPool) -> None:
    monitor = await _monitor(frozen_api, team)
    path = f"/v1/monitors/{monitor['id']}/simulate"
    now = clock.now()
    before = await _event_count(pool, team)
    cases = [
        ({"changes": {"name": "x"}}, "changes.name"),
        ({"changes": {"timezone": "Mars/Olympus"}}, "changes.timezone"),
        ({"changes": {"schedule": "every tuesday-ish"}}, "changes.schedule"),
        ({"from": "yesterday"}, "from"),
        ({"from": rfc3339(now - timedelta(days=40))}, "from"),
        ({"to": rfc3339(now + timedelta(hours=1))}, "to"),
        ({"from": rfc3339(now), "to": rfc3339(now - timedelta(hours=1))}, "from"),
    ]
    for body, field in cases:
        r = await frozen_api.post(path, json=body, headers=team.auth)
        assert r.status_code == 422, (body, r.text)
        assert r.headers["content-type"].startswith(PROBLEM)
        assert field in [e["field"] for e in r.json()["errors"]], (body, r.json())
    r = await frozen_api.post(f"/v1/monitors/{uuid.uuid4()}/simulate", json={},
                              headers=team.auth)
    assert r.status_code == 404
    r = await frozen_api.post(f"/v1/jobs/{uuid.uuid4()}/simulate", json={},
                              headers=team.auth)
    assert r.status_code == 404
    r = await frozen_api.post(f"/v1/jobs/{uuid.uuid4()}/simulate",
                              json={"changes": {"alert_after_failures": 0}}, headers=team.auth)
    assert r.status_code == 422
    assert await _event_count(pool, team) == before


async def test_a_job_replay_answers_with_the_default_window(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
) -> None:
    r = await frozen_api.post("/v1/jobs", json={
        "name": "nightly", "schedule": "0 3 * * *",
        "request": {"url": "https://example.com/hook"}}, headers=team.auth)
    assert r.status_code == 201, r.text
    job = r.json()
    clock.advance(3600)
    r = await frozen_api.post(f"/v1/jobs/{job['id']}/simulate",
                              json={"changes": {"alert_after_failures": 3,
                                                "realert_every": "1h"}},
                              headers=team.auth)
    assert r.status_code == 200, r.text
    answer = r.json()
    assert answer["changes"] == {"alert_after_failures": 3, "realert_every": 3600}
    assert answer["to"] == rfc3339(clock.now())
    assert answer["from"] == rfc3339(clock.now() - timedelta(days=30))
    assert answer["outcomes"] == {"succeeded": 0, "failed": 0, "would_skip": 0}
    assert answer["summary"]["would_alert"] == answer["summary"]["did_alert"] == 0


async def test_as_of_folds_the_stream_404_before_and_410_after(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
) -> None:
    t0 = clock.now()
    clock.advance(60)
    monitor = await _monitor(frozen_api, team)
    clock.advance(60)
    r = await frozen_api.patch(f"/v1/monitors/{monitor['id']}", json={"grace_seconds": 120},
                               headers=team.auth)
    assert r.status_code == 200
    clock.advance(60)
    assert (await frozen_api.delete(f"/v1/monitors/{monitor['id']}",
                                    headers=team.auth)).status_code == 204
    path = f"/v1/monitors/{monitor['id']}"

    r = await frozen_api.get(path, params={"as_of": rfc3339(t0)}, headers=team.read_auth)
    assert r.status_code == 404 and r.headers["content-type"].startswith(PROBLEM)
    r = await frozen_api.get(path, params={"as_of": rfc3339(t0 + timedelta(seconds=90))},
                             headers=team.read_auth)
    assert r.status_code == 200, r.text
    then = r.json()
    assert then["grace_seconds"] == 600 and then["version"] == 1 and then["status"] == "new"
    assert {k: v for k, v in then.items() if not k.startswith("ping_")} == {
        k: v for k, v in monitor.items() if not k.startswith("ping_")}
    r = await frozen_api.get(path, params={"as_of": rfc3339(t0 + timedelta(seconds=150))},
                             headers=team.read_auth)
    assert r.json()["grace_seconds"] == 120 and r.json()["version"] == 2
    r = await frozen_api.get(path, params={"as_of": rfc3339(clock.now())},
                             headers=team.read_auth)
    assert r.status_code == 410 and r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["deleted_at"] == rfc3339(clock.now())
    for bad in ("last tuesday", "2026-11-30T12:00:00"):
        r = await frozen_api.get(path, params={"as_of": bad}, headers=team.read_auth)
        assert r.status_code == 422 and r.json()["errors"][0]["field"] == "as_of"
    other = await frozen_api.get(path, params={"as_of": rfc3339(clock.now())},
                                 headers={"Authorization": "Bearer nope"})
    assert other.status_code == 401


async def test_job_as_of_and_history_with_field_diffs_and_pages(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
) -> None:
    t0 = clock.now()
    r = await frozen_api.post("/v1/jobs", json={
        "name": "report", "schedule": "0 * * * *",
        "request": {"url": "https://example.com/r"}}, headers=team.auth)
    job = r.json()
    clock.advance(60)
    assert (await frozen_api.patch(f"/v1/jobs/{job['id']}",
                                   json={"schedule": "30 * * * *", "alert_after_failures": 2},
                                   headers=team.auth)).status_code == 200
    clock.advance(60)
    assert (await frozen_api.post(f"/v1/jobs/{job['id']}/pause",
                                  headers=team.auth)).status_code == 200

    r = await frozen_api.get(f"/v1/jobs/{job['id']}", params={"as_of": rfc3339(t0)},
                             headers=team.read_auth)
    assert r.status_code == 200, r.text
    then = r.json()
    assert then["schedule"] == "0 * * * *" and then["status"] == "active"
    assert then["next_run_at"] == job["next_run_at"]
    assert then == job
    r = await frozen_api.get(f"/v1/jobs/{job['id']}", params={"as_of": rfc3339(clock.now())},
                             headers=team.read_auth)
    assert r.json()["status"] == "paused" and r.json()["next_run_at"] is None
    clock.advance(60)
    assert (await frozen_api.post(f"/v1/jobs/{job['id']}/resume",
                                  headers=team.auth)).status_code == 200
    r = await frozen_api.get(f"/v1/jobs/{job['id']}", params={"as_of": "9999-12-31T23:59:59Z"},
                             headers=team.read_auth)
    assert r.status_code == 200  # beyond the schedule engine's range: no next run, no 500
    assert r.json()["status"] == "active" and r.json()["next_run_at"] is None

    r = await frozen_api.get(f"/v1/jobs/{job['id']}/history", params={"limit": 2},
                             headers=team.read_auth)
    assert r.status_code == 200, r.text
    page = r.json()
    created, updated = page["items"]
    actor = f"api_key:{team.actor.key_id}"
    assert created["event_type"] == "job.created" and created["actor"] == actor
    assert {"field": "schedule", "before": None, "after": "0 * * * *"} in created["changes"]
    assert updated["changes"] == [
        {"field": "schedule", "before": "0 * * * *", "after": "30 * * * *"},
        {"field": "alert_after_failures", "before": 1, "after": 2}]
    assert updated["occurred_at"] == rfc3339(t0 + timedelta(seconds=60))
    r = await frozen_api.get(f"/v1/jobs/{job['id']}/history",
                             params={"limit": 2, "cursor": page["next_cursor"]},
                             headers=team.read_auth)
    rest = r.json()
    assert [(e["event_type"], e["changes"]) for e in rest["items"]] == [
        ("job.paused", [{"field": "status", "before": "active", "after": "paused"}]),
        ("job.resumed", [{"field": "status", "before": "paused", "after": "active"}])]
    assert rest["next_cursor"] is not None  # a full page: there may be more
    r = await frozen_api.get(f"/v1/jobs/{job['id']}/history",
                             params={"limit": 2, "cursor": rest["next_cursor"]},
                             headers=team.read_auth)
    assert r.json() == {"items": [], "next_cursor": None}
    r = await frozen_api.get(f"/v1/jobs/{job['id']}/history", params={"cursor": "x"},
                             headers=team.read_auth)
    assert r.status_code == 422
    r = await frozen_api.get(f"/v1/monitors/{job['id']}/history", headers=team.read_auth)
    assert r.status_code == 404  # a job's id is no monitor


async def test_monitor_history_leaves_pings_out(
    frozen_api: AsyncTestClient, team: Team, clock: FrozenClock,
) -> None:
    monitor = await _monitor(frozen_api, team)
    assert (await frozen_api.get(f"/ping/{monitor['ping_token']}")).status_code == 200
    clock.advance(10)
    await frozen_api.patch(f"/v1/monitors/{monitor['id']}", json={"methods": "post"},
                           headers=team.auth)
    r = await frozen_api.get(f"/v1/monitors/{monitor['id']}/history", headers=team.auth)
    items = r.json()["items"]
    assert [e["event_type"] for e in items] == ["monitor.created", "monitor.updated"]
    assert items[1]["changes"] == [{"field": "methods", "before": "any", "after": "post"}]
    assert items[1]["version"] == 4  # after the ping and its flip to up
