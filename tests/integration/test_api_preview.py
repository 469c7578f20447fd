"""``GET /v1/schedules/preview`` and the schedule fields of jobs."""

from __future__ import annotations

from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from tests.teams import Team


async def test_preview_marks_gap_and_fold(api: AsyncTestClient, team: Team) -> None:
    r = await api.get("/v1/schedules/preview", headers=team.read_auth, params={
        "schedule": "30 2 * * *", "timezone": "America/New_York",
        "after": "2024-03-09T12:00:00Z", "count": 3})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["schedule"] == "30 2 * * *" and body["timezone"] == "America/New_York"
    assert body["description"]
    assert [f["at"] for f in body["fires"]] == [
        "2024-03-10T07:00:00Z", "2024-03-11T06:30:00Z", "2024-03-12T06:30:00Z"]
    assert [f["dst"] for f in body["fires"]] == ["gap", None, None]
    assert body["fires"][0]["local"] == "2024-03-10T03:00:00-04:00"
    fold = (await api.get("/v1/schedules/preview", headers=team.read_auth, params={
        "schedule": "30 1 * * *", "timezone": "America/New_York",
        "after": "2024-11-02T12:00:00Z", "count": 2})).json()["fires"]
    assert fold[0] == {"at": "2024-11-03T05:30:00Z", "local": "2024-11-03T01:30:00-04:00",
                       "dst": "fold"}
    assert fold[1]["at"] == "2024-11-04T06:30:00Z"


async def test_preview_defaults(api: AsyncTestClient, team: Team) -> None:
    r = await api.get("/v1/schedules/preview", headers=team.auth, params={"schedule": "@hourly"})
    fires = r.json()["fires"]
    assert len(fires) == 10 and all(f["at"].endswith(":00:00Z") for f in fires)


@pytest.mark.parametrize(("params", "field"), [
    ({"schedule": "0 0 30 2 *"}, "schedule"),
    ({"schedule": "@every 0s"}, "schedule"),
    ({"schedule": "* * * * *", "timezone": "Nowhere/Land"}, "timezone"),
    ({"schedule": "* * * * *", "after": "yesterday"}, "after"),
    ({"schedule": "* * * * *", "after": "2026-01-01T00:00:00"}, "after"),
    ({"schedule": "* * * * *", "after": "2999-01-01T00:00:00Z"}, "after"),
    ({"schedule": "* * * * *", "after": "0001-01-01T00:00:00Z"}, "after"),
    ({"schedule": "* * * * *", "count": 101}, None),
    ({"schedule": "* * * * *", "count": 0}, None),
    ({"schedule": "@at 2001-01-01T00:00:00Z"}, "schedule"),
    ({}, None),
])
async def test_preview_rejects_bad_input(
    api: AsyncTestClient, team: Team, params: dict[str, Any], field: str | None
) -> None:
    r = await api.get("/v1/schedules/preview", headers=team.auth, params=params)
    assert r.status_code in (400, 422), r.text
    if field:
        assert r.status_code == 422
        assert field in [e["field"] for e in r.json()["errors"]]


async def test_preview_needs_a_key(api: AsyncTestClient) -> None:
    r = await api.get("/v1/schedules/preview", params={"schedule": "@daily"})
    assert r.status_code == 401
