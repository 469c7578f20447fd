"""The jobs API: CRUD, pause/resume, events, errors as problem+json, auth and team scoping."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.db import ConnectionPool
from core.events import read_stream
from core.jobs.state import fold
from tests.teams import Team

JOB = {
    "name": "nightly report",
    "schedule": "0 3 * * *",
    "timezone": "Europe/Paris",
    "request": {"method": "POST", "url": "http://127.0.0.1:9/report",
                "headers": {"Content-Type": "application/json"}, "body": "{}"},
}


async def _create(api: AsyncTestClient, team: Team, **over: Any) -> dict[str, Any]:
    r = await api.post("/v1/jobs", json={**JOB, **over}, headers=team.auth)
    assert r.status_code == 201, r.text
    return r.json()


async def _counts(pool: ConnectionPool, team: Team) -> tuple[int, int]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT (SELECT count(*) FROM jobs WHERE team_id = %(t)s) AS jobs, "
            "(SELECT count(*) FROM events WHERE team_id = %(t)s) AS events",
            {"t": team.actor.team_id})
        row = await cur.fetchone()
    return row["jobs"], row["events"]


async def test_create_read_list(api: AsyncTestClient, team: Team) -> None:
    job = await _create(api, team)
    assert job["status"] == "active"
    assert job["version"] == 1
    assert job["request"]["method"] == "POST"
    assert job["timeout_seconds"] == 30
    assert job["retry"]["attempts"] == 1
    assert job["overlap"] == "skip" and job["catchup"] == "latest"
    assert job["next_run_at"].endswith("Z")
    assert "03:00" in job["schedule_description"] or "3:00" in job["schedule_description"]
    r = await api.get(f"/v1/jobs/{job['id']}", headers=team.read_auth)
    assert r.status_code == 200 and r.json()["id"] == job["id"]
    r = await api.get("/v1/jobs", headers=team.auth)
    assert [j["id"] for j in r.json()["items"]] == [job["id"]]


async def test_keyset_pagination(api: AsyncTestClient, team: Team) -> None:
    ids = [(await _create(api, team, name=f"job {i}"))["id"] for i in range(5)]
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await api.get("/v1/jobs", params=params, headers=team.auth)).json()
        seen += [j["id"] for j in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids


async def test_patch_pause_resume_delete_and_events(
    api: AsyncTestClient, team: Team, pool: ConnectionPool
) -> None:
    job = await _create(api, team)
    url = f"/v1/jobs/{job['id']}"
    r = await api.patch(url, json={"name": "renamed", "request": {"url": "http://127.0.0.1:9/x"}},
                        headers=team.auth)
    assert r.status_code == 200, r.text
    assert r.json()["name"] == "renamed" and r.json()["version"] == 2
    assert r.json()["request"]["method"] == "POST"  # merged, not replaced
    assert r.json()["next_run_at"] == job["next_run_at"]  # pending slot kept
    stale = await api.patch(url, json={"name": "again", "version": 1}, headers=team.auth)
    assert stale.status_code == 409
    assert stale.headers["content-type"].startswith("application/problem+json")
    paused = (await api.post(f"{url}/pause", headers=team.auth)).json()
    assert paused["status"] == "paused" and paused["next_run_at"] is None
    resumed = (await api.post(f"{url}/resume", headers=team.auth)).json()
    assert resumed["status"] == "active" and resumed["next_run_at"] is not None
    assert (await api.delete(url, headers=team.auth)).status_code == 204
    assert (await api.get(url, headers=team.auth)).status_code == 404
    events = (await api.get(f"{url}/events", headers=team.auth)).json()["items"]
    assert [e["event_type"] for e in events] == [
        "job.created", "job.updated", "job.paused", "job.resumed", "job.deleted"]
    assert events[1]["data"]["changes"]["name"] == "renamed"
    assert events[0]["metadata"]["actor"].startswith("api_key:")
    # Replaying the stream gives the projection row.
    async with pool.connection() as conn:
        stream = await read_stream(conn, "job", uuid.UUID(job["id"]), team.actor.team_id)
        cur = await conn.execute("SELECT * FROM jobs WHERE id = %s", (job["id"],))
        row = await cur.fetchone()
    assert fold(stream).as_row() == row


async def test_schedule_change_recomputes_next_run(
    api: AsyncTestClient, team: Team
) -> None:
    job = await _create(api, team)
    r = await api.patch(f"/v1/jobs/{job['id']}", json={"schedule": "*/5 * * * *",
                                                        "timezone": "UTC"}, headers=team.auth)
    assert r.status_code == 200
    assert r.json()["next_run_at"] != job["next_run_at"]
    assert r.json()["next_run_at"][14:16] in {f"{m:02d}" for m in range(0, 60, 5)}


BAD_BODIES = [
    ({**JOB, "schedule": "61 * * * *"}, 422, "schedule"),
    ({**JOB, "schedule": "not a cron"}, 422, "schedule"),
    ({**JOB, "schedule": "0 0 30 2 *"}, 422, "schedule"),
    ({**JOB, "timezone": "Mars/Olympus"}, 422, "timezone"),
    ({**JOB, "request": {"url": "ftp://example.com/x"}}, 422, "request.url"),
    ({**JOB, "request": {"url": "not a url"}}, 422, "request.url"),
    ({**JOB, "request": {"url": "http://h/x", "method": "FETCH"}}, 422, "request.method"),
    ({**JOB, "request": {"url": "http://h/x", "headers": {"Bad Name": "v"}}}, 422,
     "request.headers.Bad Name"),
    ({**JOB, "request": {"url": "http://h/" + "a" * 3000}}, 422, "request.url"),
    ({**JOB, "request": {"url": "http://h/x", "body": "x" * 300_000}}, 422, "request.body"),
    ({**JOB, "timeout_seconds": 0}, 422, "timeout_seconds"),
    ({**JOB, "timeout_seconds": 901}, 422, "timeout_seconds"),
    ({**JOB, "timeout_seconds": "soon"}, 422, "timeout_seconds"),
    ({**JOB, "retry": {"attempts": 11}}, 422, "retry.attempts"),
    ({**JOB, "overlap": "sometimes"}, 422, "overlap"),
    ({**JOB, "name": 42}, 422, "name"),
    ({**JOB, "name": ""}, 422, "name"),
    ({**JOB, "surprise": True}, 422, "surprise"),
    ({k: v for k, v in JOB.items() if k != "schedule"}, 422, "schedule"),
    ([1, 2, 3], 422, None),
    ({**JOB, "name": "a\x00b"}, 422, "name"),
    ({**JOB, "request": {"url": "http://h/x", "body": "\x00"}}, 422, "request.body"),
    ({**JOB, "retry": {"attempts": 2**70}}, 422, "retry.attempts"),
    ({**JOB, "request": {"url": "https://user:pw@example.com/"}}, 422, "request.url"),
    ({**JOB, "timezone": "right/UTC"}, 422, "timezone"),
    # Bracketed hosts that urllib or yarl (the parser requests are sent with) cannot parse.
    ({**JOB, "request": {"url": "http://[::1/"}}, 422, "request.url"),
    ({**JOB, "request": {"url": "http://[foo]/"}}, 422, "request.url"),
    ({**JOB, "request": {"url": "http://a]/"}}, 422, "request.url"),
    ({**JOB, "request": {"url": "http://[::1]]/"}}, 422, "request.url"),
    ({**JOB, "request": {"url": "http://example.com:99999/"}}, 422, "request.url"),
]


@pytest.mark.parametrize(("body", "status", "field"), BAD_BODIES)
async def test_bad_input_is_rejected_and_changes_nothing(
    api: AsyncTestClient, team: Team, pool: ConnectionPool,
    body: Any, status: int, field: str | None,
) -> None:
    before = await _counts(pool, team)
    r = await api.post("/v1/jobs", json=body, headers=team.auth)
    assert r.status_code == status, r.text
    problem = r.json()
    assert r.headers["content-type"].startswith("application/problem+json")
    assert problem["status"] == status and problem["detail"]
    if field:
        assert field in [e["field"] for e in problem.get("errors", [])], problem
    assert await _counts(pool, team) == before


@pytest.mark.parametrize(("content", "detail"), [
    (b"{not json", "JSON"),
    (b"[" * 5000, "nested too deeply"),
    (b"", "body is required"),
])
async def test_unreadable_bodies_are_400(
    api: AsyncTestClient, team: Team, pool: ConnectionPool, content: bytes,
    detail: str,
) -> None:
    before = await _counts(pool, team)
    r = await api.post("/v1/jobs", content=content,
                       headers={**team.auth, "Content-Type": "application/json"})
    assert r.status_code == 400, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert detail in r.json()["detail"]
    assert await _counts(pool, team) == before


async def test_bad_patch_changes_nothing(
    api: AsyncTestClient, team: Team, pool: ConnectionPool
) -> None:
    job = await _create(api, team)
    before = await _counts(pool, team)
    for body in ({"schedule": "* * *"}, {"retry": {"attempts": 0}}, {}, {"request": {"x": 1}}):
        r = await api.patch(f"/v1/jobs/{job['id']}", json=body, headers=team.auth)
        assert r.status_code == 422, (body, r.text)
    assert await _counts(pool, team) == before


async def test_auth_and_team_scoping(
    api: AsyncTestClient, team: Team, pool: ConnectionPool
) -> None:
    job = await _create(api, team)
    url = f"/v1/jobs/{job['id']}"
    assert (await api.get(url)).status_code == 401
    assert (await api.get(url, headers={"Authorization": "Bearer clk_wrong"})).status_code == 401
    assert (await api.get(url, headers={"Authorization": "Basic abc"})).status_code == 401
    r = await api.post(f"{url}/pause", headers=team.read_auth)
    assert r.status_code == 403
    assert (await api.get(url, headers=team.read_auth)).json()["status"] == "active"
    from core.apikeys import create_api_key

    other, _ = await create_api_key(pool, f"other-{uuid.uuid4().hex[:8]}")
    other_auth = {"Authorization": f"Bearer {other}"}
    before = await _counts(pool, team)
    for method, path in (("GET", url), ("PATCH", url), ("DELETE", url), ("POST", f"{url}/pause"),
                         ("POST", f"{url}/trigger"), ("GET", f"{url}/runs"),
                         ("GET", f"{url}/events")):
        r = await api.request(method, path, headers=other_auth,
                              json={"name": "x"} if method == "PATCH" else None)
        assert r.status_code == 404, (method, path, r.status_code)
    assert await _counts(pool, team) == before
    unknown = f"/v1/jobs/{uuid.uuid4()}"
    assert (await api.get(unknown, headers=team.auth)).status_code == 404
    assert (await api.get("/v1/jobs/not-a-uuid", headers=team.auth)).status_code in (404, 422)
    r = await api.get("/v1/jobs", params={"cursor": "garbage!"}, headers=team.auth)
    assert r.status_code == 422


async def test_values_postgres_cannot_store_are_422(
    api: AsyncTestClient, team: Team
) -> None:
    for body in ({"name": "a\x00"}, {"name": "n" * 201}, {"scope": "admin"}):
        r = await api.post("/v1/api-keys", json=body, headers=team.auth)
        assert r.status_code == 422, r.text
    keys = (await api.get("/v1/api-keys", headers=team.auth)).json()["items"]
    assert len(keys) == 2  # the fixture's write and read keys only


async def test_trigger_returns_queued_run(api: AsyncTestClient, team: Team) -> None:
    job = await _create(api, team)
    r = await api.post(f"/v1/jobs/{job['id']}/trigger", headers=team.auth)
    assert r.status_code == 202, r.text
    run = r.json()
    assert run["status"] == "queued" and run["trigger"] == "manual"
    runs = (await api.get(f"/v1/jobs/{job['id']}/runs", headers=team.auth)).json()
    assert [x["id"] for x in runs["items"]] == [run["id"]]
    detail = (await api.get(f"/v1/runs/{run['id']}", headers=team.auth)).json()
    assert detail["attempts"] == []


async def test_health_and_schema(api: AsyncTestClient) -> None:
    assert (await api.get("/healthz")).json() == {"status": "ok"}
    ready = await api.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    schema = (await api.get("/schema/openapi.json")).json()
    assert "/v1/jobs" in schema["paths"]
    metrics = await api.get("/metrics")
    assert metrics.status_code == 200
    assert metrics.headers["content-type"].startswith("text/plain")
    assert "cronledger_due_jobs " in metrics.text
    assert 'cronledger_jobs{status="active"}' in metrics.text


@pytest.mark.parametrize(("headers", "body", "status"), [
    ({}, {}, 401),                                          # no key: 401 before the body
    ({}, {"paused": 0}, 401),
    ({"Authorization": "Bearer bogus"}, {"name": 5}, 401),
    ({"Authorization": "Bearer bogus"}, '{"name":', 401),  # truncated JSON
])
async def test_authentication_comes_before_the_body(
    api: AsyncTestClient, pool: ConnectionPool, team: Team,
    headers: dict[str, str], body: Any, status: int
) -> None:
    before = await _counts(pool, team)
    content = body if isinstance(body, str) else json.dumps(body)
    r = await api.post("/v1/jobs", content=content,
                       headers={**headers, "Content-Type": "application/json"})
    assert r.status_code == status, r.text
    assert r.headers["www-authenticate"] == "Bearer"
    r = await api.post("/v1/jobs", json={"name": 5}, headers=team.read_auth)
    assert r.status_code == 403, r.text  # a read key, whatever the body
    assert await _counts(pool, team) == before


async def test_a_body_that_is_not_json_is_refused_with_415(
    api: AsyncTestClient, pool: ConnectionPool, team: Team
) -> None:
    before = await _counts(pool, team)
    body = json.dumps(JOB)
    for media in ("text/plain", "application/x-www-form-urlencoded", "application/xml"):
        r = await api.post("/v1/jobs", content=body,
                           headers={**team.auth, "Content-Type": media})
        assert r.status_code == 415, (media, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")
        assert "application/json" in r.json()["detail"]
    assert await _counts(pool, team) == before
    for media in ("application/json; charset=utf-8", "application/merge-patch+json"):
        body = json.dumps({**JOB, "name": f"as {media}"})  # names are unique per team
        r = await api.post("/v1/jobs", content=body,
                           headers={**team.auth, "Content-Type": media})
        assert r.status_code == 201, (media, r.text)
