"""The dashboard in a real Chromium (Debian's ``chromium``, driven by Playwright for Python
without a browser download): sign in, create a job through the form while the preview follows
the schedule, its first run appearing live, Run now, pause and resume, a read key's missing
controls and refused POSTs, a hostile job name rendered as text, sign out.

The app runs in-process under uvicorn on a free port with the frozen clock, and a real worker
on the same clock sends the job's requests to a local sink (docs/dashboard-code.md).
Without chromium these tests are skipped with the install command; with ``CI=true`` they fail.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn
from playwright.async_api import Browser, Page, async_playwright, expect

from api.app import create_app
from api.ui import live
from core.apikeys import create_api_key
from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.jobs.commands import create_job
from core.runs.worker import Worker
from tests.helpers import eventually
from tests.processes import free_port
from tests.sink import Sink

INSTALL = "apt-get install chromium"
HOSTILE = "<img src=x onerror=alert(1)>"
TIMEOUT_MS = 15_000  # what a live region may take to show a change (here: every second)


def chromium_path() -> str:
    """Debian's chromium, or skip (fail with ``CI=true``) naming the install command."""
    path = shutil.which("chromium")
    if path is None:
        message = f"chromium is not installed: {INSTALL}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    executable = chromium_path()
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=executable,
                                                    args=["--no-sandbox"])
        yield launched
        await launched.close()


