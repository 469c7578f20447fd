"""healthchecks' Management API v3 at /api/v3/ (docs/healthchecks.md), driven with the request
shapes of its Terraform provider's Go client (go-healthchecksio: ``X-Api-Key``, JSON bodies with
``name``, ``tags`` space-separated, ``timeout``/``grace`` in seconds or ``schedule``/``tz``,
``channels``, ``unique``, ``manual_resume``, ``methods``; create is ``POST /checks/``, update
``POST /checks/<uuid>``, delete ``DELETE /checks/<uuid>``)."""

from __future__ import annotations

from litestar.testing import AsyncTestClient

from core.clock import FrozenClock
from tests.teams import Team

UA = {"User-Agent": "terraform-provider-healthchecksio", "Content-Type": "application/json"}


def _key(team: Team, scope: str = "write") -> dict[str, str]:
    return {**UA, "X-Api-Key": team.write if scope == "write" else team.read}


async def _events(api: AsyncTestClient, team: Team, check_id: str) -> list[str]:
    r = await api.get(f"/v1/monitors/{check_id}/events", headers=team.auth)
    assert r.status_code == 200, r.text
    return [e["event_type"] for e in r.json()["items"]]


async def test_terraform_lifecycle(api: AsyncTestClient, team: Team) -> None:
    body = {"name": "nightly-backup", "tags": "prod db", "timeout": 3600, "grace": 300,
            "channels": "", "unique": ["name"], "manual_resume": False, "methods": ""}
    r = await api.post("/api/v3/checks/", json=body, headers=_key(team))
    assert r.status_code == 201, r.text
    check = r.json()
    assert check["name"] == "nightly-backup" and check["tags"] == "prod db"
    assert check["timeout"] == 3600 and check["grace"] == 300 and check["status"] == "new"
    assert check["n_pings"] == 0 and check["last_ping"] is None
    assert check["slug"] == "nightly-backup"
    assert check["update_url"].endswith(f"/api/v3/checks/{check['uuid']}")
    assert "/ping/" in check["ping_url"]
    uuid = check["uuid"]
    # the upsert: the same unique name answers the existing check (200), updated
    r = await api.post("/api/v3/checks/", json={**body, "grace": 600}, headers=_key(team))
    assert r.status_code == 200 and r.json()["uuid"] == uuid and r.json()["grace"] == 600
    # without unique, the same name is a second check (healthchecks: names are labels)
    second = await api.post("/api/v3/checks/", json={"name": "nightly-backup"},
                            headers=_key(team))
    assert second.status_code == 201 and second.json()["uuid"] != uuid
    assert second.json()["slug"] == "nightly-backup-2"
    # unique by a field the two share: the first check whose listed fields all match
    r = await api.post("/api/v3/checks/", json={"name": "nightly-backup", "unique": ["name"]},
                       headers=_key(team))
    assert r.status_code == 200 and r.json()["uuid"] == uuid
    r = await api.post("/api/v3/checks/", json={"name": "nightly-backup", "timeout": 86400,
                                                "unique": ["name", "timeout"]},
                       headers=_key(team))
    assert r.status_code == 200 and r.json()["uuid"] == second.json()["uuid"]
    await api.delete(f"/api/v3/checks/{second.json()['uuid']}", headers=_key(team))
    r = await api.post(f"/api/v3/checks/{uuid}",
                       json={"schedule": "0 3 * * *", "tz": "Europe/Paris"}, headers=_key(team))
    assert r.status_code == 200, r.text
    assert r.json()["schedule"] == "0 3 * * *" and r.json()["tz"] == "Europe/Paris"
    assert "timeout" not in r.json()
    assert (await api.post(f"/api/v3/checks/{uuid}/pause", headers=_key(team))).json()[
        "status"] == "paused"
    assert (await api.post(f"/api/v3/checks/{uuid}/resume", headers=_key(team))).json()[
        "status"] == "new"
    listed = (await api.get("/api/v3/checks/?tag=prod", headers=_key(team))).json()["checks"]
    assert [c["uuid"] for c in listed] == [uuid]
    assert (await api.get("/api/v3/checks/?tag=nope", headers=_key(team))).json() == {
        "checks": []}
    assert (await _events(api, team, uuid)) == ["monitor.created", "monitor.updated",
                                                "monitor.updated", "monitor.paused",
                                                "monitor.resumed"]
    r = await api.delete(f"/api/v3/checks/{uuid}", headers=_key(team))
    assert r.status_code == 200 and r.json()["name"] == "nightly-backup"
    r = await api.get(f"/api/v3/checks/{uuid}", headers=_key(team))
    assert r.status_code == 404 and "error" in r.json()


