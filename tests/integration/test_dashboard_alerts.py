"""Alert rules in the dashboard: the job form's ``alert_on``, the monitor form's failure
tolerance, run-time bounds and keywords (the API's messages at their fields, 422), the
monitor's channels by name, and the Alerts pages (the list, newest first, of one job or
monitor, and an alert explained): api/ui/pages/alerts.py, api/ui/pages/monitors.py,
api/ui/jobform.py."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta
from typing import Any

from litestar.testing import AsyncTestClient

from core.clock import FrozenClock
from core.jobs.queries import get_job
from core.monitors.queries import get_monitor
from tests.integration.test_dashboard_auth import sign_in
from tests.teams import Team

SLACK = {"kind": "slack", "url": "https://hooks.slack.com/services/T0/B0/x"}
MONITOR_ID = re.compile(r"/ui/monitors/([0-9a-f-]{36})")


async def _monitor_with_alerts(api: AsyncTestClient, team: Team,
                               clock: FrozenClock) -> tuple[dict[str, Any], str]:
    """A monitor in Europe/Paris listing channel "ops", pinged ok, /fail, ok, /3: three
    alerts (down, up, down); its body and the channel's id."""
    r = await api.post("/v1/channels", headers=team.auth, json={"name": "ops", **SLACK})
    channel = r.json()["id"]
    r = await api.post("/v1/monitors", headers=team.auth, json={
        "name": "backup à 3h", "schedule": "1h", "timezone": "Europe/Paris",
        "grace_seconds": 60, "channels": [channel]})
    monitor = r.json()
    t0 = clock.now()
    for minutes, suffix in ((1, ""), (2, "/fail"), (3, ""), (4, "/3")):
        clock.set(t0 + timedelta(minutes=minutes))
        assert (await api.get(f"/ping/{monitor['ping_token']}{suffix}")).status_code == 200
    return monitor, channel


async def test_the_alerts_page_lists_newest_first_filters_and_explains(
        frozen_api: AsyncTestClient, team: Team, clock: FrozenClock) -> None:
    monitor, channel = await _monitor_with_alerts(frozen_api, team, clock)
    await sign_in(frozen_api, team.read)  # reading them needs no write key

    page = await frozen_api.get("/ui/alerts")
    assert page.status_code == 200
    rows = re.findall(r'<tr data-alert="([0-9a-f-]{36})"', page.text)
    assert len(rows) == 3
    listed = (await frozen_api.get("/v1/alerts", headers=team.auth)).json()["items"]
    assert rows == [a["id"] for a in listed]  # newest first, as the API
    assert "backup à 3h" in page.text and f'href="/ui/monitors/{monitor["id"]}"' in page.text
    assert page.text.count('class="badge badge-down"') == 2

    of = await frozen_api.get(f"/ui/alerts?monitor={monitor['id']}")
    assert len(re.findall(r"<tr data-alert=", of.text)) == 3
    assert "Showing the alerts of" in of.text
    none = await frozen_api.get(f"/ui/alerts?job={uuid.uuid4()}")
    assert none.status_code == 200 and "<tr data-alert=" not in none.text
    bad = await frozen_api.get("/ui/alerts?monitor=nope")
    assert bad.status_code in (400, 422) and "monitor" in bad.text
    assert (await frozen_api.get("/ui/alerts?cursor=zz")).status_code in (400, 422)

    # the monitor's page links to its alerts and names its channel
    mon = await frozen_api.get(f"/ui/monitors/{monitor['id']}")
    assert f'href="/ui/alerts?monitor={monitor["id"]}"' in mon.text
    assert re.search(r"<dt>Alerts</dt><dd>to ops,", mon.text)

    why = await frozen_api.get(f"/ui/alerts/{rows[0]}")
    assert why.status_code == 200
    assert "It reported a failure (exit status 3)." in why.text
    assert "<code>monitor.down</code>, reason <code>fail</code>" in why.text
    assert "Europe/Paris" in why.text  # the definition as it was
    assert "no window held it" in why.text and "none considered" in why.text
    assert "ping: fail, exit status 3" in why.text
    assert re.search(r'data-event="monitor.down"', why.text)
    assert "<dt><code>channels</code></dt><dd>ops</dd>" in why.text  # named; a read key: no link
    assert channel not in why.text.split("What the rule recorded")[0]
    assert (await frozen_api.get(f"/ui/alerts/{uuid.uuid4()}")).status_code == 404