@pytest.fixture
async def site(fresh_dsn: str, settings: Settings, clock: FrozenClock,
               monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    """The app on a free port (frozen clock, the fresh database); its base URL.

    No projector runs here, so the live regions render every second (the safety interval made
    short): these tests are about what the pages show; tests/e2e/test_live_notify.py is about
    the notifications that make a region render again."""
    monkeypatch.setattr(live, "SAFETY_SECONDS", 1.0)
    port = free_port()
    config = uvicorn.Config(create_app(fresh_dsn, settings, clock), host="127.0.0.1", port=port,
                            log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    await eventually(lambda: server.started or task.done(), what="the app listening")
    assert not task.done(), "the app did not start"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await task


@pytest.fixture
async def keys(fresh_pool: ConnectionPool) -> dict[str, Any]:
    write, record = await create_api_key(fresh_pool, "browser", "write")
    read, _ = await create_api_key(fresh_pool, "browser", "read")
    return {"write": write, "read": read, "team_id": record["team_id"]}


async def _sign_in(page: Page, site: str, key: str) -> None:
    await page.goto(site + "/")
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await page.get_by_label("API key").fill(key)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("heading", name="Overview")).to_be_visible()


async def _tick(worker: Worker, clock: FrozenClock, seconds: float) -> None:
    clock.advance(seconds)
    await worker.run_once()
    await worker.settle()


async def test_create_a_job_watch_it_run_run_now_pause_resume_sign_out(
        browser: Browser, site: str, keys: dict[str, Any], worker: Worker, clock: FrozenClock,
        sink: Sink) -> None:
    context = await browser.new_context()
    page = await context.new_page()
    await _sign_in(page, site, keys["write"])

    await page.get_by_role("link", name="Jobs", exact=True).click()
    await page.get_by_role("link", name="New job").click()
    await page.get_by_label("Name", exact=True).fill("browser job")
    await page.get_by_label("URL").fill(sink.url("/hook"))
    await page.get_by_label("Time zone").fill("Europe/Berlin")
    preview = page.locator("#preview")
    await page.get_by_label("Schedule").press_sequentially("0 3 * * *", delay=20)
    await expect(preview).to_contain_text("At 03:00 AM (Europe/Berlin)")
    await expect(preview.locator("li")).to_have_count(10)
    await page.get_by_label("Schedule").fill("")
    await page.get_by_label("Schedule").press_sequentially("* * * * *", delay=20)
    await expect(preview).to_contain_text("Every minute (Europe/Berlin)")
    await page.get_by_label("Schedule").fill("61 * * * *")
    await expect(preview.locator(".field-error")).to_be_visible()
    await page.get_by_label("Schedule").fill("* * * * *")
    await expect(preview).to_contain_text("Every minute")
    await page.get_by_role("button", name="Create job").click()
    await expect(page.get_by_role("heading", name="browser job")).to_be_visible()
    await expect(page.get_by_text("No runs yet.")).to_be_visible()

    # The first run appears without a reload: the worker fires the slot on the frozen clock,
    # on the job's page and in the overview's newest events (read from the log; its counts
    # come from the projector, whose snapshot horizon a shared server's other databases hold).
    overview = await context.new_page()
    await overview.goto(site + "/")
    await expect(overview.get_by_text("run of browser job")).to_have_count(0)
    await page.evaluate("window.__sameDocument = true")
    await overview.evaluate("window.__sameDocument = true")
    await _tick(worker, clock, 60.1)
    assert len(sink.hits) == 1
    await expect(page.locator('tr[data-run-status="succeeded"]')).to_have_count(
        1, timeout=TIMEOUT_MS)
    assert await page.evaluate("window.__sameDocument") is True
    await expect(overview.get_by_text("run of browser job").first).to_be_visible()
    assert await overview.evaluate("window.__sameDocument") is True
    await overview.close()

    # Run now queues a manual run; the worker sends it.
    await page.get_by_role("button", name="Run now").click()
    await expect(page.get_by_role("cell", name="manual")).to_be_visible()
    await _tick(worker, clock, 0.5)
    await eventually(lambda: len(sink.hits) == 2, what="the manual run's request")
    await expect(page.locator('tr[data-run-status="succeeded"]')).to_have_count(
        2, timeout=TIMEOUT_MS)

    await page.get_by_role("button", name="Pause").click()
    await expect(page.locator(".state-line .badge-paused")).to_be_visible()
    await expect(page.get_by_role("button", name="Pause")).to_have_count(0)
    await page.get_by_role("button", name="Resume").click()
    await expect(page.locator(".state-line .badge-active")).to_be_visible()

    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await page.goto(site + "/ui/jobs")
    await expect(page.get_by_label("API key")).to_be_visible()
    await context.close()


async def test_a_read_key_sees_no_controls_and_its_posts_are_refused(
        browser: Browser, site: str, keys: dict[str, Any], fresh_pool: ConnectionPool,
        clock: FrozenClock) -> None:
    from core.actor import Actor

    actor = Actor(team_id=keys["team_id"])
    job_id = await create_job(fresh_pool, actor, {
        "name": "read me", "schedule": "@every 1h",
        "request": {"url": "https://example.com/"}}, clock.now())
    context = await browser.new_context()
    page = await context.new_page()
    await _sign_in(page, site, keys["read"])
    await page.goto(f"{site}/ui/jobs/{job_id}")
    await expect(page.get_by_role("heading", name="read me")).to_be_visible()
    for name in ("Run now", "Pause", "Resume", "Delete"):
        await expect(page.get_by_role("button", name=name)).to_have_count(0)
    await expect(page.get_by_role("link", name="Edit")).to_have_count(0)
    await page.goto(f"{site}/ui/jobs")
    await expect(page.get_by_role("link", name="New job")).to_have_count(0)

    # A forged POST with this valid read session and its own CSRF token is refused.
    token = await page.locator('form[action="/ui/signout"] input[name=csrf]').get_attribute(
        "value")
    forged = await context.request.post(f"{site}/ui/jobs/{job_id}/pause",
                                        form={"csrf": token or ""}, max_redirects=0)
    assert forged.status == 403
    # A write session's POST without the CSRF token is refused too.
    writer = await browser.new_context()
    write_page = await writer.new_page()
    await _sign_in(write_page, site, keys["write"])
    missing = await writer.request.post(f"{site}/ui/jobs/{job_id}/pause", form={},
                                        max_redirects=0)
    assert missing.status == 403
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT status FROM jobs WHERE id = %s", (job_id,))
        assert (await cur.fetchone())["status"] == "active"
    await writer.close()
    await context.close()


async def test_a_hostile_job_name_renders_as_text(
        browser: Browser, site: str, keys: dict[str, Any], fresh_pool: ConnectionPool,
        clock: FrozenClock) -> None:
    from core.actor import Actor

    job_id = await create_job(fresh_pool, Actor(team_id=keys["team_id"]), {
        "name": HOSTILE, "schedule": "@every 1h",
        "request": {"url": "https://example.com/", "body": "<script>alert(2)</script>"}},
        clock.now())
    page = await browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    await _sign_in(page, site, keys["write"])
    for path in ("/", "/ui/jobs", f"/ui/jobs/{job_id}"):
        await page.goto(site + path)
        await expect(page.get_by_text(HOSTILE).first).to_be_visible()
        assert await page.locator("img[src=x]").count() == 0
    await expect(page.get_by_role("heading", name=HOSTILE)).to_be_visible()
    assert dialogs == []
    await page.close()


async def test_the_form_reads_words_tags_and_a_confirmation_and_keeps_them_on_edit(
        browser: Browser, site: str, keys: dict[str, Any], sink: Sink) -> None:
    context = await browser.new_context()
    page = await context.new_page()
    await _sign_in(page, site, keys["write"])
    await page.goto(site + "/ui/jobs/new")
    await page.get_by_label("Name", exact=True).fill("words job")
    await page.get_by_label("URL").fill(sink.url("/words"))
    await page.get_by_label("Time zone").fill("Europe/Paris")
    preview = page.locator("#preview")
    schedule = page.get_by_label("Schedule")
    # A phrase in English, then in French: the preview shows the cron it reads as.
    await schedule.press_sequentially("every weekday at 9am", delay=10)
    await expect(preview.locator("code.canonical")).to_have_text("0 9 * * 1-5")
    await expect(preview.locator("li")).to_have_count(10)
    await schedule.fill("")
    await schedule.press_sequentially("tous les jours à 9h30", delay=10)
    await expect(preview.locator("code.canonical")).to_have_text("30 9 * * *")
    # A word it cannot read is named in the preview's message.
    await schedule.fill("every blursday at 9am")
    await expect(preview.locator(".field-error")).to_contain_text("blursday")
    await schedule.fill("tous les jours à 9h30")
    await expect(preview.locator("code.canonical")).to_have_text("30 9 * * *")

    # A bad tag is refused next to its field, and the typed values stay in the form.
    await page.get_by_label("Tags").fill("nightly, a/b")
    await page.get_by_label("Confirmation timeout (seconds)").fill("300")
    await page.get_by_role("button", name="Create job").click()
    tags_field = page.locator("#f-tags")
    await expect(tags_field).to_have_attribute("aria-invalid", "true")
    await expect(page.get_by_label("Name", exact=True)).to_have_value("words job")
    await page.get_by_label("Tags").fill("nightly, billing")
    await page.get_by_role("button", name="Create job").click()

    await expect(page.get_by_role("heading", name="words job")).to_be_visible()
    await expect(page.locator("dd.tags .tag")).to_have_text(["nightly", "billing"])
    await expect(page.get_by_text("confirmed by a callback within")).to_be_visible()
    await expect(page.locator(".schedule-text")).to_have_text("tous les jours à 9h30")

    # Edit shows what was saved; saving it unchanged keeps tags, words and confirmation.
    await page.get_by_role("link", name="Edit").click()
    await expect(page.get_by_label("Schedule")).to_have_value("tous les jours à 9h30")
    await expect(page.get_by_label("Tags")).to_have_value("nightly billing")
    await expect(page.get_by_label("Confirmation timeout (seconds)")).to_have_value("300")
    assert await page.get_by_label("Name", exact=True).input_value() == "words job"
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_role("heading", name="words job")).to_be_visible()
    await expect(page.locator("dd.tags .tag")).to_have_text(["nightly", "billing"])
    await context.close()