async def test_pings_flips_and_read_keys(api: AsyncTestClient, team: Team) -> None:
    r = await api.post("/api/v3/checks/", json={"name": "web", "timeout": 60},
                       headers=_key(team))
    uuid = r.json()["uuid"]
    ping = "/" + r.json()["ping_url"].split("/", 3)[3]
    assert (await api.get(ping)).status_code == 200
    check = (await api.get(f"/api/v3/checks/{uuid}", headers=_key(team))).json()
    assert check["status"] == "up" and check["n_pings"] == 1
    assert check["ping_url"] == r.json()["ping_url"]  # readable again (kept sealed)
    read = await api.get(f"/api/v3/checks/{uuid}", headers=_key(team, "read"))
    assert read.status_code == 200
    assert "unique_key" in read.json() and "update_url" not in read.json()
    assert "ping_url" not in read.json()
    r = await api.post("/api/v3/checks/", json={"name": "x"}, headers=_key(team, "read"))
    assert r.status_code == 401 and r.json() == {"error": "wrong api key"}
    assert (await api.get("/api/v3/checks/")).json() == {"error": "missing api key"}
    r = await api.post("/api/v3/checks/", json={"name": "x", "timeout": 5}, headers=_key(team))
    assert r.status_code == 400 and "timeout" in r.json()["error"]
    r = await api.post("/api/v3/checks/", content=b"{nope", headers=_key(team))
    assert r.status_code == 400
    await api.get(f"{ping}/fail")
    pings = await api.get(f"/api/v3/checks/{uuid}/pings/", headers=_key(team))
    assert pings.status_code == 200
    assert [(p["type"], p["n"], p["method"]) for p in pings.json()["pings"]] == [
        ("fail", 2, "GET"), ("success", 1, "GET")]
    flips = (await api.get(f"/api/v3/checks/{uuid}/flips/", headers=_key(team))).json()
    assert [f["up"] for f in flips["flips"]] == [0, 1]  # newest first
    channels = await api.get("/api/v3/channels/", headers=_key(team))
    assert channels.status_code == 200 and channels.json() == {"channels": []}
    badges = (await api.get("/api/v3/badges/", headers=_key(team, "read"))).json()["badges"]
    assert badges["*"]["svg3"].endswith("/*.svg") and badges["*"]["svg"].endswith("/*-2.svg")


async def test_every_error_under_api_is_healthchecks_shape(api: AsyncTestClient,
                                                           team: Team) -> None:
    """Not a problem+json anywhere under /api/: an unknown version, /api itself, a body nested
    too deeply for the JSON decoder (healthchecks: "could not parse request body")."""
    for path in ("/api/v9/checks/", "/api/v0/checks/", "/api", "/api/", "/api/checks/"):
        r = await api.get(path, headers=_key(team))
        assert r.status_code == 404, path
        assert r.headers["content-type"] == "application/json"
        assert r.json() == {"error": "not found"}, path
        assert r.headers["access-control-allow-origin"] == "*"
    deep = b"[" * 100_000 + b"]" * 100_000
    for path in ("/api/v3/checks/", "/api/v9/checks/"):
        r = await api.post(path, content=b'{"name": ' + deep + b"}", headers=_key(team))
        assert r.headers["content-type"] == "application/json", path
        assert "error" in r.json() and r.status_code in (400, 404), r.text
    r = await api.post("/api/v3/checks/", content=b'{"name": ' + deep + b"}",
                       headers=_key(team))
    assert (r.status_code, r.json()) == (400, {"error": "could not parse request body"})
    # /v1 keeps its problems
    r = await api.post("/v1/monitors", content=b'{"name": ' + deep + b"}", headers=team.auth)
    assert r.status_code == 400 and r.headers["content-type"] == "application/problem+json"


async def test_two_api_key_headers_are_refused(api: AsyncTestClient, team: Team) -> None:
    """Which key was meant cannot be known (as /v1's two Authorization headers): 400 naming
    the header, whichever comes first; nothing is created."""
    before = (await api.get("/api/v3/checks/", headers=_key(team))).json()["checks"]
    for keys in ([team.write, "nope"], ["nope", team.write],
                 [team.write, team.write], [f"{team.write}, {team.read}"]):
        headers = [("X-Api-Key", k) for k in keys]
        for r in (await api.get("/api/v3/checks/", headers=headers),
                  await api.post("/api/v3/checks/", json={"name": "two"}, headers=headers)):
            assert r.status_code == 400, (keys, r.text)
            assert "X-Api-Key" in r.json()["error"], r.json()
    assert (await api.get("/api/v3/checks/", headers=_key(team))).json()["checks"] == before


