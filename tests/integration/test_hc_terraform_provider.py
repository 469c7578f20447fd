"""/api/v3 driven with the exact requests of healthchecks' Terraform provider
(docs/healthchecks.md, "Terraform").

The request shapes are read from the provider's and its Go client's source, not recalled:

- ``kristofferahl/terraform-provider-healthchecksio``, ``healthchecksio/resource_check.go``
  (commit 18178a72): ``timeout`` defaults to 86400, ``grace`` to 3600, ``methods`` to ``""``;
  Create posts the body then calls Read; Read is ``GET /checks/`` (the whole list) and keeps the
  check whose ``ID()`` equals the resource id, setting ``name``, ``tags`` (split on ``" "``),
  ``timeout``, ``grace``, ``schedule``, ``tz``, ``channels`` (split on ``","``), ``ping_url``,
  ``pause_url``, ``desc`` and ``methods``; no check found means "gone" (id cleared).
  Update posts the full body to ``/checks/<id>`` then calls Read; Delete is ``DELETE
  /checks/<id>``.
- ``kristofferahl/go-healthchecksio``, ``healtcheck.go``: the body is the ``Healthcheck``
  struct marshalled in field order (``channels`` and ``methods`` always sent; ``desc``,
  ``grace``, ``name``, ``slug``, ``schedule``, ``tags``, ``timeout``, ``tz``, ``unique`` left out
  when empty); ``ID()`` is the last ``/`` segment of ``update_url``. ``client.go``: every request
  carries ``Content-Type: application/json`` and ``X-Api-Key`` (also ``pause``, with no body);
  an answer of status 300 or more is decoded as ``{"error": "<message>"}``.
"""

from __future__ import annotations

import json
from typing import Any

from litestar.testing import AsyncTestClient

from tests.teams import Team

FIELDS = ("channels", "desc", "grace", "methods", "name", "slug", "schedule", "tags", "timeout",
          "tz", "unique")
ALWAYS_SENT = ("channels", "methods")


def _go_body(**values: Any) -> bytes:
    """The Go client's ``Healthcheck.ToJSON()``: struct order, ``omitempty`` but two fields."""
    body = {f: values.get(f, "" if f in ALWAYS_SENT else None) for f in FIELDS}
    return json.dumps({f: v for f, v in body.items()
                       if f in ALWAYS_SENT or v not in (None, "", 0, [])},
                      separators=(",", ":")).encode()


def _headers(team: Team) -> dict[str, str]:
    return {"Content-Type": "application/json", "X-Api-Key": team.write,
            "User-Agent": "Go-http-client/1.1"}


def _id(check: dict[str, Any]) -> str:
    return str(check["update_url"]).split("/")[-1]


async def _provider_read(api: AsyncTestClient, team: Team, resource_id: str
                         ) -> dict[str, Any] | None:
    """The provider's Read: the list, the check by ``ID()``, the attributes it sets."""
    r = await api.get("/api/v3/checks/", headers=_headers(team))
    assert r.status_code < 300, r.text
    found = [c for c in r.json()["checks"] if _id(c) == resource_id]
    if not found:
        return None
    c = found[0]
    return {"name": c.get("name", ""),
            "tags": c["tags"].split(" ") if c.get("tags") else [],
            "timeout": c.get("timeout", 0), "grace": c.get("grace", 0),
            "schedule": c.get("schedule", ""), "timezone": c.get("tz", ""),
            "channels": c["channels"].split(",") if c.get("channels") else [],
            "ping_url": c.get("ping_url", ""), "pause_url": c.get("pause_url", ""),
            "desc": c.get("desc", ""), "methods": c.get("methods", "")}


