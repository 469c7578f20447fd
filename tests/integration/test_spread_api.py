"""A job's ``spread`` over HTTP (docs/schedules.md, *Spread*): shown with the job's offset and
in the description, read as seconds or a duration, refused with a 422 naming the field."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.schedule.spread import SPREAD_WORDS, offset_seconds, spell
from tests.integration.test_dashboard_auth import sign_in
from tests.teams import Team

JOB = {"name": "rollup", "schedule": "0 * * * *",
       "request": {"url": "http://127.0.0.1:9/rollup"}}


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_spread_is_shown_with_the_jobs_offset(api: AsyncTestClient,
                                                    team: Team) -> None:
    r = await api.post("/v1/jobs", json={**JOB, "spread": "15m"}, headers=team.auth)
    assert r.status_code == 201, r.text
    job = r.json()
    offset = offset_seconds(uuid.UUID(job["id"]), 900)
    assert (job["spread"], job["spread_offset_seconds"]) == (900, offset)
    assert job["schedule_description"].endswith("(spread 15m)")
    next_run = instant(job["next_run_at"])
    slot = next_run - timedelta(seconds=offset)
    assert (slot.minute, slot.second, slot.microsecond) == (0, 0, 0)
    r = await api.patch(f"/v1/jobs/{job['id']}", json={"spread": 0}, headers=team.auth)
    assert r.status_code == 200, r.text
    assert (r.json()["spread"], r.json()["spread_offset_seconds"]) == (None, 0)
    assert "spread" not in r.json()["schedule_description"]
    plain = await api.post("/v1/jobs", json={**JOB, "name": "plain"}, headers=team.auth)
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
    api: AsyncTestClient, team: Team, body: dict[str, Any], problem: str | None
) -> None:
    r = await api.post("/v1/jobs", json={**JOB, **body}, headers=team.auth)
    assert r.status_code == 422, r.text
    assert "spread" in r.text
    if problem is not None:
        assert problem in r.text


async def test_spread_in_an_applied_file_and_its_export(api: AsyncTestClient,
                                                        team: Team) -> None:
    document = {"jobs": [{**JOB, "name": "filed", "spread": "15m"}], "digest": "cd" * 32}
    r = await api.post("/v1/apply", json=document, headers=team.auth)
    assert r.status_code == 200, r.text
    [job] = (await api.get("/v1/jobs", headers=team.auth)).json()["items"]
    assert job["spread"] == 900
    again = (await api.post("/v1/apply", json=document, headers=team.auth)).json()
    assert [c["action"] for c in again["changes"]] == ["unchanged"]
    exported = (await api.get("/v1/export", headers=team.read_auth)).json()
    assert [j["spread"] for j in exported["jobs"]] == [900]
    changed = {**document, "jobs": [{**document["jobs"][0], "spread": "30m"}]}
    result = (await api.post("/v1/apply", json=changed, headers=team.auth)).json()
    assert [c["action"] for c in result["changes"]] == ["update"]
    bad = {**document, "jobs": [{**document["jobs"][0], "spread": "2h"}]}
    r = await api.post("/v1/apply", json=bad, headers=team.auth)
    assert r.status_code == 422 and "spread" in r.text


async def test_preview_lists_fire_times_with_their_slots(api: AsyncTestClient,
                                                         team: Team) -> None:
    job_id = uuid.UUID("6f1c2b4e-9a0d-4c1e-8f3a-2b5d7e9c1a04")  # offset 60 s in 15 minutes
    r = await api.get("/v1/schedules/preview", params={
        "schedule": "0 * * * *", "after": "2026-12-01T10:00:30Z", "count": "3",
        "spread": "15m", "job_id": str(job_id)}, headers=team.read_auth)
    assert r.status_code == 200, r.text
    found = r.json()
    assert (found["spread"], found["spread_offset_seconds"]) == (900, 60)
    assert found["description"].endswith("each slot fired 1m after it (spread 15m)")
    # 10:00's fire time (10:01:00) is still ahead of 10:00:30: it comes first.
    assert [(f["slot"], f["at"], f["window_end"]) for f in found["fires"]] == [
        ("2026-12-01T10:00:00Z", "2026-12-01T10:01:00Z", "2026-12-01T10:15:00Z"),
        ("2026-12-01T11:00:00Z", "2026-12-01T11:01:00Z", "2026-12-01T11:15:00Z"),
        ("2026-12-01T12:00:00Z", "2026-12-01T12:01:00Z", "2026-12-01T12:15:00Z")]
    plain = (await api.get("/v1/schedules/preview", params={
        "schedule": "0 * * * *", "after": "2026-12-01T10:00:30Z", "count": "1"},
        headers=team.read_auth)).json()
    assert plain["fires"][0]["at"] == "2026-12-01T11:00:00Z"
    assert plain["spread"] is None and set(plain["fires"][0]) == {"at", "local", "dst"}
    r = await api.get("/v1/schedules/preview", params={"schedule": "0 * * * *",
                                                       "spread": "15m"},
                      headers=team.read_auth)
    assert r.status_code == 422 and "job_id" in r.text
    r = await api.get("/v1/schedules/preview", params={
        "schedule": "*/5 * * * *", "spread": "6m", "job_id": str(job_id)},
        headers=team.read_auth)
    assert r.status_code == 422 and "spread" in r.text
    # issue 32: a spread the query's pattern refuses says what a job's body says, in words
    # (core/schedule/spread.py:SPREAD_WORDS), not the pattern
    job = await api.post("/v1/jobs", json={**JOB, "spread": "abc"}, headers=team.auth)
    [said] = [e["message"] for e in job.json()["errors"] if e["field"] == "spread"]
    assert said == SPREAD_WORDS
    for spread in ("abc", "1e1", "-5", "123456"):
        r = await api.get("/v1/schedules/preview", params={
            "schedule": "0 * * * *", "spread": spread, "job_id": str(job_id)},
            headers=team.read_auth)
        assert r.status_code == 422, (spread, r.text)
        assert r.json()["errors"] == [{"field": "spread", "message": SPREAD_WORDS}], r.text


async def test_the_job_page_and_form_show_the_spread(frozen_api: AsyncTestClient,
                                                     team: Team) -> None:
    csrf = await sign_in(frozen_api, team.write)
    fields = {"csrf": csrf, "name": "spread one", "schedule": "0 * * * *", "timezone": "UTC",
              "request.method": "GET", "request.url": "https://example.com/",
              "timeout_seconds": "30", "retry.attempts": "1", "retry.backoff": "exponential",
              "retry.delay_seconds": "10", "retry.max_delay_seconds": "60",
              "overlap": "skip", "catchup": "latest", "alert_after_failures": "1",
              "spread": "15m"}
    created = await frozen_api.post("/ui/jobs/new", data=fields, follow_redirects=False)
    assert created.status_code == 303, created.text
    job_path = created.headers["location"]
    job_id = uuid.UUID(job_path.rsplit("/", 1)[1])
    offset = offset_seconds(job_id, 900)
    page = (await frozen_api.get(job_path)).text
    assert "(spread 15m)" in page
    assert f"<dt>Spread</dt><dd>each slot fires {spell(offset)} after it" in page
    form = (await frozen_api.get(job_path + "/edit")).text
    assert 'value="15m"' in form and f'data-job="{job_id}"' in form
    preview = (await frozen_api.get("/ui/schedules/preview", params={
        "schedule": "0 * * * *", "spread": "15m", "job_id": str(job_id)})).text
    assert "slot" in preview and "(spread 15m)" in preview
    unsaved = (await frozen_api.get("/ui/schedules/preview", params={
        "schedule": "0 * * * *", "spread": "15m"})).text
    assert "between" in unsaved and "within 15m" in unsaved
    refused = await frozen_api.post("/ui/jobs/new", data={**fields, "name": "too wide",
                                                          "spread": "2h"})
    assert refused.status_code == 422 and 'id="err-spread"' in refused.text


async def test_peaks_of_a_known_set_of_jobs(frozen_api: AsyncTestClient,
                                            team: Team) -> None:
    # The frozen clock is 2026-11-30T12:00:00Z.
    made = {}
    for name, extra in (("a", {}), ("b", {}), ("spread", {"spread": "15m"}),
                        ("paused", {"paused": True})):
        r = await frozen_api.post("/v1/jobs", json={**JOB, "name": name, **extra},
                                  headers=team.auth)
        assert r.status_code == 201, r.text
        made[name] = r.json()
    offset = made["spread"]["spread_offset_seconds"]
    r = await frozen_api.get("/v1/schedules/peaks", params={"top": "2"},
                             headers=team.read_auth)
    assert r.status_code == 200, r.text
    peaks = r.json()
    assert (peaks["from"], peaks["to"]) == ("2026-11-30T12:00:00Z", "2026-12-01T12:00:00Z")
    assert (peaks["fires"], peaks["jobs_counted"]) == (72, 3)  # the paused job does not fire
    assert [(s["at"], s["fires"], [j["name"] for j in s["jobs"]]) for s in peaks["seconds"]] == [
        ("2026-11-30T13:00:00Z", 2, ["a", "b"]), ("2026-11-30T14:00:00Z", 2, ["a", "b"])]
    assert peaks["seconds"][0]["jobs"][0] == {"id": made["a"]["id"], "name": "a",
                                              "spread": None, "spread_offset_seconds": 0}
    assert [(j["name"], j["peak_fires"]) for j in peaks["would_move"]] == [("a", 2), ("b", 2)]
    assert peaks["not_counted"] == []
    # Spread over its window, the busiest seconds no longer hold "a".
    await frozen_api.patch(f"/v1/jobs/{made['a']['id']}", json={"spread": "15m"},
                           headers=team.auth)
    everything = (await frozen_api.get("/v1/schedules/peaks", params={"top": "100"},
                                       headers=team.read_auth)).json()
    assert {j["name"] for s in everything["seconds"] for j in s["jobs"]
            if s["fires"] > 1} <= {"a", "b", "spread"}
    spread_at = [s["at"] for s in everything["seconds"]
                 if any(j["name"] == "spread" for j in s["jobs"])]
    assert spread_at[0].endswith(f"{offset // 60:02d}:{offset % 60:02d}Z")


@pytest.mark.parametrize("top", ["0", "101", "many"])
async def test_peaks_refuse_a_top_out_of_bounds(api: AsyncTestClient, team: Team,
                                                top: str) -> None:
    r = await api.get("/v1/schedules/peaks", params={"top": top}, headers=team.read_auth)
    assert r.status_code == 422, r.text
    assert "top" in r.text