async def test_a_body_that_is_not_an_object_is_refused(api: AsyncTestClient,
                                                       team: Team) -> None:
    """healthchecks' ``authorize`` (hc/api/decorators.py): a POST body that is not a JSON
    object is 400 "json validation error: value is not an object"; blank text does not parse."""
    created = (await api.post("/api/v3/checks/", json={"name": "obj"}, headers=_key(team)))
    uuid = created.json()["uuid"]
    before = (await api.get("/api/v3/checks/", headers=_key(team))).json()["checks"]
    for body in (b"null", b"[]", b'[{"name": "x"}]', b"3", b'"x"', b"true"):
        for path in ("/api/v3/checks/", f"/api/v3/checks/{uuid}", f"/api/v1/checks/{uuid}/pause"):
            r = await api.post(path, content=body, headers=_key(team))
            assert (r.status_code, r.json()) == (
                400, {"error": "json validation error: value is not an object"}), (path, body)
    for body in (b" ", b"\n", b"{nope", b'{"name": "x", "timeout": 1e400}'):
        r = await api.post("/api/v3/checks/", content=body, headers=_key(team))
        assert (r.status_code, r.json()) == (400, {"error": "could not parse request body"})
    assert (await api.get("/api/v3/checks/", headers=_key(team))).json()["checks"] == before
    # no body at all is healthchecks' {} (a pause sends none)
    r = await api.post(f"/api/v3/checks/{uuid}/pause", headers=_key(team))
    assert r.status_code == 200 and r.json()["status"] == "paused"


async def test_unique_tags_compare_as_healthchecks_compares_its_tags_string(
        api: AsyncTestClient, team: Team) -> None:
    """healthchecks' ``_lookup`` filters ``tags=spec.tags``, the string: "db prod" is not
    "prod db"; and a field listed in ``unique`` but absent matches nothing."""
    first = await api.post("/api/v3/checks/", json={"name": "t", "tags": "prod db"},
                           headers=_key(team))
    assert first.status_code == 201
    same = await api.post("/api/v3/checks/", json={"tags": "prod db", "unique": ["tags"]},
                          headers=_key(team))
    assert same.status_code == 200 and same.json()["uuid"] == first.json()["uuid"]
    other = await api.post("/api/v3/checks/", json={"tags": "db prod", "unique": ["tags"]},
                           headers=_key(team))
    assert other.status_code == 201 and other.json()["uuid"] != first.json()["uuid"]
    # "name" listed but not given: healthchecks creates a new check (no lookup)
    absent = await api.post("/api/v3/checks/", json={"tags": "prod db", "unique": ["name"]},
                            headers=_key(team))
    assert absent.status_code == 201
    assert absent.json()["uuid"] not in (first.json()["uuid"], other.json()["uuid"])


async def test_null_is_no_fields_value(api: AsyncTestClient, team: Team) -> None:
    """healthchecks' ``Spec.check_nulls``: a field given as ``null`` is a 400 (create and
    update), never read as absent; keys healthchecks does not know are ignored."""
    created = await api.post("/api/v3/checks/", json={"name": "n"}, headers=_key(team))
    uuid = created.json()["uuid"]
    before = (await api.get("/api/v3/checks/", headers=_key(team))).json()["checks"]
    for field in ("name", "timeout", "grace", "tags", "unique", "channels", "manual_resume",
                  "desc", "tz", "schedule", "filter_http_body"):
        for path in ("/api/v3/checks/", f"/api/v3/checks/{uuid}"):
            r = await api.post(path, json={"name": "n", field: None}, headers=_key(team))
            assert r.status_code == 400, (field, path, r.text)
            assert field in r.json()["error"] and "null" in r.json()["error"]
    assert (await api.get("/api/v3/checks/", headers=_key(team))).json()["checks"] == before
    r = await api.post("/api/v3/checks/", json={"name": "n2", "whatever": None},
                       headers=_key(team))
    assert r.status_code == 201, r.text


