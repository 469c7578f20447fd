"""The monitors API: CRUD, pause/resume, rotate-token, pings and events, validation as
problem+json, auth and team scoping."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.db import ConnectionPool
from tests.teams import Team

MONITOR = {"name": "nightly backup", "schedule": "0 3 * * *", "timezone": "Europe/Paris",
           "grace_seconds": 900}


async def _create(api: AsyncTestClient, team: Team, **over: Any) -> dict[str, Any]:
    r = await api.post("/v1/monitors", json={**MONITOR, **over}, headers=team.auth)
    assert r.status_code == 201, r.text
    return r.json()


async def _counts(pool: ConnectionPool, team: Team) -> tuple[int, int]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT (SELECT count(*) FROM monitors WHERE team_id = %(t)s) AS m, "
            "(SELECT count(*) FROM events WHERE team_id = %(t)s) AS e",
            {"t": team.actor.team_id})
        row = await cur.fetchone()
    return row["m"], row["e"]


async def test_create_read_list(api: AsyncTestClient, team: Team,
                                pool: ConnectionPool) -> None:
    monitor = await _create(api, team)
    assert monitor["status"] == "new" and monitor["version"] == 1
    assert monitor["grace_seconds"] == 900 and monitor["methods"] == "any"
    assert monitor["manual_resume"] is False
    assert "3:00" in monitor["schedule_description"] and "Europe/Paris" in monitor[
        "schedule_description"]
    assert monitor["ping_url"] == f"http://testserver.local/ping/{monitor['ping_token']}"
    for key in ("last_ping_at", "next_expected_at", "alert_at", "last_start_at"):
        assert monitor[key] is None
    r = await api.get(f"/v1/monitors/{monitor['id']}", headers=team.read_auth)
    assert r.status_code == 200
    read = r.json()
    # The token is a credential: read keys never see it.
    assert read["ping_token"] is None and read["ping_url"] is None
    assert "read keys do not see ping URLs" in read["ping_url_note"]
    assert {k: v for k, v in read.items() if not k.startswith("ping_")} == {
        k: v for k, v in monitor.items() if not k.startswith("ping_")}
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT data::text AS d FROM events WHERE stream_id = %s",
                                 (monitor["id"],))
        assert monitor["ping_token"] not in (await cur.fetchone())["d"]
        cur = await conn.execute("SELECT ciphertext, token_hash FROM monitor_ping_tokens "
                                 "WHERE monitor_id = %s", (monitor["id"],))
        kept = await cur.fetchone()  # sealed, never in plaintext
        assert monitor["ping_token"].encode() not in bytes(kept["ciphertext"])
    listed = (await api.get("/v1/monitors", headers=team.auth)).json()
    assert [m["id"] for m in listed["items"]] == [monitor["id"]]
    # ... and write keys read the ping URL again at any time
    assert listed["items"][0]["ping_url"] == monitor["ping_url"]
    again = (await api.get(f"/v1/monitors/{monitor['id']}", headers=team.auth)).json()
    assert (again["ping_token"], again["ping_url"], again["ping_url_note"]) == (
        monitor["ping_token"], monitor["ping_url"], None)
    listed = (await api.get("/v1/monitors", headers=team.read_auth)).json()
    assert listed["items"][0]["ping_url"] is None


async def test_defaults_and_short_periods(api: AsyncTestClient, team: Team) -> None:
    r = await api.post("/v1/monitors", json={"name": "demo", "schedule": "@every 1s"},
                       headers=team.auth)
    monitor = r.json()
    assert monitor["grace_seconds"] == 300 and monitor["timezone"] == "UTC"
    assert monitor["schedule_description"] == "Every 1 second"


async def test_keyset_pagination(api: AsyncTestClient, team: Team) -> None:
    ids = [(await _create(api, team, name=f"m{i}"))["id"] for i in range(5)]
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = (await api.get("/v1/monitors", params=params, headers=team.auth)).json()
        seen += [m["id"] for m in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == ids


@pytest.mark.parametrize(("body", "field"), [
    ({"schedule": "@at 2030-01-01T00:00:00Z"}, "schedule"),
    ({"schedule": "0s"}, "schedule"),
    ({"schedule": "61 * * * *"}, "schedule"),
    ({"schedule": ""}, "schedule"),
    ({"timezone": "Mars/Olympus"}, "timezone"),
    ({"grace_seconds": 0}, "grace_seconds"),
    ({"grace_seconds": 40_000_000}, "grace_seconds"),
    ({"methods": "get"}, "methods"),
    ({"name": ""}, "name"),
    ({"name": "x" * 201}, "name"),
    ({"colour": "red"}, "colour"),
    ({"grace_seconds": 1.5}, "grace_seconds"),
    ({"manual_resume": "maybe"}, "manual_resume"),
    ({"name": "a\x00b"}, "name"),
    ({"timezone": "UTC\x00"}, "timezone"),
])
async def test_invalid_definitions_are_422(api: AsyncTestClient, team: Team,
                                           pool: ConnectionPool, body: dict[str, Any],
                                           field: str) -> None:
    before = await _counts(pool, team)
    r = await api.post("/v1/monitors", json={**MONITOR, **body}, headers=team.auth)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"] == "application/problem+json"
    assert field in [e["field"] for e in r.json()["errors"]]
    assert await _counts(pool, team) == before


async def test_patch_recomputes_expectations(api: AsyncTestClient, team: Team) -> None:
    monitor = await _create(api, team, schedule="1h", timezone="UTC")
    url = f"/v1/monitors/{monitor['id']}"
    assert (await api.get(f"/ping/{monitor['ping_token']}")).status_code == 200
    pinged = (await api.get(url, headers=team.auth)).json()
    r = await api.patch(url, json={"schedule": "2h", "grace_seconds": 60},
                        headers=team.auth)
    assert r.status_code == 200, r.text
    patched = r.json()
    assert patched["grace_seconds"] == 60 and patched["version"] == pinged["version"] + 1
    last = datetime.fromisoformat(pinged["last_ping_at"])
    assert (datetime.fromisoformat(patched["next_expected_at"]) - last).total_seconds() == 7200
    assert patched["alert_at"] == patched["next_expected_at"]
    stale = await api.patch(url, json={"name": "again", "version": 1}, headers=team.auth)
    assert stale.status_code == 409
    assert (await api.patch(url, json={}, headers=team.auth)).status_code == 422
    assert (await api.patch(url, json={"schedule": "@at 2030-01-01T00:00:00Z"},
                            headers=team.auth)).status_code == 422
    events = (await api.get(f"{url}/events", headers=team.auth)).json()["items"]
    assert events[-1]["event_type"] == "monitor.updated"
    assert events[-1]["data"]["changes"] == {"schedule": "2h", "grace_seconds": 60,
                                             "period_seconds": 7200.0}


async def test_pause_resume_delete(api: AsyncTestClient, team: Team) -> None:
    monitor = await _create(api, team, schedule="1m")
    url = f"/v1/monitors/{monitor['id']}"
    await api.get(f"/ping/{monitor['ping_token']}")
    r = await api.post(f"{url}/pause", headers=team.auth)
    assert r.status_code == 200 and r.json()["status"] == "paused"
    assert r.json()["alert_at"] is None
    again = await api.post(f"{url}/pause", headers=team.auth)
    assert again.json()["version"] == r.json()["version"]  # idempotent
    r = await api.post(f"{url}/resume", headers=team.auth)
    assert r.json()["status"] == "new" and r.json()["alert_at"] is None
    assert (await api.delete(url, headers=team.auth)).status_code == 204
    assert (await api.get(url, headers=team.auth)).status_code == 404
    assert (await api.post(f"{url}/pause", headers=team.auth)).status_code == 404
    history = (await api.get(f"{url}/events", headers=team.auth)).json()["items"]
    assert [e["event_type"] for e in history] == [
        "monitor.created", "monitor.pinged", "monitor.up", "monitor.paused", "monitor.resumed",
        "monitor.deleted"]
    assert (await api.get(f"{url}/pings", headers=team.auth)).json()["items"]
    listed = (await api.get("/v1/monitors", headers=team.auth)).json()["items"]
    assert monitor["id"] not in [m["id"] for m in listed]


async def test_pings_are_paginated_latest_first(api: AsyncTestClient, team: Team) -> None:
    monitor = await _create(api, team)
    for i in range(5):
        await api.post(f"/ping/{monitor['ping_token']}/log", content=f"line {i}".encode())
    seen, cursor = [], None
    while True:
        params = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        r = await api.get(f"/v1/monitors/{monitor['id']}/pings", params=params,
                          headers=team.read_auth)
        assert r.status_code == 200, r.text
        seen += [p["body"] for p in r.json()["items"]]
        cursor = r.json()["next_cursor"]
        if cursor is None:
            break
    assert seen == [f"line {i}" for i in reversed(range(5))]
    bad = await api.get(f"/v1/monitors/{monitor['id']}/pings", params={"cursor": "x"},
                        headers=team.auth)
    assert bad.status_code == 422


async def test_auth_scope_and_team_isolation(api: AsyncTestClient, team: Team,
                                             pool: ConnectionPool) -> None:
    from core.apikeys import create_api_key

    monitor = await _create(api, team)
    url = f"/v1/monitors/{monitor['id']}"
    assert (await api.get(url)).status_code == 401
    assert (await api.post(f"{url}/pause", headers=team.read_auth)).status_code == 403
    assert (await api.post("/v1/monitors", json=MONITOR,
                           headers=team.read_auth)).status_code == 403
    other, _ = await create_api_key(pool, f"other-{monitor['id'][:8]}", "write")
    other_auth = {"Authorization": f"Bearer {other}"}
    for method, path in (("GET", url), ("PATCH", url), ("DELETE", url),
                         ("POST", f"{url}/rotate-token"), ("GET", f"{url}/pings"),
                         ("GET", f"{url}/events")):
        r = await api.request(method, path, headers=other_auth,
                              json={"name": "x"} if method == "PATCH" else None)
        assert r.status_code == 404, (method, path)
    assert (await api.get("/v1/monitors", headers=other_auth)).json()["items"] == []