async def test_an_overdue_alert_shows_its_slot_in_the_zone_grace_and_deadline(
        frozen_api: AsyncTestClient, team: Team, clock: FrozenClock) -> None:
    from core.monitors.checker import Checker  # the real checker decides it is overdue

    r = await frozen_api.post("/v1/channels", headers=team.auth, json={"name": "ops", **SLACK})
    r = await frozen_api.post("/v1/monitors", headers=team.auth, json={
        "name": "nightly", "schedule": "0 3 * * *", "timezone": "America/New_York",
        "grace_seconds": 900, "channels": [r.json()["id"]]})
    monitor = r.json()
    clock.set(clock.now().replace(hour=8, minute=0, second=5))
    assert (await frozen_api.get(f"/ping/{monitor['ping_token']}")).status_code == 200
    clock.advance(timedelta(days=1, minutes=20).total_seconds())
    checker = Checker(frozen_api.app.state.pool, "", clock)
    await checker.run_once(clock.now())
    await sign_in(frozen_api, team.write)
    page = await frozen_api.get(f"/ui/alerts?monitor={monitor['id']}")
    [alert_id] = re.findall(r'<tr data-alert="([0-9a-f-]{36})"', page.text)
    why = await frozen_api.get(f"/ui/alerts/{alert_id}")
    assert "No ping arrived in time" in why.text
    assert "in America/New_York: <code>" in why.text and "T03:00:00-05:00" in why.text
    assert "<dt>Grace</dt><dd>15 min</dd>" in why.text
    assert "<dt>Deadline</dt>" in why.text