async def test_healthchecks_limits_and_methods(api: AsyncTestClient, team: Team) -> None:
    """healthchecks' ``Spec`` limits (hc/api/views.py: name, schedule and slug at most 100
    characters, the ``*_kw``, ``subject`` and ``subject_fail`` at most 200; ``tz`` one of its
    zones, so not ""; ``desc`` a string) are 400s naming the field; ``HEAD`` is not one of a
    route's methods (healthchecks' ``cors`` decorator answers it 405), with the CORS headers
    and the route's methods."""
    kw = {"filter_http_body": True}
    for field, at_limit, extra in (("name", "n" * 100, {}), ("slug", "s" * 100, {}),
                                   ("success_kw", "k" * 200, kw), ("schedule", None, {}),
                                   ("subject", "s" * 200, {}), ("subject_fail", "f" * 200, {})):
        if at_limit is not None:
            r = await api.post("/api/v3/checks/", json={field: at_limit, **extra},
                               headers=_key(team))
            assert r.status_code == 201, (field, r.text)
        too_long = (at_limit or "0 3 * * *" + " " * 91) + "x"
        r = await api.post("/api/v3/checks/", json={field: too_long, **extra},
                           headers=_key(team))
        assert r.status_code == 400 and f"{field}: is too long" in r.json()["error"], r.text
    created = (await api.post("/api/v3/checks/", json={}, headers=_key(team))).json()
    update = await api.post(f"/api/v3/checks/{created['uuid']}", json={"name": "n" * 101},
                            headers=_key(team))
    assert update.status_code == 400 and "name: is too long" in update.json()["error"]
    for body in ({"tz": ""}, {"schedule": "0 3 * * *", "tz": ""}):  # healthchecks' check_tz
        r = await api.post("/api/v3/checks/", json=body, headers=_key(team))
        assert r.status_code == 400 and "tz: is not a valid timezone" in r.json()["error"], body
    r = await api.post("/api/v3/checks/", json={"desc": 5}, headers=_key(team))
    assert r.status_code == 400 and "desc: must be a string" in r.json()["error"]
    for path in ("/api/v3/checks/", f"/api/v3/checks/{created['uuid']}",
                 f"/api/v3/checks/{created['uuid']}/pings/", "/api/v3/channels/"):
        r = await api.head(path, headers=_key(team))
        assert r.status_code == 405 and r.content == b"", path
        assert r.headers["access-control-allow-origin"] == "*"
        assert "GET" in r.headers["access-control-allow-methods"].split(", "), path


async def test_flips_newest_first_and_filtered_as_healthchecks(
        frozen_api: AsyncTestClient, team: Team, clock: FrozenClock) -> None:
    """healthchecks' ``flips`` view and FlipsFiltersForm (hc/api/tests/test_get_flips.py):
    newest first; ``start`` inclusive, ``end`` exclusive, ``seconds`` back from now; a filter
    it cannot read is a 400."""
    api = frozen_api
    r = await api.post("/api/v3/checks/", json={"name": "flippy", "timeout": 3600},
                       headers=_key(team))
    uuid, ping = r.json()["uuid"], "/" + r.json()["ping_url"].split("/", 3)[3]
    up_at = clock.now()  # 2026-11-30 12:00:00 UTC
    await api.get(ping)
    clock.advance(600)
    await api.get(f"{ping}/fail")
    clock.advance(600)
    await api.get(ping)
    url = f"/api/v3/checks/{uuid}/flips/"

    async def flips(query: str = "") -> list[tuple[str, int]]:
        answer = await api.get(url + query, headers=_key(team))
        assert answer.status_code == 200, answer.text
        return [(f["timestamp"], f["up"]) for f in answer.json()["flips"]]

    assert await flips() == [("2026-11-30T12:20:00+00:00", 1), ("2026-11-30T12:10:00+00:00", 0),
                             ("2026-11-30T12:00:00+00:00", 1)]
    start = int(up_at.timestamp())
    assert [up for _, up in await flips(f"?start={start + 600}")] == [1, 0]  # inclusive
    assert [up for _, up in await flips(f"?end={start + 600}")] == [1]  # exclusive
    assert [up for _, up in await flips("?seconds=600")] == [1, 0]
    assert len(await flips("?seconds=0")) == 3  # zero is no bound, as in healthchecks
    assert len(await flips("?seconds=")) == 3
    for bad in ("?start=abc", "?start=-123", "?start=12345678901234567890", "?start=",
                "?end=1.5", "?seconds=-123", "?seconds=12345678901234567890",
                "?seconds=abc"):
        answer = await api.get(url + bad, headers=_key(team))
        assert answer.status_code == 400, bad
        assert answer.json()["error"].startswith(bad[1:].split("=")[0] + ":"), bad
