"""The monitors pages in a real Chromium (Debian's ``chromium``, driven by Playwright with
``executable_path``; no browser download): a monitor made through the form turns ``up`` live
when the test pings it with curl, hostile names and ping bodies stay text, and a read key sees
no controls. Without chromium the tests are skipped with the install command; on CI
(``CI=true``) they fail instead."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.processes import cronledger, free_port, run_cli, stop, wait_http

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
HOSTILE_NAME = "<img src=x onerror=alert(1)>"
HOSTILE_BODY = "<script>alert(2)</script> done"
TIMEOUT_MS = 15_000


def _need_chromium() -> str:
    if CHROMIUM is None:
        message = "chromium is not installed: sudo apt-get install chromium"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return CHROMIUM


@pytest.fixture
def server(fresh_dsn: str, tmp_path: Path) -> Iterator[dict[str, str]]:
    """``cronledger serve`` on a free port: ``{"base", "write", "read"}`` (the keys' team
    is ``browser``)."""
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_PORT": str(free_port())}
    base = f"http://127.0.0.1:{env['CRONLEDGER_PORT']}"
    process = cronledger("serve", env=env, log=tmp_path / "serve.log")
    try:
        wait_http(f"{base}/readyz", 60)
        write = run_cli("apikey", "create", "--team", "browser", env=env).strip()
        read = run_cli("apikey", "create", "--team", "browser", "--scope", "read",
                       env=env).strip()
        yield {"base": base, "write": write, "read": read}
    finally:
        stop(process)


@pytest.fixture
def browser_page() -> Iterator[Any]:
    """A Chromium page; every dialog it opens is recorded in ``page.dialogs`` and dismissed."""
    executable = _need_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable,
                                    args=["--no-sandbox", "--disable-dev-shm-usage"])
        page = browser.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.dialogs = []  # type: ignore[attr-defined]

        def on_dialog(dialog: Any) -> None:
            page.dialogs.append(dialog.message)  # type: ignore[attr-defined]
            dialog.dismiss()

        page.on("dialog", on_dialog)
        try:
            yield page
        finally:
            browser.close()


def _sign_in(page: Any, base: str, key: str) -> None:
    page.goto(f"{base}/ui/signin")
    page.get_by_label("API key").fill(key)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/")


def test_a_monitor_created_in_the_browser_turns_up_live_when_pinged(
        server: dict[str, str], browser_page: Any) -> None:
    from playwright.sync_api import expect

    page, base = browser_page, server["base"]
    _sign_in(page, base, server["write"])
    page.goto(f"{base}/ui/monitors")
    page.get_by_role("link", name="New monitor").click()
    page.get_by_label("Name").fill(HOSTILE_NAME)
    page.get_by_label("Schedule").fill("1h")
    page.get_by_role("button", name="Create monitor").click()
    ping_url = page.locator("#flash-secret").inner_text()
    assert ping_url.startswith(f"{base}/ping/")
    expect(page.get_by_role("heading", level=1)).to_have_text(HOSTILE_NAME)

    page.goto(f"{base}/ui/monitors")
    row = page.locator("tr[data-monitor]").filter(has_text=HOSTILE_NAME)
    expect(row.locator("td[data-status]")).to_have_attribute("data-status", "new")
    subprocess.run(["curl", "-fsS", "-o", "/dev/null", "--data-binary", HOSTILE_BODY, ping_url],
                   check=True, timeout=30)
    # no reload: the live region (Server-Sent Events) swaps the row in
    expect(row.locator("td[data-status]")).to_have_attribute("data-status", "up")
    expect(row).to_contain_text("just now")

    row.get_by_role("link", name=HOSTILE_NAME).click()
    expect(page.locator("pre.body").first).to_have_text(HOSTILE_BODY)
    expect(page.locator("[data-status]").first).to_have_attribute("data-status", "up")
    assert page.locator("img[src=x]").count() == 0 and page.locator("pre script").count() == 0
    assert page.dialogs == []  # type: ignore[attr-defined]


def test_a_read_key_sees_the_monitor_pages_without_controls(
        server: dict[str, str], browser_page: Any) -> None:
    from playwright.sync_api import expect

    page, base = browser_page, server["base"]
    _sign_in(page, base, server["write"])
    page.goto(f"{base}/ui/monitors/new")
    page.get_by_label("Name").fill("seen by a reader")
    page.get_by_label("Schedule").fill("1d")
    page.get_by_role("button", name="Create monitor").click()
    live = page.locator("[data-live]").first.get_attribute("data-live")
    assert live is not None and live.endswith("/live")
    monitor_path = live.removesuffix("/live")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(f"{base}/ui/signin")

    _sign_in(page, base, server["read"])
    for path in (monitor_path, "/ui/monitors", "/ui/channels", "/ui/secrets", "/ui/apikeys",
                 "/ui/events"):
        page.goto(f"{base}{path}")
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        assert page.locator("form[method=post]").count() == 1, path  # only Sign out
        for control in ("Pause", "Resume", "Rotate token", "Send test", "Revoke"):
            assert page.get_by_role("button", name=control).count() == 0, (path, control)
    page.goto(f"{base}/ui/monitors")
    assert page.get_by_role("link", name="New monitor").count() == 0
    expect(page.get_by_role("link", name="seen by a reader")).to_be_visible()


def test_a_monitor_is_edited_and_deleted_in_the_browser_and_a_reload_makes_no_second(
        server: dict[str, str], browser_page: Any) -> None:
    import httpx
    from playwright.sync_api import expect

    page, base = browser_page, server["base"]
    _sign_in(page, base, server["write"])
    page.goto(f"{base}/ui/monitors/new")
    page.get_by_label("Name").fill("nightly backup")
    page.get_by_label("Schedule").fill("1h")
    page.get_by_role("button", name="Create monitor").click()
    expect(page.get_by_role("status", name="Notice")).to_contain_text(
        "Monitor “nightly backup” created.")
    assert page.locator("#flash-secret").inner_text().startswith(f"{base}/ping/")
    monitor_url = page.url
    page.reload()  # a GET: nothing is sent again, and the URL is not shown again
    expect(page.get_by_role("heading", level=1)).to_have_text("nightly backup")
    assert page.locator("#flash-secret").count() == 0
    auth = {"Authorization": f"Bearer {server['write']}"}
    listed = httpx.get(f"{base}/v1/monitors", headers=auth).json()["items"]
    assert [m["name"] for m in listed] == ["nightly backup"]

    page.get_by_role("link", name="Edit").click()
    expect(page.get_by_label("Name")).to_have_value("nightly backup")
    page.get_by_label("Schedule").fill("every blursday")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#schedule-error")).to_contain_text("blursday")
    page.get_by_label("Name").fill("backup à 3h")
    page.get_by_label("Schedule").fill("tous les jours à 3h")
    page.get_by_label("Time zone").fill("Europe/Paris")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("backup à 3h")
    expect(page.get_by_role("status", name="Notice")).to_contain_text("saved")
    expect(page.get_by_text("tous les jours à 3h")).to_be_visible()
    assert page.url == monitor_url

    # Someone else saves while this form is open: the form comes back with the message.
    page.get_by_role("link", name="Edit").click()
    monitor_id = monitor_url.rsplit("/", 1)[1]
    httpx.patch(f"{base}/v1/monitors/{monitor_id}", headers=auth,
                json={"grace_seconds": 120}).raise_for_status()
    page.get_by_label("Name").fill("mine")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("alert")).to_contain_text("while you edited it")
    expect(page.get_by_label("Name")).to_have_value("mine")
    page.get_by_role("link", name="Cancel").click()

    page.evaluate("window.confirm = () => true")
    page.get_by_role("button", name="Delete").click()
    page.wait_for_url(f"{base}/ui/monitors")
    expect(page.get_by_role("status", name="Notice")).to_contain_text("deleted")
    assert page.get_by_role("link", name="backup à 3h").count() == 0
    assert httpx.get(f"{base}/v1/monitors", headers=auth).json()["items"] == []
