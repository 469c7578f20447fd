"""Schedules in words through the API (docs/schedules.md, "Schedules in words"): jobs and
monitors store the canonical form as ``schedule`` and the words as ``schedule_text``, in the
definition, the events and the projection; ``POST /v1/schedules/parse`` and the preview answer
what a phrase reads as; a phrase that cannot be read is a 422 naming the word."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from litestar.testing import AsyncTestClient

from core.db import ConnectionPool
from core.events import read_stream
from core.jobs.state import fold as fold_job
from core.monitors.commands import update_monitor
from core.monitors.state import fold as fold_monitor
from core.rebuild import rebuild
from tests.helpers import add_job, new_actor
from tests.monitor_helpers import add_monitor
from tests.teams import Team

JOB = {"name": "words", "timezone": "Europe/Paris",
       "request": {"method": "POST", "url": "http://127.0.0.1:9/report"}}


async def _row(pool: ConnectionPool, table: str, row_id: str) -> dict[str, Any]:
    async with pool.connection() as conn:
        cur = await conn.execute(f"SELECT * FROM {table} WHERE id = %s", (row_id,))  # noqa: S608
        row = await cur.fetchone()
    assert row is not None
    return row


async def _stream(pool: ConnectionPool, row_id: str, team: Team,
                  stream_type: str = "job") -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        return await read_stream(conn, stream_type, uuid.UUID(row_id), team.actor.team_id)


async def test_a_job_in_words_stores_the_canonical_form_and_keeps_the_words(
    api: AsyncTestClient, team: Team, pool: ConnectionPool,
) -> None:
    r = await api.post("/v1/jobs", headers=team.auth,
                       json={**JOB, "schedule": "  du lundi au vendredi à 9h30 "})
    assert r.status_code == 201, r.text
    job = r.json()
    assert job["schedule"] == "30 9 * * 1-5"
    assert job["schedule_text"] == "du lundi au vendredi à 9h30"
    assert job["schedule_description"] == "At 09:30 AM, Monday through Friday (Europe/Paris)"
    local = datetime.fromisoformat(job["next_run_at"]).astimezone(ZoneInfo("Europe/Paris"))
    assert (local.hour, local.minute, local.isoweekday() <= 5) == (9, 30, True)
    stream = await _stream(pool, job["id"], team)
    assert stream[0]["data"]["schedule"] == "30 9 * * 1-5"
    assert stream[0]["data"]["schedule_text"] == "du lundi au vendredi à 9h30"
    assert fold_job(stream).as_row() == await _row(pool, "jobs", job["id"])
    url = f"/v1/jobs/{job['id']}"

    # a change that leaves the schedule alone keeps the words (they still read as it)
    r = await api.patch(url, headers=team.auth, json={"timezone": "America/New_York"})
    assert r.status_code == 200, r.text
    assert r.json()["schedule_text"] == "du lundi au vendredi à 9h30"
    # new words replace them; a canonical schedule drops them
    r = await api.patch(url, headers=team.auth, json={"schedule": "every day at noon"})
    assert (r.json()["schedule"], r.json()["schedule_text"]) == ("0 12 * * *",
                                                                 "every day at noon")
    r = await api.patch(url, headers=team.auth, json={"schedule": "0 12 * * *"})
    assert (r.json()["schedule"], r.json()["schedule_text"]) == ("0 12 * * *", None)
    events = (await api.get(f"{url}/events", headers=team.auth)).json()["items"]
    changes = [e["data"]["changes"] for e in events if e["event_type"] == "job.updated"]
    assert "schedule_text" not in changes[0] and changes[0]["timezone"] == "America/New_York"
    assert changes[1]["schedule_text"] == "every day at noon"
    assert changes[2]["schedule_text"] is None and "schedule" not in changes[2]
    folded = fold_job(await _stream(pool, job["id"], team))
    assert folded is not None and folded.as_row() == await _row(pool, "jobs", job["id"])
    listed = (await api.get("/v1/jobs", headers=team.auth)).json()["items"]
    assert [(j["schedule"], j["schedule_text"]) for j in listed] == [("0 12 * * *", None)]


async def test_a_canonical_job_has_no_words(api: AsyncTestClient, team: Team) -> None:
    r = await api.post("/v1/jobs", headers=team.auth, json={**JOB, "schedule": "@every 90s"})
    assert r.status_code == 201, r.text
    assert (r.json()["schedule"], r.json()["schedule_text"]) == ("@every 90s", None)


async def _counts(pool: ConnectionPool, team: Team) -> tuple[int, int]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT (SELECT count(*) FROM jobs WHERE team_id = %(t)s) "
            "+ (SELECT count(*) FROM monitors WHERE team_id = %(t)s) AS rows, "
            "(SELECT count(*) FROM events WHERE team_id = %(t)s) AS events",
            {"t": team.actor.team_id})
        row = await cur.fetchone()
    return row["rows"], row["events"]


@pytest.mark.parametrize(("path", "body"), [
    ("/v1/jobs", {**JOB, "schedule": "every dya at 9am"}),
    ("/v1/monitors", {"name": "m", "schedule": "every dya at 9am"}),
])
async def test_a_phrase_that_cannot_be_read_is_422_and_changes_nothing(
    api: AsyncTestClient, team: Team, pool: ConnectionPool, path: str,
    body: dict[str, Any],
) -> None:
    before = await _counts(pool, team)
    r = await api.post(path, headers=team.auth, json=body)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    [error] = r.json()["errors"]
    assert error["field"] == "schedule"
    assert "'dya'" in error["message"] and "'every day at 9am'" in error["message"]
    assert await _counts(pool, team) == before


async def test_a_monitor_in_words(api: AsyncTestClient, team: Team,
                                  pool: ConnectionPool) -> None:
    r = await api.post("/v1/monitors", headers=team.auth,
                       json={"name": "backup", "schedule": "toutes les 15 minutes"})
    assert r.status_code == 201, r.text
    monitor = r.json()
    assert (monitor["schedule"], monitor["schedule_text"]) == ("*/15 * * * *",
                                                               "toutes les 15 minutes")
    assert monitor["schedule_description"] == "Every 15 minutes"
    url = f"/v1/monitors/{monitor['id']}"
    r = await api.patch(url, headers=team.auth, json={"grace_seconds": 60})
    assert r.json()["schedule_text"] == "toutes les 15 minutes"
    r = await api.patch(url, headers=team.auth, json={"schedule": "every 90 minutes"})
    body = r.json()
    assert (body["schedule"], body["schedule_text"]) == ("@every 1h30m", "every 90 minutes")
    stream = await _stream(pool, monitor["id"], team, "monitor")
    assert stream[0]["data"]["schedule_text"] == "toutes les 15 minutes"
    state = fold_monitor(stream)
    assert state is not None and state.schedule_text == "every 90 minutes"
    assert (await _row(pool, "monitors", monitor["id"]))["schedule_text"] == "every 90 minutes"
    r = await api.patch(url, headers=team.auth, json={"schedule": "@every 5m"})
    assert r.json()["schedule_text"] is None


async def test_the_rebuild_keeps_the_words(fresh_pool: ConnectionPool) -> None:
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    actor = await new_actor(fresh_pool)
    job_id = await add_job(fresh_pool, actor, now, "http://127.0.0.1:9/x",
                           schedule="every weekday at 9am")
    monitor_id, _ = await add_monitor(fresh_pool, actor, now, schedule="chaque lundi à 8h")
    await update_monitor(fresh_pool, actor, monitor_id, {"grace_seconds": 60}, now)
    async with fresh_pool.connection() as conn:
        await conn.execute("UPDATE jobs SET schedule_text = 'damaged'")
        await conn.execute("UPDATE monitors SET schedule_text = NULL")
        await conn.commit()
    await rebuild(fresh_pool, now)
    job = await _row(fresh_pool, "jobs", str(job_id))
    monitor = await _row(fresh_pool, "monitors", str(monitor_id))
    assert (job["schedule"], job["schedule_text"]) == ("0 9 * * 1-5", "every weekday at 9am")
    assert (monitor["schedule"], monitor["schedule_text"]) == ("0 8 * * 1", "chaque lundi à 8h")


async def test_parse_answers_the_reading_and_the_next_fires(
    frozen_api: AsyncTestClient, team: Team,
) -> None:
    r = await frozen_api.post("/v1/schedules/parse", headers=team.auth, json={
        "text": "le premier lundi du mois à 10h", "timezone": "Europe/Paris", "count": 3})
    assert r.status_code == 200, r.text
    assert r.json() == {
        "schedule": "0 10 * * 1#1", "schedule_text": "le premier lundi du mois à 10h",
        "kind": "cron", "language": "fr", "timezone": "Europe/Paris",
        "description": "At 10:00 AM, on the first Monday of the month (Europe/Paris)",
        "fires": [  # from the frozen clock, 2026-11-30T12:00Z
            {"at": "2026-12-07T09:00:00Z", "local": "2026-12-07T10:00:00+01:00", "dst": None},
            {"at": "2027-01-04T09:00:00Z", "local": "2027-01-04T10:00:00+01:00", "dst": None},
            {"at": "2027-02-01T09:00:00Z", "local": "2027-02-01T10:00:00+01:00", "dst": None},
        ]}
    r = await frozen_api.post("/v1/schedules/parse", headers=team.auth,
                              json={"text": "every 90 minutes"})
    body = r.json()
    assert (body["schedule"], body["kind"], body["language"]) == ("@every 1h30m", "interval",
                                                                  "en")
    assert [f["at"] for f in body["fires"]][:2] == ["2026-11-30T13:30:00Z",
                                                    "2026-11-30T15:00:00Z"]
    r = await frozen_api.post("/v1/schedules/parse", headers=team.auth,
                              json={"text": "30 2 * * *"})
    assert (r.json()["schedule"], r.json()["schedule_text"], r.json()["language"]) == (
        "30 2 * * *", None, None)


@pytest.mark.parametrize(("body", "status", "field", "word"), [
    ({"text": "at 25h"}, 422, "text", "'25h'"),
    ({"text": "every 0 minutes"}, 422, "text", "'0'"),
    ({"text": "the 32nd"}, 422, "text", "'32nd'"),
    ({"text": "tous les jours à 9h", "timezone": "Mars/Base"}, 422, "timezone", "Mars/Base"),
    ({"text": ""}, 422, "text", "must not be empty"),
    ({"text": "every day", "count": 0}, 422, "count", "must be at least 1"),
    ({"text": "every day", "extra": 1}, 422, "extra", "is not a field of this object"),
    ({}, 422, "text", "is required"),
    ({"text": 5}, 422, "text", "must be a string, not a whole number"),
])
async def test_parse_rejects_what_it_cannot_read(
    api: AsyncTestClient, team: Team, body: dict[str, Any], status: int, field: str | None,
    word: str | None,
) -> None:
    r = await api.post("/v1/schedules/parse", headers=team.auth, json=body)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    if field:
        [error] = r.json()["errors"]
        assert error["field"] == field and word in error["message"]


async def test_parse_needs_a_write_key(api: AsyncTestClient, team: Team) -> None:
    r = await api.post("/v1/schedules/parse", json={"text": "every day"})
    assert r.status_code == 401
    r = await api.post("/v1/schedules/parse", headers=team.read_auth,
                       json={"text": "every day"})
    assert r.status_code == 403


async def test_preview_reads_words(api: AsyncTestClient, team: Team) -> None:
    r = await api.get("/v1/schedules/preview", headers=team.read_auth, params={
        "schedule": "every day at 9am", "timezone": "America/New_York",
        "after": "2024-03-09T12:00:00Z", "count": 2})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["schedule"], body["schedule_text"]) == ("0 9 * * *", "every day at 9am")
    assert [f["at"] for f in body["fires"]] == ["2024-03-09T14:00:00Z", "2024-03-10T13:00:00Z"]
    r = await api.get("/v1/schedules/preview", headers=team.read_auth,
                      params={"schedule": "every day at 25h"})
    assert r.status_code == 422 and "'25h'" in r.json()["errors"][0]["message"]
    r = await api.get("/v1/schedules/preview", headers=team.read_auth,
                      params={"schedule": "@hourly"})
    assert r.json()["schedule_text"] is None


async def test_the_same_schedule_in_words_keeps_the_pending_slot(
    api: AsyncTestClient, team: Team,
) -> None:
    r = await api.post("/v1/jobs", headers=team.auth, json={**JOB, "schedule": "@every 1h"})
    job = r.json()
    r = await api.patch(f"/v1/jobs/{job['id']}", headers=team.auth,
                        json={"schedule": "every hour"})
    assert r.status_code == 200, r.text
    # "every hour" reads as cron 0 * * * *, a new schedule: re-anchored, slot recomputed
    assert r.json()["schedule"] == "0 * * * *"
    r = await api.patch(f"/v1/jobs/{job['id']}", headers=team.auth,
                        json={"schedule": "every 90 minutes"})
    anchored = r.json()["next_run_at"]
    r = await api.patch(f"/v1/jobs/{job['id']}", headers=team.auth,
                        json={"schedule": "toutes les 90 minutes"})
    body = r.json()
    assert (body["schedule"], body["schedule_text"]) == ("@every 1h30m", "toutes les 90 minutes")
    assert body["next_run_at"] == anchored  # same interval: not re-anchored at this PATCH
