"""systemd calendar events wherever a schedule is accepted (docs/schedules.md, *OnCalendar*):
``/api/v3`` checks (the issue's example: ``Mon..Fri 09:00`` was stored as ``0 9 * * 1,5``),
``/v1`` jobs and monitors, the preview and parse routes and ``apply`` files. Fires are
compared with ``systemd-analyze calendar`` itself."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from litestar.testing import AsyncTestClient

from tests.systemd_calendar import systemd_elapses
from tests.teams import Team

DIGEST = "cd" * 32


def _hc(team: Team) -> dict[str, str]:
    return {"X-Api-Key": team.write, "Content-Type": "application/json"}


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


async def test_hc_check_on_weekdays_is_read_as_systemd_reads_it(api: AsyncTestClient,
                                                                team: Team) -> None:
    r = await api.post("/api/v3/checks/", headers=_hc(team), json={
        "name": "weekday-report", "schedule": "Mon..Fri 09:00", "tz": "Europe/Paris",
        "grace": 3600})
    assert r.status_code == 201, r.text
    check = r.json()
    assert check["schedule"] == "Mon..Fri 09:00" and check["tz"] == "Europe/Paris"
    uuid = check["uuid"]
    got = (await api.get(f"/api/v3/checks/{uuid}", headers=_hc(team))).json()
    assert got["schedule"] == "Mon..Fri 09:00"
    monitor = (await api.get(f"/v1/monitors/{uuid}", headers=team.auth)).json()
    assert monitor["schedule"] == "Mon..Fri 09:00"
    assert "Monday through Friday" in monitor["schedule_description"]
    # the expected pings are systemd's: Tuesday to Thursday included
    after = datetime(2024, 4, 1, 12, tzinfo=UTC)  # a Monday
    preview = (await api.get("/v1/schedules/preview", headers=team.auth, params={
        "schedule": "Mon..Fri 09:00", "timezone": "Europe/Paris",
        "after": "2024-04-01T12:00:00Z", "count": 4})).json()
    assert [_instant(f["at"]) for f in preview["fires"]] == systemd_elapses(
        ["Mon..Fri 09:00"], "Europe/Paris", after, 4)["Mon..Fri 09:00"]
    assert [_instant(f["at"]).weekday() for f in preview["fires"]] == [1, 2, 3, 4]


@pytest.mark.parametrize("schedule", ["*-*-* 02:00:00", "Mon *-*-1..7 09:00", "*-*~01 05:00",
                                      "quarterly", "daily", "Sat,Sun 10:00 UTC",
                                      "Mon..Fri 09:00\nSat 12:00", "mon-fri  9:00"])
async def test_hc_accepts_the_oncalendar_forms(api: AsyncTestClient, team: Team,
                                               schedule: str) -> None:
    r = await api.post("/api/v3/checks/", headers=_hc(team), json={
        "name": f"oc {schedule}", "schedule": schedule, "tz": "America/New_York"})
    assert r.status_code == 201, r.text
    assert r.json()["schedule"] == schedule


@pytest.mark.parametrize(("schedule", "message"), [
    ("Mon..Fri 25:00", "values are 0-23"),
    ("*-02-30", "never fires"),
    ("09:00 EST", "abbreviation of America/New_York"),
])
async def test_hc_refuses_what_it_cannot_read_and_stores_nothing(
        api: AsyncTestClient, team: Team, schedule: str, message: str) -> None:
    r = await api.post("/api/v3/checks/", headers=_hc(team), json={
        "name": "refused", "schedule": schedule, "tz": "America/New_York"})
    assert r.status_code == 400 and message in r.json()["error"], r.text
    listed = (await api.get("/api/v3/checks/", headers=_hc(team))).json()["checks"]
    assert "refused" not in [c["name"] for c in listed]


async def test_job_with_a_calendar_event(api: AsyncTestClient, team: Team) -> None:
    r = await api.post("/v1/jobs", headers=team.auth, json={
        "name": "month-end", "schedule": "*-*~01 05:00", "timezone": "Europe/Paris",
        "request": {"url": "https://example.com/close"}})
    assert r.status_code == 201, r.text
    job = r.json()
    assert job["schedule"] == "*-*~01 05:00" and job["schedule_text"] is None
    assert job["schedule_description"] == "At 05:00, on the last day of the month (Europe/Paris)"
    local = _instant(job["next_run_at"]).astimezone(ZoneInfo("Europe/Paris"))
    assert (local.hour, local.minute) == (5, 0)
    assert local.day == calendar.monthrange(local.year, local.month)[1]
    r = await api.patch(f"/v1/jobs/{job['id']}", headers=team.auth,
                        json={"schedule": "Mon..Fri 25:00"})
    assert r.status_code == 422 and "hour part" in r.text


async def test_parse_route_says_what_a_calendar_event_means(api: AsyncTestClient,
                                                            team: Team) -> None:
    r = await api.post("/v1/schedules/parse", headers=team.auth, json={
        "text": "Mon *-*-1..7 09:00", "timezone": "UTC", "count": 3})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["kind"] == "oncalendar" and body["schedule"] == "Mon *-*-1..7 09:00"
    assert body["schedule_text"] is None and body["language"] is None
    assert body["description"] == "At 09:00, on days 1 through 7 of the month that are a Monday"


async def test_apply_file_with_calendar_events_is_idempotent(api: AsyncTestClient,
                                                             team: Team) -> None:
    document = {"digest": DIGEST, "monitors": [
        {"name": "oc-backup", "schedule": "Mon..Fri 02:00", "timezone": "Europe/Paris"}],
        "jobs": [{"name": "oc-job", "schedule": "quarterly",
                  "request": {"url": "https://example.com/q"}}]}
    r = await api.post("/v1/apply", headers=team.auth, json=document)
    assert r.status_code == 200, r.text
    again = (await api.post("/v1/apply", headers=team.auth, json=document)).json()
    assert {c["action"] for c in again["changes"]} == {"unchanged"}
    exported = (await api.get("/v1/export", headers=team.read_auth)).json()
    assert [m["schedule"] for m in exported["monitors"] if m["name"] == "oc-backup"] == [
        "Mon..Fri 02:00"]


async def test_the_dashboard_form_takes_a_calendar_event(frozen_api: AsyncTestClient,
                                                         team: Team) -> None:
    from tests.integration.test_dashboard_auth import sign_in
    from tests.integration.test_dashboard_pages import _form

    csrf = await sign_in(frozen_api, team.write)
    answer = await frozen_api.post("/ui/jobs/new", follow_redirects=False, data={
        "csrf": csrf, **_form(name="oc-form", schedule="Mon..Fri 09:00")})
    assert answer.status_code == 303, answer.text
    jobs = (await frozen_api.get("/v1/jobs", headers=team.auth)).json()["items"]
    [job] = [j for j in jobs if j["name"] == "oc-form"]
    assert job["schedule"] == "Mon..Fri 09:00"
    page = await frozen_api.get(f"/ui/jobs/{job['id']}")
    assert "Monday through Friday" in page.text
    preview = await frozen_api.get("/ui/schedules/preview",
                                   params={"schedule": "*-*~01 05:00", "timezone": "UTC"})
    assert preview.status_code == 200 and preview.text.count("<li>") == 10
    bad = await frozen_api.post("/ui/jobs/new", data={
        "csrf": csrf, **_form(name="oc-bad", schedule="Mon..Fri 25:00")})
    assert bad.status_code == 422 and "values are 0-23" in bad.text
