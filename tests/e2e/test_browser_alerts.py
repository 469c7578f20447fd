"""Alert rules and alerts in a real Chromium (Debian's ``chromium``, Playwright): a job's
``alert_on`` and failure tolerance and a monitor's tolerance, run-time bounds and keywords
edited in their forms (a refused value shows the form again with the API's message at its
field), the Alerts page reached from a monitor's page, newest first, and an alert's
explanation. The app runs in-process on the frozen clock (the fixtures of
test_dashboard_browser.py); pings go to its real /ping route.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from playwright.async_api import Browser, expect

from core.actor import Actor
from core.clock import FrozenClock
from core.db import ConnectionPool
from core.jobs.commands import create_job
from core.jobs.queries import get_job
from core.monitors.queries import get_monitor
from tests.e2e.test_dashboard_browser import _sign_in, browser, keys, site  # noqa: F401

SLACK = {"kind": "slack", "url": "https://hooks.slack.com/services/T0/B0/x"}


async def test_a_jobs_alert_rules_are_edited_and_a_refused_value_shows_the_form_again(
        browser: Browser, site: str, keys: dict[str, Any],  # noqa: F811
        fresh_pool: ConnectionPool, clock: FrozenClock) -> None:
    actor = Actor(team_id=keys["team_id"])
    job_id = await create_job(fresh_pool, actor, {
        "name": "daily report", "schedule": "0 6 * * *",
        "request": {"url": "https://example.com/report"}}, clock.now())
    context = await browser.new_context()
    page = await context.new_page()
    await _sign_in(page, site, keys["write"])
    await page.goto(f"{site}/ui/jobs/{job_id}")
    await page.get_by_role("link", name="Edit").click()
    await expect(page.get_by_role("group", name="Also alert when a slot did not run")
                 ).to_be_visible()
    await page.get_by_label("missed").check()
    await page.get_by_label("held").check()
    await page.get_by_label("Alert after failures").fill("0")
    await page.get_by_role("button", name="Save").click()
    await expect(page.locator("#err-alert_after_failures")).to_have_text(
        "must be an integer between 1 and 1000")
    await expect(page.get_by_label("Alert after failures")).to_have_attribute(
        "aria-invalid", "true")
    await expect(page.get_by_label("missed")).to_be_checked()  # what was ticked stays
    await expect(page.get_by_label("skipped")).not_to_be_checked()
    await page.get_by_label("Alert after failures").fill("3")
    await page.get_by_label("Recover after successes").fill("2")
    await page.get_by_label("Longest run").fill("1h")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status", name="Notice")).to_contain_text("saved")
    await expect(page.get_by_text("at most 60 min")).to_be_visible()
    await expect(page.get_by_text("after 3 failed run(s) in a row, recovered after 2 good "
                                  "run(s) in a row; also when a slot is missed, held")
                 ).to_be_visible()
    job = await get_job(fresh_pool, actor, job_id)
    assert job["alert_on"] == ["missed", "held"] and job["alert_after_failures"] == 3
    assert job["recover_after_successes"] == 2 and job["max_duration"] == 3600
    await page.get_by_role("link", name="Alerts of this job").click()
    await expect(page.get_by_role("status")).to_contain_text(
        "Showing the alerts of job daily report")
    await expect(page.get_by_text("No alerts of this job yet.")).to_be_visible()
    await context.close()


async def test_a_monitors_alert_rules_are_edited_and_a_refused_bound_is_shown_at_its_field(
        browser: Browser, site: str, keys: dict[str, Any],  # noqa: F811
        fresh_pool: ConnectionPool) -> None:
    context = await browser.new_context()
    page = await context.new_page()
    await _sign_in(page, site, keys["write"])
    await page.goto(f"{site}/ui/monitors/new")
    await page.get_by_label("Name").fill("nightly sync")
    await page.get_by_label("Schedule").fill("1h")
    await page.get_by_label("Alert after failures").fill("3")
    await page.get_by_label("Recover after successes").fill("2")
    await page.get_by_label("Shortest run").fill("1h")
    await page.get_by_label("Longest run").fill("30m")
    await page.get_by_label("Failure keywords").fill("ERROR, disk full")
    await page.get_by_role("button", name="Create monitor").click()
    await expect(page.locator("#min_duration-error")).to_have_text(
        "must be less than max_duration (1800 s)")
    await expect(page.get_by_label("Shortest run")).to_have_value("1h")
    await expect(page.get_by_label("Failure keywords")).to_have_value("ERROR, disk full")
    await page.get_by_label("Longest run").fill("2h")
    await page.get_by_role("button", name="Create monitor").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("nightly sync")
    await expect(page.get_by_text("after 3 failure(s) in a row; up again after 2 good "
                                  "ping(s)")).to_be_visible()
    await expect(page.get_by_text("at least 60 min, at most 2.0 h")).to_be_visible()
    await expect(page.locator("code.keyword")).to_have_text(["ERROR", "disk full"])

    await page.get_by_role("link", name="Edit").click()
    await expect(page.get_by_label("Recover after successes")).to_have_value("2")
    await page.get_by_label("Recover after successes").fill("1001")
    await page.get_by_role("button", name="Save").click()
    await expect(page.locator("#recover_after_successes-error")).to_have_text(
        "must be an integer between 1 and 1000")
    await page.get_by_label("Recover after successes").fill("1")
    await page.get_by_label("Shortest run").fill("")
    await page.get_by_label("Failure keywords").fill("FATAL")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status", name="Notice")).to_contain_text("saved")
    await expect(page.get_by_text("at most 2.0 h")).to_be_visible()
    monitor_id = page.url.rsplit("/", 1)[1]
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT min_duration, max_duration, failure_keywords, "
                                 "recover_after_successes FROM monitors WHERE id = %s",
                                 (monitor_id,))
        assert await cur.fetchone() == {"min_duration": None, "max_duration": 7200,
                                        "failure_keywords": ["FATAL"],
                                        "recover_after_successes": 1}
    await context.close()


async def test_the_alerts_of_a_monitor_newest_first_and_one_explained(
        browser: Browser, site: str, keys: dict[str, Any],  # noqa: F811
        fresh_pool: ConnectionPool, clock: FrozenClock) -> None:
    auth = {"Authorization": f"Bearer {keys['write']}"}
    async with httpx.AsyncClient(base_url=site, headers=auth) as api:
        channel = (await api.post("/v1/channels", json={"name": "ops", **SLACK})).json()
        monitor = (await api.post("/v1/monitors", json={
            "name": "backup", "schedule": "1h", "timezone": "Europe/Paris",
            "grace_seconds": 60, "channels": [channel["id"]]})).json()
        t0 = clock.now()
        for minutes, suffix in ((1, ""), (2, "/fail"), (3, ""), (4, "/3")):
            clock.set(t0 + timedelta(minutes=minutes))
            assert (await api.get(f"/ping/{monitor['ping_token']}{suffix}")).status_code == 200
    actor = Actor(team_id=keys["team_id"])
    assert (await get_monitor(fresh_pool, actor, monitor["id"]))["status"] == "down"

    context = await browser.new_context()
    page = await context.new_page()
    await _sign_in(page, site, keys["read"])
    await page.goto(f"{site}/ui/monitors/{monitor['id']}")
    await expect(page.get_by_text("to ops, after 1 failure(s) in a row")).to_be_visible()
    await page.get_by_role("link", name="Alerts of this monitor").click()
    await expect(page.get_by_role("heading", name="Alerts")).to_be_visible()
    rows = page.locator("tr[data-alert]")
    await expect(rows).to_have_count(3)
    await expect(rows.locator(".badge")).to_have_text(["down", "up", "down"])  # newest first
    await expect(rows.first.get_by_role("cell", name="fail")).to_be_visible()
    await rows.first.get_by_role("link", name="Why this alert").click()
    await expect(page.get_by_role("heading", name="Why it fired")).to_be_visible()
    await expect(page.locator("p.why")).to_have_text("It reported a failure (exit status 3).")
    await expect(page.get_by_text("no window held it")).to_be_visible()
    await expect(page.get_by_role("heading", name="The monitor as it was then")).to_be_visible()
    await expect(page.get_by_text("Europe/Paris")).to_be_visible()
    around = page.locator("table.around tr[data-event]")
    await expect(around.last).to_contain_text("down (was up): fail")
    await expect(page.get_by_text("ping: fail, exit status 3")).to_be_visible()
    await page.get_by_role("link", name="monitor backup").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("backup")
    await context.close()


async def test_depends_on_is_picked_by_name_and_a_cycle_is_refused_at_the_field(
        browser: Browser, site: str, keys: dict[str, Any],  # noqa: F811
        fresh_pool: ConnectionPool, clock: FrozenClock) -> None:
    actor = Actor(team_id=keys["team_id"])
    auth = {"Authorization": f"Bearer {keys['write']}"}
    async with httpx.AsyncClient(base_url=site, headers=auth) as api:
        router = (await api.post("/v1/monitors", json={"name": "router",
                                                       "schedule": "5m"})).json()
    job_id = await create_job(fresh_pool, actor, {
        "name": "nightly export", "schedule": "0 2 * * *",
        "request": {"url": "https://example.com/export"}}, clock.now())
    context = await browser.new_context()
    page = await context.new_page()
    await _sign_in(page, site, keys["write"])
    # a monitor's form: its parents by name, a monitor's and a job's
    await page.goto(f"{site}/ui/monitors/new")
    await page.get_by_label("Name").fill("backup")
    await page.get_by_label("Schedule").fill("1h")
    await page.get_by_label("Depends on").fill("router\nnobody")
    await page.get_by_role("button", name="Create monitor").click()
    await expect(page.locator("#depends_on-error")).to_have_text(
        "no monitor or job named 'nobody' in this team")
    await expect(page.get_by_label("Depends on")).to_have_value("router\nnobody")
    await page.get_by_label("Depends on").fill("router\nnightly export")
    await page.get_by_role("button", name="Create monitor").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("backup")
    held = page.get_by_role("definition").filter(has_text="held while")
    await expect(held).to_contain_text("held while monitor router or job nightly export is down")
    await expect(held.get_by_role("link", name="monitor router")).to_have_attribute(
        "href", f"/ui/monitors/{router['id']}")
    await expect(held.get_by_role("link", name="job nightly export")).to_have_attribute(
        "href", f"/ui/jobs/{job_id}")
    backup_id = page.url.rsplit("/", 1)[1]
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT depends_on FROM monitors WHERE id = %s", (backup_id,))
        assert [str(p) for p in (await cur.fetchone())["depends_on"]] == [  # type: ignore[index]
            router["id"], str(job_id)]
    await page.get_by_role("link", name="Edit").click()
    await expect(page.get_by_label("Depends on")).to_have_value("router\nnightly export")

    # the router made to depend on backup: the core's cycle message at the monitor's field
    await page.goto(f"{site}/ui/monitors/{router['id']}/edit")
    await page.get_by_label("Depends on").fill("backup")
    await page.get_by_role("button", name="Save").click()
    await expect(page.locator("#depends_on-error")).to_have_text(
        "would make a cycle: monitor 'router' -> monitor 'backup' -> monitor 'router'")
    await expect(page.get_by_label("Depends on")).to_have_attribute("aria-invalid", "true")
    await expect(page.get_by_label("Depends on")).to_have_value("backup")

    # a job's form: a cycle through the monitor, then a parent by name, saved and shown
    await page.goto(f"{site}/ui/jobs/{job_id}/edit")
    await page.get_by_label("Depends on").fill("backup")
    await page.get_by_role("button", name="Save").click()
    await expect(page.locator("#err-depends_on")).to_have_text(
        "would make a cycle: job 'nightly export' -> monitor 'backup' -> job 'nightly export'")
    await expect(page.get_by_label("Depends on")).to_have_attribute("aria-invalid", "true")
    await page.get_by_label("Depends on").fill("router")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("status", name="Notice")).to_contain_text("saved")
    held = page.get_by_role("definition").filter(has_text="held while")
    await expect(held).to_contain_text("held while monitor router is down")
    await held.get_by_role("link", name="monitor router").click()
    await expect(page.get_by_role("heading", level=1)).to_have_text("router")
    job = await get_job(fresh_pool, actor, job_id)
    assert [str(p) for p in job["depends_on"]] == [router["id"]]
    await context.close()
