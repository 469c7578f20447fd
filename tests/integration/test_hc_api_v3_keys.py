"""``/api/v3`` as healthchecks' own tests expect it (hc/api/tests/ of healthchecks/healthchecks:
test_get_check.py, test_list_checks.py, test_get_flips.py, test_get_pings.py,
test_get_ping_body.py, test_resume.py, test_create_check.py, test_auth): read keys, ``api_key``
in the body, ping bodies, ``rid`` / ``body_url`` / ``duration``, resume of a check that is not
paused, ``tz``, unknown routes and CORS."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

from litestar.testing import AsyncTestClient

from core.clock import FrozenClock
from tests.teams import Team

RID = "6fc5b4c3-2b8c-4d06-a6a1-2b7ab4ba2a4e"


def _key(team: Team, scope: str = "write") -> dict[str, str]:
    return {"X-Api-Key": team.write if scope == "write" else team.read}


async def _check(api: AsyncTestClient, team: Team, **body: Any) -> dict[str, Any]:
    r = await api.post("/api/v3/checks/", json={"name": "web", "timeout": 60, **body},
                       headers=_key(team))
    assert r.status_code == 201, r.text
    return r.json()


async def test_read_keys_see_unique_keys_and_flips_never_ping_urls_or_pings(
        api: AsyncTestClient, team: Team) -> None:
    check = await _check(api, team)
    unique = hashlib.sha1(check["uuid"].encode()).hexdigest()  # noqa: S324 - healthchecks'
    listed = (await api.get("/api/v3/checks/", headers=_key(team, "read"))).json()["checks"]
    assert [c["unique_key"] for c in listed] == [unique]
    for hidden in ("uuid", "ping_url", "update_url", "pause_url", "resume_url", "channels"):
        assert hidden not in listed[0], hidden
    one = await api.get(f"/api/v3/checks/{unique}", headers=_key(team, "read"))
    assert one.status_code == 200 and one.json() == listed[0]
    assert (await api.get(f"/api/v3/checks/{unique}", headers=_key(team))).json()["uuid"] == \
        check["uuid"]  # a write key may name it by unique_key too
    assert (await api.get(f"/api/v3/checks/{'0' * 40}", headers=_key(team, "read"))
            ).status_code == 404
    ping = "/" + check["ping_url"].split("/", 3)[3]
    await api.get(ping)
    await api.get(f"{ping}/fail")
    for ref in (unique, check["uuid"]):
        flips = await api.get(f"/api/v3/checks/{ref}/flips/", headers=_key(team, "read"))
        assert flips.status_code == 200
        assert [f["up"] for f in flips.json()["flips"]] == [0, 1]  # newest first
    pings = await api.get(f"/api/v3/checks/{check['uuid']}/pings/", headers=_key(team, "read"))
    assert pings.status_code == 401 and pings.json() == {"error": "wrong api key"}
    body = await api.get(f"/api/v3/checks/{check['uuid']}/pings/1/body",
                         headers=_key(team, "read"))
    assert body.status_code == 401
    channels = await api.get("/api/v3/channels/", headers=_key(team, "read"))
    assert channels.status_code == 401  # healthchecks: authorize, not authorize_read
    r = await api.post(f"/api/v3/checks/{check['uuid']}/pause", json={"api_key": team.read})
    assert r.status_code == 401


async def test_api_key_in_the_body_of_a_post(api: AsyncTestClient, team: Team) -> None:
    r = await api.post("/api/v3/checks/", json={"api_key": team.write, "name": "body key"})
    assert r.status_code == 201 and r.json()["name"] == "body key"
    uuid = r.json()["uuid"]
    r = await api.post(f"/api/v3/checks/{uuid}/pause", json={"api_key": team.write})
    assert r.status_code == 200 and r.json()["status"] == "paused"
    r = await api.post(f"/api/v3/checks/{uuid}/resume", json={"api_key": team.write})
    assert r.status_code == 200 and r.json()["status"] == "new"
    assert (await api.post("/api/v3/checks/", json={"name": "x"})).json() == {
        "error": "missing api key"}
    r = await api.post("/api/v3/checks/", json={"api_key": "nope", "name": "x"})
    assert r.status_code == 401 and r.json() == {"error": "wrong api key"}
    r = await api.post(f"/api/v3/checks/{uuid}/resume", content=b"123",
                       headers=_key(team))
    assert r.status_code == 400 and r.json() == {
        "error": "json validation error: value is not an object"}
    # a GET reads the header only (authorize_read)
    r = await api.get("/api/v3/checks/", params={"api_key": team.write})
    assert r.status_code == 401


async def test_pings_carry_rid_body_url_and_duration_and_bodies_are_served(
        api: AsyncTestClient, team: Team) -> None:
    check = await _check(api, team)
    ping = "/" + check["ping_url"].split("/", 3)[3]
    await api.get(f"{ping}/start?rid={RID}")
    await api.post(f"{ping}?rid={RID}", content=b"Hello\x01\x99World")
    await api.get(ping)
    url = f"/api/v3/checks/{check['uuid']}"
    r = await api.get(f"{url}/pings/", headers=_key(team))
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == "*"
    third, second, first = r.json()["pings"]
    assert [p["n"] for p in (third, second, first)] == [3, 2, 1]
    assert (first["type"], first["rid"], first["body_url"]) == ("start", RID, None)
    assert second["rid"] == RID and isinstance(second["duration"], float)
    assert second["body_url"] == f"http://testserver.local{url}/pings/2/body"
    assert third["rid"] is None and third["body_url"] is None and "duration" not in third
    body = await api.get(f"{url}/pings/2/body", headers=_key(team))
    assert body.status_code == 200 and body.content == b"Hello\x01\x99World"
    assert body.headers["content-type"].split(";")[0] == "text/plain"
    for n in (1, 3, 4, 0):  # no body, or no such ping
        assert (await api.get(f"{url}/pings/{n}/body", headers=_key(team))).status_code == 404
    assert (await api.post(f"{url}/pings/2/body", headers=_key(team))).status_code == 405


async def test_resume_of_a_check_that_is_not_paused_is_409(api: AsyncTestClient,
                                                           team: Team) -> None:
    check = await _check(api, team)
    r = await api.post(f"/api/v3/checks/{check['uuid']}/resume", headers=_key(team))
    assert r.status_code == 409 and r.json() == {"error": "check is not paused"}


async def test_an_unknown_tz_is_400_with_or_without_a_schedule(api: AsyncTestClient,
                                                               team: Team) -> None:
    for body in ({"name": "a", "tz": "Mars/Olympus"},
                 {"name": "b", "schedule": "0 3 * * *", "tz": "Mars/Olympus"}):
        r = await api.post("/api/v3/checks/", json=body, headers=_key(team))
        assert r.status_code == 400 and "error" in r.json(), body
    check = await _check(api, team)
    r = await api.post(f"/api/v3/checks/{check['uuid']}", json={"tz": "Mars/Olympus"},
                       headers=_key(team))
    assert r.status_code == 400
    r = await api.post(f"/api/v3/checks/{check['uuid']}", json={"tz": "Europe/Riga"},
                       headers=_key(team))
    assert r.status_code == 200


async def test_unknown_routes_errors_and_cors_are_healthchecks(api: AsyncTestClient,
                                                               team: Team) -> None:
    for path in ("/api/v3/nope", "/api/v3/checks/not-a-uuid", "/api/v1/checks/x/y/z"):
        r = await api.get(path, headers=_key(team))
        assert r.status_code == 404 and r.json() == {"error": "not found"}, path
        assert r.headers["access-control-allow-origin"] == "*"
    r = await api.put("/api/v3/checks/", headers=_key(team))
    assert r.status_code == 405 and r.json() == {"error": "method not allowed"}
    r = await api.options("/api/v3/checks/")
    assert r.status_code == 204
    assert r.headers["access-control-allow-origin"] == "*"
    assert r.headers["access-control-allow-headers"] == "X-Api-Key"
    assert r.headers["access-control-max-age"] == "600"
    assert {"GET", "POST"} <= set(r.headers["access-control-allow-methods"].split(", "))
    r = await api.options("/api/v3/checks/0b4d2b6a-7e2f-4b44-a9b6-6c1f3f9d1e52/resume")
    assert "POST" in r.headers["access-control-allow-methods"]
    r = await api.get("/api/v3/checks/", headers=_key(team))
    assert r.headers["access-control-allow-origin"] == "*"
    assert r.headers["access-control-allow-methods"] == "GET, POST, OPTIONS"
    assert (await api.get("/api/v3/checks/")).headers["access-control-allow-origin"] == "*"


async def test_checks_and_pings_have_the_keys_of_healthchecks_to_dict(
        frozen_api: AsyncTestClient, clock: FrozenClock, team: Team) -> None:
    """``Check.to_dict`` gives ``last_duration`` only when the check has one; ``Ping.to_dict``
    gives ``date`` as ``created.isoformat()`` (microseconds kept) and ``duration`` as
    ``total_seconds()`` (not rounded)."""
    api = frozen_api
    clock.set(datetime(2026, 11, 30, 12, 0, 0, 250000, tzinfo=UTC))
    check = await _check(api, team)
    assert "last_duration" not in check
    ping = "/" + check["ping_url"].split("/", 3)[3]
    await api.get(f"{ping}/start")
    clock.advance(1.234)
    await api.get(ping)
    url = f"/api/v3/checks/{check['uuid']}"
    got = (await api.get(url, headers=_key(team))).json()
    assert got["last_duration"] == 1
    success, start = (await api.get(f"{url}/pings/", headers=_key(team))).json()["pings"]
    assert start["date"] == "2026-11-30T12:00:00.250000+00:00"
    assert success["date"] == "2026-11-30T12:00:01.484000+00:00"
    assert success["duration"] == 1.234
