"""A public status page in a real Chromium (Debian's ``chromium``, Playwright) with JavaScript
disabled and no session: the title, the banner, each component by its display name with its
90-day bar, the open incident and its note, the feed link; narrow and wide, light and dark
(docs/status-pages.md); and a page made, edited and deleted in the dashboard. The app runs
in-process on the frozen clock (the fixtures of
test_dashboard_browser.py).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx
from playwright.async_api import Browser, expect

from core.actor import Actor
from core.clock import FrozenClock
from core.db import ConnectionPool
from core.monitors.commands import create_monitor
from tests.e2e.test_dashboard_browser import _sign_in, browser, keys, site  # noqa: F401


async def test_the_page_reads_without_javascript_in_every_size_and_scheme(
        browser: Browser, site: str, keys: dict[str, Any],  # noqa: F811
        fresh_pool: ConnectionPool, clock: FrozenClock) -> None:
    actor = Actor(team_id=keys["team_id"])
    monitor, _ = await create_monitor(fresh_pool, actor, {
        "name": "hb-internal-queue", "schedule": "@every 1h"},
        clock.now() - timedelta(days=5))
    async with fresh_pool.connection() as conn:
        await conn.execute(
            "INSERT INTO monitor_state (monitor_id, team_id, name, status, created_at, "
            "updated_at) VALUES (%s, %s, 'm', 'down', %s, %s)",
            (monitor, actor.team_id, clock.now() - timedelta(days=5), clock.now()))
        await conn.execute("UPDATE monitors SET status = 'down' WHERE id = %s", (monitor,))
        await conn.execute(
            "INSERT INTO monitor_downtime (monitor_id, started_at, team_id) VALUES (%s, %s, %s)",
            (monitor, clock.now() - timedelta(minutes=30), actor.team_id))
        await conn.execute(
            "INSERT INTO alerts (id, team_id, subject_type, subject_id, event, title, "
            "created_at) VALUES (gen_random_uuid(), %s, 'monitor', %s, 'down', 't', %s)",
            (actor.team_id, monitor, clock.now() - timedelta(minutes=30)))
    auth = {"Authorization": f"Bearer {keys['write']}"}
    async with httpx.AsyncClient(base_url=site, headers=auth) as client:
        made = await client.post("/v1/status-pages", json={
            "title": "Acme status", "components": [str(monitor)],
            "names": {str(monitor): "Billing"}})
        assert made.status_code == 201, made.text
        alert = (await client.get("/v1/alerts")).json()["items"][0]["id"]
        noted = await client.put(f"/v1/alerts/{alert}/note",
                                 json={"note": "Replacing the queue host."})
        assert noted.status_code == 200
    url = made.json()["url"]
    for scheme in ("light", "dark"):
        for width, height in ((390, 844), (1440, 900)):
            context = await browser.new_context(viewport={"width": width, "height": height},
                                                color_scheme=scheme, java_script_enabled=False)
            page = await context.new_page()
            answer = await page.goto(url)
            assert answer is not None and answer.status == 200
            await expect(page.get_by_role("heading", name="Acme status")).to_be_visible()
            await expect(page.get_by_role("status")).to_have_text("Some systems have problems")
            await expect(page.get_by_role("heading", name="Current incidents")).to_be_visible()
            await expect(page.get_by_text("Billing is down")).to_be_visible()
            await expect(page.get_by_text("Replacing the queue host.")).to_be_visible()
            await expect(page.get_by_role("img", name="uptime of the last 90 days: "
                                                       "1 with downtime")).to_be_visible()
            await expect(page.get_by_role("link", name="Incidents feed (Atom)")).to_be_visible()
            assert await page.get_by_text("hb-internal-queue").count() == 0
            # nothing wider than the viewport: readable narrow without scrolling sideways
            overflow = await page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth")
            assert overflow == 0, (width, overflow)
            await context.close()


async def test_a_page_is_made_edited_and_deleted_in_the_dashboard(
        browser: Browser, site: str, keys: dict[str, Any],  # noqa: F811
        fresh_pool: ConnectionPool, clock: FrozenClock) -> None:
    """The whole life of a page in the dashboard, in Chromium: created by choice with display
    names (a refused name shown at its field, what was ticked kept), read by a visitor, edited
    (another component, another name), deleted (its URL then 404)."""
    actor = Actor(team_id=keys["team_id"])
    await create_monitor(fresh_pool, actor, {"name": "hb-queue-internal",
                                             "schedule": "@every 1h"}, clock.now())
    await create_monitor(fresh_pool, actor, {"name": "hb-search-internal",
                                             "schedule": "@every 1h"}, clock.now())
    context = await browser.new_context()
    page = await context.new_page()
    page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await _sign_in(page, site, keys["write"])
    await page.goto(f"{site}/ui/status-pages")
    await page.get_by_label("Title").fill("Acme status")
    await page.get_by_label("Custom path (optional)").fill("acme-browser")
    await page.get_by_text("Choose jobs and monitors, display names").click()
    await page.get_by_role("checkbox", name="Show hb-queue-internal").check()
    await page.get_by_label("Display name for hb-queue-internal").fill("Queue")
    await page.get_by_label("Display name for hb-search-internal").fill("Search")
    await page.get_by_role("button", name="Create status page").click()
    # a name for a component not ticked: the API's message at that field, the rest kept
    await expect(page.get_by_text("is not one of `components`", exact=True)).to_be_visible()
    await expect(page.get_by_label("Display name for hb-search-internal")).to_have_attribute(
        "aria-invalid", "true")
    await expect(page.get_by_role("checkbox", name="Show hb-queue-internal")).to_be_checked()
    await expect(page.get_by_label("Display name for hb-queue-internal")).to_have_value("Queue")
    await page.get_by_label("Display name for hb-search-internal").fill("")
    await page.get_by_role("button", name="Create status page").click()
    await expect(page.get_by_text("Status page “Acme status” created")).to_be_visible()
    visitor = await browser.new_context(java_script_enabled=False)
    public = await visitor.new_page()
    await public.goto(f"{site}/status/acme-browser")
    await expect(public.get_by_text("Queue", exact=True)).to_be_visible()
    assert await public.get_by_text("hb-queue-internal").count() == 0
    await page.get_by_role("link", name="Edit Acme status").click()
    await expect(page.get_by_role("checkbox", name="Show hb-queue-internal")).to_be_checked()
    await page.get_by_role("checkbox", name="Show hb-queue-internal").uncheck()
    await page.get_by_role("checkbox", name="Show hb-search-internal").check()
    await page.get_by_label("Display name for hb-queue-internal").fill("")
    await page.get_by_label("Display name for hb-search-internal").fill("Search")
    await page.get_by_label("Title").fill("Acme, edited")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_text("Status page saved.")).to_be_visible()
    await visitor.close()  # a visitor's browser keeps the page its max-age of 10 s: a new one
    visitor = await browser.new_context(java_script_enabled=False)
    public = await visitor.new_page()
    await public.goto(f"{site}/status/acme-browser")
    await expect(public.get_by_role("heading", name="Acme, edited")).to_be_visible()
    await expect(public.get_by_text("Search", exact=True)).to_be_visible()
    assert await public.get_by_text("Queue", exact=True).count() == 0
    await page.get_by_role("button", name="Delete Acme, edited").click()
    await expect(page.get_by_text("Status page deleted.")).to_be_visible()
    await visitor.close()
    visitor = await browser.new_context(java_script_enabled=False)
    answer = await (await visitor.new_page()).goto(f"{site}/status/acme-browser")
    assert answer is not None and answer.status == 404
    await visitor.close()
    await context.close()