async def test_a_jobs_alert_on_is_edited_in_its_form_and_shown_on_its_page(
        frozen_api: AsyncTestClient, team: Team, pool: Any) -> None:
    csrf = await sign_in(frozen_api, team.write)
    form = {"csrf": csrf, "name": "report", "schedule": "0 6 * * *", "timezone": "UTC",
            "request.method": "GET", "request.url": "https://example.com/report",
            "timeout_seconds": "30", "retry.attempts": "1", "retry.backoff": "exponential",
            "retry.delay_seconds": "10", "retry.max_delay_seconds": "60", "overlap": "skip",
            "catchup": "latest", "alert_after_failures": "1", "alert_on": ["skipped", "held"]}
    r = await frozen_api.post("/ui/jobs/new", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text
    job_id = uuid.UUID(r.headers["location"].rsplit("/", 1)[1])
    assert (await get_job(pool, team.actor, job_id))["alert_on"] == ["skipped", "held"]
    edit = await frozen_api.get(f"/ui/jobs/{job_id}/edit")
    assert re.search(r'value="skipped" checked', edit.text)
    assert re.search(r'value="held" checked', edit.text)
    assert not re.search(r'value="missed" checked', edit.text)
    version = re.search(r'name="version" value="(\d+)"', edit.text).group(1)  # type: ignore[union-attr]
    # a 422 shows the form again with the API's message at its field, the boxes as ticked
    bad = await frozen_api.post(f"/ui/jobs/{job_id}/edit", data={
        **form, "version": version, "alert_on": ["missed", "sometimes"],
        "alert_after_failures": "0"})
    assert bad.status_code == 422
    assert "unknown reason &#39;sometimes&#39;" in bad.text
    assert re.search(r'id="err-alert_after_failures">must be an integer between 1 and 1000',
                     bad.text)
    assert re.search(r'value="missed" checked', bad.text)
    ok = await frozen_api.post(f"/ui/jobs/{job_id}/edit", data={
        **form, "version": version, "alert_on": "missed", "alert_after_failures": "3"},
        follow_redirects=False)
    assert ok.status_code == 303, ok.text
    job = await get_job(pool, team.actor, job_id)
    assert job["alert_on"] == ["missed"] and job["alert_after_failures"] == 3
    page = await frozen_api.get(f"/ui/jobs/{job_id}")
    assert "after 3 failed run(s) in a row" in page.text
    assert "also when a slot is missed" in page.text
    assert f'href="/ui/alerts?job={job_id}"' in page.text
    cleared = await frozen_api.post(f"/ui/jobs/{job_id}/edit", data={
        **{k: v for k, v in form.items() if k != "alert_on"}, "version": str(job["version"])},
        follow_redirects=False)
    assert cleared.status_code == 303
    assert (await get_job(pool, team.actor, job_id))["alert_on"] == []


async def test_a_monitors_alert_rules_are_edited_with_the_apis_messages(
        frozen_api: AsyncTestClient, team: Team, pool: Any) -> None:
    csrf = await sign_in(frozen_api, team.write)
    new = await frozen_api.get("/ui/monitors/new")
    assert 'id="alert_after_failures"' in new.text and 'id="failure_keywords"' in new.text
    form = {"csrf": csrf, "name": "sync", "schedule": "1h", "alert_after_failures": "3",
            "recover_after_successes": "2", "min_duration": "30s", "max_duration": "600",
            "realert_every": "2h", "failure_keywords": "ERROR, FATAL ,, disk full",
            "success_keywords": "", "start_keywords": "begin"}
    r = await frozen_api.post("/ui/monitors/new", data=form, follow_redirects=False)
    assert r.status_code == 303, r.text
    monitor_id = uuid.UUID(MONITOR_ID.fullmatch(r.headers["location"]).group(1))  # type: ignore[union-attr]
    monitor = await get_monitor(pool, team.actor, monitor_id)
    assert (monitor["alert_after_failures"], monitor["recover_after_successes"]) == (3, 2)
    assert (monitor["min_duration"], monitor["max_duration"]) == (30, 600)
    assert monitor["realert_every"] == 7200
    assert monitor["failure_keywords"] == ["ERROR", "FATAL", "disk full"]
    assert monitor["success_keywords"] == [] and monitor["start_keywords"] == ["begin"]
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert "after 3 failure(s) in a row; up again after 2 good ping(s)" in page.text
    assert "at least 30.0 s, at most 10 min" in page.text
    assert '<code class="keyword">disk full</code>' in page.text

    edit = await frozen_api.get(f"/ui/monitors/{monitor_id}/edit")
    assert 'value="ERROR, FATAL, disk full"' in edit.text and 'value="600"' in edit.text
    version = re.search(r'name="version" value="(\d+)"', edit.text).group(1)  # type: ignore[union-attr]
    bad = await frozen_api.post(f"/ui/monitors/{monitor_id}/edit", data={
        **form, "version": version, "alert_after_failures": "0", "min_duration": "1h",
        "max_duration": "30m", "failure_keywords": "x" * 201})
    assert bad.status_code == 422
    assert re.search(r'id="alert_after_failures-error">must be an integer between 1 and 1000',
                     bad.text)
    assert re.search(r'id="min_duration-error">must be less than max_duration \(1800 s\)',
                     bad.text)
    assert re.search(r'id="failure_keywords-error">must be 1 to 200 characters', bad.text)
    assert 'value="1h"' in bad.text  # what was typed stays
    assert (await get_monitor(pool, team.actor, monitor_id))["version"] == int(version)
    # emptied: no bounds, no keywords, no re-alerts, a tolerance of 1
    ok = await frozen_api.post(f"/ui/monitors/{monitor_id}/edit", data={
        "csrf": csrf, "version": version, "name": "sync", "schedule": "1h"},
        follow_redirects=False)
    assert ok.status_code == 303, ok.text
    monitor = await get_monitor(pool, team.actor, monitor_id)
    assert (monitor["alert_after_failures"], monitor["recover_after_successes"]) == (1, 1)
    assert monitor["min_duration"] is None and monitor["max_duration"] is None
    assert monitor["failure_keywords"] == [] and monitor["realert_every"] is None


async def test_depends_on_is_written_as_names_and_the_apis_messages_come_back(
        frozen_api: AsyncTestClient, team: Team, pool: Any) -> None:
    csrf = await sign_in(frozen_api, team.write)
    auth = team.auth
    router = (await frozen_api.post("/v1/monitors", headers=auth, json={
        "name": "router", "schedule": "5m"})).json()
    await frozen_api.post("/v1/monitors", headers=auth, json={"name": "db", "schedule": "5m"})
    job = (await frozen_api.post("/v1/jobs", headers=auth, json={
        "name": "db", "schedule": "@every 1h",
        "request": {"url": "https://example.com/"}})).json()
    form = {"csrf": csrf, "name": "backup", "schedule": "1h", "depends_on": "router\nnobody"}
    bad = await frozen_api.post("/ui/monitors/new", data=form)
    assert bad.status_code == 422
    assert "no monitor or job named &#39;nobody&#39; in this team" in bad.text
    both = await frozen_api.post("/ui/monitors/new", data={**form, "depends_on": "db"})
    assert both.status_code == 422 and "is both a monitor and a job" in both.text
    r = await frozen_api.post("/ui/monitors/new", data={
        **form, "depends_on": "router\njob: db"}, follow_redirects=False)
    assert r.status_code == 303, r.text
    monitor_id = uuid.UUID(MONITOR_ID.fullmatch(r.headers["location"]).group(1))  # type: ignore[union-attr]
    monitor = await get_monitor(pool, team.actor, monitor_id)
    assert [str(p) for p in monitor["depends_on"]] == [router["id"], job["id"]]
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert (f'held while <a href="/ui/monitors/{router["id"]}">monitor router</a> or '
            f'<a href="/ui/jobs/{job["id"]}">job db</a> is down') in page.text
    edit = await frozen_api.get(f"/ui/monitors/{monitor_id}/edit")
    assert ">router\njob: db</textarea>" in edit.text
    # the core's rule: a cycle, named, at the field
    r = await frozen_api.get(f"/ui/monitors/{router['id']}/edit")
    version = re.search(r'name="version" value="(\d+)"', r.text).group(1)  # type: ignore[union-attr]
    cycle = await frozen_api.post(f"/ui/monitors/{router['id']}/edit", data={
        "csrf": csrf, "version": version, "name": "router", "schedule": "5m",
        "depends_on": "backup"})
    assert cycle.status_code == 422 and 'id="depends_on-error">would make a cycle' in cycle.text
    # a job's form too
    r = await frozen_api.get(f"/ui/jobs/{job['id']}/edit")
    assert 'id="f-depends_on"' in r.text
    version = re.search(r'name="version" value="(\d+)"', r.text).group(1)  # type: ignore[union-attr]
    fields = {"csrf": csrf, "version": version, "name": "db", "schedule": "@every 1h",
              "timezone": "UTC", "request.method": "GET", "request.url": "https://example.com/",
              "timeout_seconds": "30", "retry.attempts": "1", "retry.backoff": "exponential",
              "retry.delay_seconds": "10", "retry.max_delay_seconds": "60", "overlap": "skip",
              "catchup": "latest", "alert_after_failures": "1"}
    unknown = await frozen_api.post(f"/ui/jobs/{job['id']}/edit",
                                    data={**fields, "depends_on": "nobody"})
    assert unknown.status_code == 422
    assert re.search(r'id="err-depends_on">no monitor or job named', unknown.text)
    saved = await frozen_api.post(f"/ui/jobs/{job['id']}/edit",
                                  data={**fields, "depends_on": "monitor: router"},
                                  follow_redirects=False)
    assert saved.status_code == 303, saved.text
    page = await frozen_api.get(f"/ui/jobs/{job['id']}")
    assert f'held while <a href="/ui/monitors/{router["id"]}">monitor router</a> is down' \
        in page.text


async def test_channels_beyond_the_pickers_list_are_named_and_kept(
        frozen_api: AsyncTestClient, team: Team, pool: Any, clock: FrozenClock,
        monkeypatch: Any) -> None:
    from api.ui import channelform

    monkeypatch.setattr(channelform, "CHOICES", 2)  # the picker lists 2 (200 in production)
    csrf = await sign_in(frozen_api, team.write)
    ids = []
    for n in range(3):  # listed in creation order
        clock.advance(1)
        ids.append((await frozen_api.post("/v1/channels", headers=team.auth, json={
            "name": f"ops {n}", **SLACK})).json()["id"])
    form = await frozen_api.get("/ui/monitors/new")
    assert f'value="{ids[1]}"' in form.text and f'value="{ids[2]}"' not in form.text
    assert 'name="more_channels"' in form.text
    bad = await frozen_api.post("/ui/monitors/new", data={
        "csrf": csrf, "name": "far", "schedule": "1h", "more_channels": "ops 2\nops 9"})
    assert bad.status_code == 422 and "no channel named &#39;ops 9&#39;" in bad.text
    assert ">ops 2\nops 9</textarea>" in bad.text  # what was typed stays
    r = await frozen_api.post("/ui/monitors/new", data={
        "csrf": csrf, "name": "far", "schedule": "1h", "channels": ids[0],
        "more_channels": "ops 2"}, follow_redirects=False)
    assert r.status_code == 303, r.text
    monitor_id = uuid.UUID(MONITOR_ID.fullmatch(r.headers["location"]).group(1))  # type: ignore[union-attr]
    monitor = await get_monitor(pool, team.actor, monitor_id)
    assert [str(c) for c in monitor["channels"]] == [ids[0], ids[2]]
    page = await frozen_api.get(f"/ui/monitors/{monitor_id}")
    assert "to ops 0" in re.sub(r"<[^>]+>", "", page.text)  # named, not ids
    assert "ops 2</a>" in page.text
    edit = await frozen_api.get(f"/ui/monitors/{monitor_id}/edit")
    # the one beyond the list is offered, ticked and named, so a save keeps it
    assert re.search(rf'value="{ids[2]}" checked> ops 2', edit.text)


async def test_a_jobs_recovery_and_run_time_bounds_go_through_its_form(
        frozen_api: AsyncTestClient, team: Team, pool: Any) -> None:
    csrf = await sign_in(frozen_api, team.write)
    form = {"csrf": csrf, "name": "etl", "schedule": "0 6 * * *", "timezone": "UTC",
            "request.method": "GET", "request.url": "https://example.com/etl",
            "timeout_seconds": "30", "retry.attempts": "1", "retry.backoff": "exponential",
            "retry.delay_seconds": "10", "retry.max_delay_seconds": "60", "overlap": "skip",
            "catchup": "latest", "alert_after_failures": "2",
            "recover_after_successes": "3", "min_duration": "1h", "max_duration": "30m"}
    bad = await frozen_api.post("/ui/jobs/new", data=form)
    assert bad.status_code == 422
    assert re.search(r'id="err-min_duration">must be less than max_duration \(1800 s\)',
                     bad.text)
    assert 'value="1h"' in bad.text
    r = await frozen_api.post("/ui/jobs/new", data={**form, "min_duration": "5",
                                                    "max_duration": "30m"},
                              follow_redirects=False)
    assert r.status_code == 303, r.text
    job_id = uuid.UUID(r.headers["location"].rsplit("/", 1)[1])
    job = await get_job(pool, team.actor, job_id)
    assert (job["recover_after_successes"], job["min_duration"], job["max_duration"]) == (
        3, 5, 1800)
    page = await frozen_api.get(f"/ui/jobs/{job_id}")
    assert "recovered after 3 good run(s) in a row" in page.text
    assert "at least 5.0 s, at most 30 min" in page.text
    edit = await frozen_api.get(f"/ui/jobs/{job_id}/edit")
    assert 'id="f-recover_after_successes" name="recover_after_successes" type="text" ' \
           'value="3"' in edit.text
    version = re.search(r'name="version" value="(\d+)"', edit.text).group(1)  # type: ignore[union-attr]
    cleared = await frozen_api.post(f"/ui/jobs/{job_id}/edit", data={
        **form, "version": version, "recover_after_successes": "", "min_duration": "",
        "max_duration": ""}, follow_redirects=False)
    assert cleared.status_code == 303, cleared.text
    job = await get_job(pool, team.actor, job_id)
    assert (job["recover_after_successes"], job["min_duration"], job["max_duration"]) == (
        1, None, None)


async def test_a_note_is_written_on_the_alert_that_opened_an_incident(
        frozen_api: AsyncTestClient, team: Team, clock: FrozenClock) -> None:
    """The alert page of a down alert carries the status pages' note form (a writer's); an
    up alert has none; the note saved is the API's (docs/status-pages.md)."""
    await _monitor_with_alerts(frozen_api, team, clock)
    listed = (await frozen_api.get("/v1/alerts", headers=team.auth)).json()["items"]
    down, up = listed[0]["id"], listed[1]["id"]
    csrf = await sign_in(frozen_api, team.write)
    page = await frozen_api.get(f"/ui/alerts/{down}")
    assert "Note on status pages" in page.text
    assert "Note on status pages" not in (await frozen_api.get(f"/ui/alerts/{up}")).text
    saved = await frozen_api.post(f"/ui/alerts/{down}/note", data={
        "csrf": csrf, "note": "Disk replaced & <checked>."})
    assert saved.status_code == 200 and "Note saved" in saved.text
    assert "Disk replaced &amp; &lt;checked&gt;.</textarea>" in saved.text
    refused = await frozen_api.post(f"/ui/alerts/{up}/note", data={"csrf": csrf, "note": "x"})
    assert "opens no incident" in refused.text
