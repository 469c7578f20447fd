"""``GET /v1/dashboard``, ``/v1/jobs/{id}/stats``, ``/v1/monitors/{id}/uptime`` on the shared
database, isolated by team."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.clock import FrozenClock
from core.db import ConnectionPool, transaction
from core.events import append_events
from core.projections import histogram
from tests.helpers import MonitorStream, project_all
from tests.integration.test_projector import outcome_events
from tests.teams import Team

NOW = datetime(2026, 11, 30, 12, 30, tzinfo=UTC)
JOB = {"name": "report me", "schedule": "0 * * * *", "request": {"url": "http://127.0.0.1:9/x"}}


@pytest.fixture
def clock() -> FrozenClock:
    """The API's clock in this module: the read models' default ranges end at NOW."""
    return FrozenClock(NOW)


@pytest.fixture
async def api(frozen_api: AsyncTestClient) -> AsyncTestClient:
    return frozen_api


def _iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


async def _job(api: AsyncTestClient, team: Team, **fields: Any) -> uuid.UUID:
    r = await api.post("/v1/jobs", json={**JOB, **fields}, headers=team.auth)
    assert r.status_code == 201, r.text
    return uuid.UUID(r.json()["id"])


async def _outcomes(pool: ConnectionPool, team: Team, job: uuid.UUID,
                    slot: datetime, *outcomes: tuple[str, int, int]) -> None:
    async with transaction(pool) as conn:
        await append_events(conn, outcome_events(team.actor.team_id, job, slot,
                                                 list(outcomes)))


async def test_dashboard_summarises_only_the_team(
    api: AsyncTestClient, pool: ConnectionPool, team: Team
) -> None:
    now = NOW
    broken = await _job(api, team, name="broken")
    healthy = await _job(api, team, name="healthy")
    paused = await _job(api, team, name="paused", paused=True)
    await _outcomes(pool, team, broken, now, ("run.succeeded", 5, 1), ("run.failed", 5, 1))
    await _outcomes(pool, team, healthy, now, ("run.failed", 5, 1), ("run.succeeded", 5, 1),
                    ("run.missed", 0, 0))
    await _outcomes(pool, team, paused, now - timedelta(days=2), ("run.failed", 5, 1))
    up, down = MonitorStream(team.actor.team_id), MonitorStream(team.actor.team_id)
    await up.append(pool, now, ("monitor.created", {"name": "up"}), ("monitor.up", {}))
    await down.append(pool, now, ("monitor.created", {"name": "down"}), ("monitor.down", {}))
    await project_all(pool)

    r = await api.get("/v1/dashboard", headers=team.read_auth)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["jobs"] == {"active": 2, "paused": 1, "completed": 0, "failing": 2}
    assert body["monitors"] == {"new": 0, "up": 1, "late": 0, "down": 1, "paused": 0}
    assert body["runs_24h"] == {"succeeded": 2, "failed": 2, "skipped": 0, "missed": 1,
                                "total": 5}
    assert {j["name"] for j in body["failing_jobs"]} == {"broken", "paused"}
    assert [m["name"] for m in body["down_monitors"]] == ["down"]
    assert body["projection"]["global_position"] > 0

    other = await api.get("/v1/dashboard", headers={"Authorization": "Bearer clk_nope"})
    assert other.status_code == 401


async def test_dashboard_of_a_new_team_is_empty(api: AsyncTestClient,
                                                team: Team) -> None:
    r = await api.get("/v1/dashboard", headers=team.auth)
    assert r.status_code == 200
    body = r.json()
    assert body["failing_jobs"] == [] and body["down_monitors"] == []
    assert body["runs_24h"]["total"] == 0 and sum(body["jobs"].values()) == 0


async def test_job_stats_per_hour_and_day(
    api: AsyncTestClient, pool: ConnectionPool, team: Team
) -> None:
    job = await _job(api, team)
    hour = NOW.replace(minute=0)
    await _outcomes(pool, team, job, hour - timedelta(hours=2, minutes=-5),
                    ("run.succeeded", 100, 10), ("run.succeeded", 200, 20),
                    ("run.failed", 300, 30))
    await _outcomes(pool, team, job, hour + timedelta(minutes=1), ("run.skipped", 0, 0))
    await project_all(pool)

    r = await api.get(f"/v1/jobs/{job}/stats", headers=team.read_auth, params={
        "from": _iso(hour - timedelta(hours=2, minutes=-30)), "to": _iso(hour + timedelta(hours=1)),
        "bucket": "hour"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["bucket"] == "hour" and body["from"] == _iso(hour - timedelta(hours=2))
    assert [i["bucket_start"] for i in body["items"]] == [
        _iso(hour - timedelta(hours=h)) for h in (2, 1, 0)]
    first, empty, last = body["items"]
    assert (first["runs"], first["succeeded"], first["failed"], first["success_rate"]) == (
        3, 2, 1, 0.6667)
    assert first["duration_ms"] == {"p50": round(1.1 ** (histogram.bucket_of(200) - 0.5)),
                                    "p95": round(1.1 ** (histogram.bucket_of(300) - 0.5))}
    assert empty["runs"] == 0 and empty["duration_ms"] == {"p50": None, "p95": None}
    assert (last["skipped"], last["success_rate"]) == (1, None)
    assert body["totals"]["runs"] == 4

    r = await api.get(f"/v1/jobs/{job}/stats", headers=team.auth, params={"bucket": "day"})
    assert r.status_code == 200, r.text
    days = r.json()["items"]
    assert len(days) == 31 and sum(d["runs"] for d in days) == 4  # 30 days back from NOW


async def test_job_stats_rejects_bad_input(api: AsyncTestClient, team: Team) -> None:
    job = await _job(api, team)
    url = f"/v1/jobs/{job}/stats"
    for params, field in (
        ({"bucket": "week"}, "bucket"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-11-30T00:00:00"}, "to"),  # no offset
        ({"from": "2026-11-30T00:00:00Z", "to": "2026-11-29T00:00:00Z"}, "from"),
        ({"from": "2020-01-01T00:00:00Z", "to": "2026-01-01T00:00:00Z", "bucket": "hour"}, "from"),
    ):
        r = await api.get(url, headers=team.auth, params=params)
        assert r.status_code == 422, (params, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")
        assert any(e["field"] == field for e in r.json()["errors"]), r.json()
    assert (await api.get(f"/v1/jobs/{uuid.uuid4()}/stats", headers=team.auth)).status_code \
        == 404
    assert (await api.get(url)).status_code == 401


async def test_job_stats_are_team_scoped(api: AsyncTestClient, pool: ConnectionPool,
                                         team: Team) -> None:
    job = await _job(api, team)
    from core.apikeys import create_api_key

    stranger, _ = await create_api_key(pool, f"team-{uuid.uuid4().hex[:10]}")
    r = await api.get(f"/v1/jobs/{job}/stats", headers={"Authorization": f"Bearer {stranger}"})
    assert r.status_code == 404


async def test_monitor_uptime(api: AsyncTestClient, pool: ConnectionPool,
                              team: Team) -> None:
    now = NOW
    m = MonitorStream(team.actor.team_id)
    await m.append(pool, now - timedelta(hours=10), ("monitor.created", {"name": "cron"}))
    await m.append(pool, now - timedelta(hours=4), ("monitor.down", {}))
    await m.append(pool, now - timedelta(hours=3), ("monitor.up", {}))
    await m.append(pool, now - timedelta(hours=1), ("monitor.down", {}))
    await project_all(pool)

    r = await api.get(f"/v1/monitors/{m.id}/uptime", headers=team.read_auth, params={
        "from": _iso(now - timedelta(hours=12)), "to": _iso(now - timedelta(hours=2))})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["monitored_seconds"] == 8 * 3600  # created 10 hours ago
    assert body["downtime_seconds"] == 3600
    assert body["uptime_percent"] == 87.5
    assert [(p["end_reason"], p["duration_seconds"]) for p in body["downtime_periods"]] == [
        ("up", 3600.0)]
    assert body["status"] == "down"

    r = await api.get(f"/v1/monitors/{m.id}/uptime", headers=team.auth)  # last 30 days
    body = r.json()
    assert r.status_code == 200 and len(body["downtime_periods"]) == 2
    assert body["downtime_periods"][1]["ended_at"] is None
    assert body["uptime_percent"] == 80  # 2 of the 10 hours since creation down

    for params in ({"from": "nonsense"}, {"from": _iso(now), "to": _iso(now - timedelta(1))}):
        r = await api.get(f"/v1/monitors/{m.id}/uptime", headers=team.auth, params=params)
        assert r.status_code == 422, r.text
    # An empty range is a question with an empty answer (while the monitor is down).
    r = await api.get(f"/v1/monitors/{m.id}/uptime", headers=team.auth,
                      params={"from": _iso(now), "to": _iso(now)})
    assert r.status_code == 200, r.text
    assert (r.json()["uptime_percent"], r.json()["downtime_periods"]) == (None, [])
    from core.apikeys import create_api_key

    stranger, _ = await create_api_key(pool, f"team-{uuid.uuid4().hex[:10]}")
    r = await api.get(f"/v1/monitors/{m.id}/uptime",
                      headers={"Authorization": f"Bearer {stranger}"})
    assert r.status_code == 404
    r = await api.get(f"/v1/monitors/{uuid.uuid4()}/uptime", headers=team.auth)
    assert r.status_code == 404


async def test_reports_are_in_the_openapi_schema(api: AsyncTestClient) -> None:
    r = await api.get("/schema/openapi.json")
    assert r.status_code == 200
    paths = r.json()["paths"]
    assert {"/v1/dashboard", "/v1/jobs/{job_id}/stats", "/v1/monitors/{monitor_id}/uptime"} <= set(
        paths)
    assert {p["name"] for p in paths["/v1/jobs/{job_id}/stats"]["get"]["parameters"]} >= {
        "from", "to", "bucket"}