async def test_provider_create_read_update_delete(api: AsyncTestClient, team: Team) -> None:
    config = {"name": "nightly-backup", "tags": "prod db", "timeout": 86400, "grace": 3600,
              "methods": ""}
    created = await api.post("/api/v3/checks/", content=_go_body(**config),
                             headers=_headers(team))
    assert created.status_code == 201, created.text
    resource_id = _id(created.json())
    assert resource_id == created.json()["uuid"]
    ping_path = "/" + created.json()["ping_url"].split("/", 3)[3]
    assert (await api.get(ping_path)).status_code == 200  # the create answer's URL pings

    state = await _provider_read(api, team, resource_id)
    assert state is not None
    # what Terraform compares with the configuration: no diff on the next plan
    assert state["name"] == "nightly-backup" and state["tags"] == ["prod", "db"]
    assert (state["timeout"], state["grace"], state["methods"]) == (86400, 3600, "")
    assert (state["schedule"], state["timezone"], state["channels"]) == ("", "", [])
    assert state["pause_url"].endswith(f"/api/v3/checks/{resource_id}/pause")
    # Read takes the list's ping_url: the create answer's, kept sealed (docs/heartbeats.md)
    assert state["ping_url"] == created.json()["ping_url"] != ""

    cron = {**config, "schedule": "0 3 * * *", "tz": "Europe/Paris", "grace": 600}
    updated = await api.post(f"/api/v3/checks/{resource_id}", content=_go_body(**cron),
                             headers=_headers(team))
    assert updated.status_code == 200, updated.text
    state = await _provider_read(api, team, resource_id)
    assert state is not None
    assert (state["schedule"], state["timezone"], state["grace"]) == (
        "0 3 * * *", "Europe/Paris", 600)
    assert state["timeout"] == 0  # healthchecks answers no timeout for a cron check either

    paused = await api.post(f"/api/v3/checks/{resource_id}/pause", headers=_headers(team))
    assert paused.status_code == 200 and paused.json()["status"] == "paused"

    gone = await api.delete(f"/api/v3/checks/{resource_id}", headers=_headers(team))
    assert gone.status_code < 300 and _id(gone.json()) == resource_id
    assert await _provider_read(api, team, resource_id) is None


async def test_provider_channels_and_errors(api: AsyncTestClient, team: Team) -> None:
    r = await api.get("/api/v3/channels/", headers=_headers(team))
    assert r.status_code == 200 and r.json() == {"channels": []}
    bad = await api.post("/api/v3/checks/", content=_go_body(name="x", timeout=5),
                         headers=_headers(team))
    assert bad.status_code >= 300 and "timeout" in bad.json()["error"]
    wrong = await api.get("/api/v3/checks/", headers={**_headers(team), "X-Api-Key": "nope"})
    assert wrong.status_code == 401 and wrong.json() == {"error": "wrong api key"}
    unknown = "00000000-0000-4000-8000-000000000000"
    missing = await api.delete(f"/api/v3/checks/{unknown}", headers=_headers(team))
    assert missing.status_code == 404 and isinstance(missing.json()["error"], str)


async def test_provider_default_base_url_is_v1(api: AsyncTestClient, team: Team) -> None:
    """The Go client's default base URL is ``https://healthchecks.io/api/v1`` (``client.go``)
    and the provider's self-hosted example sets ``api_url`` to ``.../api/v1``: v1 and v2 answer
    too, their URLs naming their version; ``status`` is ``started`` only in v1."""
    created = await api.post("/api/v1/checks/", content=_go_body(name="v1", timeout=3600),
                             headers=_headers(team))
    assert created.status_code == 201, created.text
    resource_id = _id(created.json())
    assert created.json()["update_url"].endswith(f"/api/v1/checks/{resource_id}")
    ping_path = "/" + created.json()["ping_url"].split("/", 3)[3]
    assert (await api.get(ping_path)).status_code == 200
    assert (await api.get(f"{ping_path}/start")).status_code == 200
    statuses = {}
    for version in (1, 2, 3):
        r = await api.get(f"/api/v{version}/checks/{resource_id}", headers=_headers(team))
        assert r.status_code == 200, r.text
        assert r.json()["update_url"].endswith(f"/api/v{version}/checks/{resource_id}")
        assert r.json()["started"] is True
        statuses[version] = r.json()["status"]
    assert statuses == {1: "started", 2: "up", 3: "up"}
    assert (await api.get("/api/v4/checks/", headers=_headers(team))).status_code == 404
    doc = (await api.get("/schema/openapi.json")).json()
    assert [p for p in doc["paths"] if p.startswith("/api/")] == []  # healthchecks' shapes
