"""A job's ``spread`` over HTTP (docs/schedules.md, *Spread*): shown with the job's offset and
in the description, read as seconds or a duration, refused with a 422 naming the field."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.schedule.spread import offset_seconds

JOB = {"name": "rollup", "schedule": "0 * * * *",
       "request": {"url": "http://127.0.0.1:9/rollup"}}


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_spread_is_shown_with_the_jobs_offset(api: AsyncTestClient,
                                                    team: dict[str, Any]) -> None:
    r = await api.post("/v1/jobs", json={**JOB, "spread": "15m"}, headers=team["auth"])
    assert r.status_code == 201, r.text
    job = r.json()
    offset = offset_seconds(uuid.UUID(job["id"]), 900)
    assert (job["spread"], job["spread_offset_seconds"]) == (900, offset)
    assert job["schedule_description"].endswith("(spread 15m)")
    next_run = instant(job["next_run_at"])
    slot = next_run - timedelta(seconds=offset)
    assert (slot.minute, slot.second, slot.microsecond) == (0, 0, 0)
    r = await api.patch(f"/v1/jobs/{job['id']}", json={"spread": 0}, headers=team["auth"])
    assert r.status_code == 200, r.text
    assert (r.json()["spread"], r.json()["spread_offset_seconds"]) == (None, 0)
    assert "spread" not in r.json()["schedule_description"]
    plain = await api.post("/v1/jobs", json={**JOB, "name": "plain"}, headers=team["auth"])
    assert (plain.json()["spread"], plain.json()["spread_offset_seconds"]) == (None, 0)


@pytest.mark.parametrize(("body", "problem"), [
    ({"spread": "2d"}, "must be a duration from 1 s to 1 day"),
    ({"spread": 86401}, None),
    ({"spread": "61m"}, "shortest interval between slots (3600 s)"),
    ({"spread": "6m", "schedule": "*/5 * * * *"}, "shortest interval between slots (300 s)"),
    ({"spread": "soon"}, None),
    ({"spread": -1}, None),
])
async def test_bad_spread_is_a_422_naming_the_field(
    api: AsyncTestClient, team: dict[str, Any], body: dict[str, Any], problem: str | None
) -> None:
    r = await api.post("/v1/jobs", json={**JOB, **body}, headers=team["auth"])
    assert r.status_code == 422, r.text
    assert "spread" in r.text
    if problem is not None:
        assert problem in r.text


async def test_spread_in_an_applied_file_and_its_export(api: AsyncTestClient,
                                                        team: dict[str, Any]) -> None:
    document = {"jobs": [{**JOB, "name": "filed", "spread": "15m"}], "digest": "cd" * 32}
    r = await api.post("/v1/apply", json=document, headers=team["auth"])
    assert r.status_code == 200, r.text
    [job] = (await api.get("/v1/jobs", headers=team["auth"])).json()["items"]
    assert job["spread"] == 900
    again = (await api.post("/v1/apply", json=document, headers=team["auth"])).json()
    assert [c["action"] for c in again["changes"]] == ["unchanged"]
    exported = (await api.get("/v1/export", headers=team["read_auth"])).json()
    assert [j["spread"] for j in exported["jobs"]] == [900]
    changed = {**document, "jobs": [{**document["jobs"][0], "spread": "30m"}]}
    result = (await api.post("/v1/apply", json=changed, headers=team["auth"])).json()
    assert [c["action"] for c in result["changes"]] == ["update"]
    bad = {**document, "jobs": [{**document["jobs"][0], "spread": "2h"}]}
    r = await api.post("/v1/apply", json=bad, headers=team["auth"])
    assert r.status_code == 422 and "spread" in r.text