async def test_switch_between_the_teams_this_browser_signed_in_to(
        browser: Browser, site: str, keys: dict[str, Any], fresh_pool: ConnectionPool,
        clock: FrozenClock) -> None:
    from core.actor import Actor

    await create_job(fresh_pool, Actor(team_id=keys["team_id"]), {
        "name": "browser team's job", "schedule": "@every 1h",
        "request": {"url": "https://example.com/"}}, clock.now())
    ops_key, ops = await create_api_key(fresh_pool, "ops", "write", "ops laptop")
    await create_job(fresh_pool, Actor(team_id=ops["team_id"]), {
        "name": "ops team's job", "schedule": "@every 1h",
        "request": {"url": "https://example.com/"}}, clock.now())
    context = await browser.new_context()
    page = await context.new_page()
    await _sign_in(page, site, keys["write"])
    await expect(page.locator("[data-team]")).to_have_text("browser")
    await page.get_by_role("link", name="Add a team").click()
    await expect(page.get_by_role("note")).to_contain_text("signed in to team browser")
    await page.get_by_label("API key").fill(ops_key)
    await page.get_by_role("button", name="Sign in").click()
    switcher = page.get_by_label("Team")
    await expect(switcher).to_have_value("")
    await expect(switcher.locator("option:checked")).to_have_text("ops (ops laptop)")
    await page.get_by_role("link", name="Jobs", exact=True).click()
    await expect(page.get_by_role("link", name="ops team's job")).to_be_visible()
    await expect(page.get_by_role("link", name="browser team's job")).to_have_count(0)

    await switcher.select_option(label="browser")  # sends the form by itself
    await expect(page.get_by_role("status", name="Notice")).to_have_text(
        "Now showing team “browser”.")
    await expect(page.get_by_label("Team").locator("option:checked")).to_have_text("browser")
    await page.get_by_role("link", name="Jobs", exact=True).click()
    await expect(page.get_by_role("link", name="browser team's job")).to_be_visible()
    await expect(page.get_by_role("link", name="ops team's job")).to_have_count(0)
    held = {c["name"]: c for c in await context.cookies()}
    assert held["cronledger_sessions"]["httpOnly"] and held["cronledger_session"]["httpOnly"]

    await page.get_by_role("button", name="Sign out").click()
    await expect(page.get_by_role("status", name="Notice")).to_contain_text(
        "now showing team “ops”")
    await expect(page.locator("[data-team]")).to_have_text("ops")
    await context.close()


