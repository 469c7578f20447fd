"""A public status page in a real Chromium (Debian's ``chromium``, Playwright) with JavaScript
disabled and no session: the title, the banner, each component by its display name with its
90-day bar, the open incident and its note, the feed link; narrow and wide, light and dark
(docs/status-pages.md). The app runs in-process on the frozen clock (the fixtures of
test_dashboard_browser.py).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from playwright.async_api import Browser, expect
from psycopg_pool import AsyncConnectionPool

from core.actor import Actor
from core.clock import FrozenClock
from core.monitors.commands import create_monitor
from tests.e2e.test_dashboard_browser import browser, keys, site  # noqa: F401


async def test_the_page_reads_without_javascript_in_every_size_and_scheme(
        browser: Browser, site: str, keys: dict[str, Any],  # noqa: F811
        fresh_pool: AsyncConnectionPool, clock: FrozenClock) -> None:
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
