"""The advisor's section in a real Chromium (Debian's ``chromium``, Playwright with
``executable_path``): a monitor pinged late once shows its advice from its page, the
suggestion's Apply opens the edit form with the grace filled, and saving it changes the grace
(docs/advice.md, *On the dashboard*). The app runs in-process with the frozen clock
(tests/e2e/test_dashboard_browser.py's fixtures). Without chromium the test is skipped with the
install command; with ``CI=true`` it fails."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
from playwright.async_api import Browser, expect

from core.clock import FrozenClock
from tests.e2e.test_dashboard_browser import _sign_in, browser, keys, site  # noqa: F401

TIMEOUT_MS = 15_000


async def test_a_monitor_s_advice_is_read_and_applied_in_the_browser(
    browser: Browser, site: str, keys: dict[str, Any], clock: FrozenClock,  # noqa: F811
) -> None:
    auth = {"Authorization": f"Bearer {keys['write']}"}
    async with httpx.AsyncClient(base_url=site) as http:
        r = await http.post("/v1/monitors", json={"name": "nightly", "schedule": "1h",
                                                  "grace_seconds": 60}, headers=auth)
        assert r.status_code == 201, r.text
        monitor = r.json()
        at = clock.now()
        for n in range(12):  # hourly, 10 s late; once 5 minutes late
            at += timedelta(hours=1, seconds=300 if n == 5 else 10)
            clock.set(at)
            assert (await http.get(f"/ping/{monitor['ping_token']}")).status_code == 200
        clock.set(at + timedelta(minutes=30))

    page = await browser.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    await _sign_in(page, site, keys["write"])
    await page.goto(f"{site}/ui/monitors/{monitor['id']}")
    await expect(page.get_by_role("heading", name="Advice")).to_be_visible()
    await page.get_by_role("link", name="See the advice").click()
    await expect(page.get_by_role("heading", name="Advice: nightly")).to_be_visible()
    suggestion = page.get_by_role("heading", name="Grace: 60 → 360")
    await expect(suggestion).to_be_visible()
    await expect(page.get_by_text("lateness p50 10 s, p95 300 s, max 300 s")).to_be_visible()
    await expect(page.get_by_role("heading", name="Kept as they are")).to_be_visible()
    await page.get_by_role("link", name="Apply: Grace 360").click()
    await expect(page.get_by_label("Grace (seconds)")).to_have_value("360")
    await page.get_by_role("button", name="Save").click()
    await expect(page.get_by_text("Monitor “nightly” saved.")).to_be_visible()
    async with httpx.AsyncClient(base_url=site) as http:
        r = await http.get(f"/v1/monitors/{monitor['id']}", headers=auth)
        assert r.json()["grace_seconds"] == 360
    await page.close()