async def test_a_telegram_channel_made_in_the_browser_is_picked_by_name_on_a_job(
        browser: Browser, site: str, keys: dict[str, Any], fresh_pool: ConnectionPool,
        sink: Sink) -> None:
    context = await browser.new_context()
    page = await context.new_page()
    await _sign_in(page, site, keys["write"])
    await page.get_by_role("link", name="Channels").click()
    await page.get_by_label("Kind").select_option(label="Telegram")
    await expect(page.get_by_label("URL")).to_be_hidden()  # only the kind's own fields
    await page.get_by_label("Name", exact=True).fill("on-call")
    await page.get_by_label("Chat id").fill("@opsroom")
    await page.get_by_label("Bot token secret").fill("TG TOKEN")
    await page.get_by_role("button", name="Create channel").click()
    await expect(page.locator("#err-token_secret")).to_contain_text("must name a team secret")
    await expect(page.get_by_label("Kind")).to_have_value("telegram")
    await page.get_by_label("Bot token secret").fill("TG_TOKEN")
    await page.get_by_role("button", name="Create channel").click()
    await expect(page.get_by_role("status", name="Notice")).to_have_text(
        "Channel “on-call” created.")
    await page.reload()  # a GET: no second channel
    await expect(page.get_by_role("link", name="Edit on-call")).to_have_count(1)

    await page.get_by_role("link", name="Jobs", exact=True).click()
    await page.get_by_role("link", name="New job").click()
    await expect(page.get_by_text("systemd OnCalendar")).to_be_visible()
    await page.get_by_label("Name", exact=True).fill("alerted job")
    await page.get_by_label("URL").fill(sink.url("/alerted"))
    await page.get_by_label("Schedule").fill("tous les jours à 9h30")
    await page.get_by_label("on-call").check()
    await page.get_by_role("button", name="Create job").click()
    await expect(page.get_by_role("heading", name="alerted job")).to_be_visible()
    await expect(page.get_by_text("to on-call, after 1 failed run(s) in a row")).to_be_visible()
    await page.get_by_role("link", name="Edit").click()
    await expect(page.get_by_label("on-call")).to_be_checked()
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT j.channels = ARRAY[c.id] AS picked FROM jobs j, "
                                 "channels c WHERE j.name = 'alerted job' AND c.name = 'on-call'")
        assert (await cur.fetchone())["picked"] is True
    # The audit log names what each event is about and links to it.
    await page.get_by_role("link", name="Events").click()
    await expect(page.get_by_role("link", name="alerted job")).to_be_visible()
    await expect(page.get_by_role("link", name="channel on-call")).to_be_visible()
    await page.get_by_role("link", name="alerted job").click()
    await expect(page.get_by_role("heading", name="alerted job")).to_be_visible()
    await context.close()
