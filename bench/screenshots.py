"""Screenshots of the dashboard for docs/screenshots/ (the README shows one).

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres uv run python bench/screenshots.py

A scratch database is seeded through the real code: jobs created by ``core/``, fired by a real
worker on a frozen clock against a local sink (some replies fail), a heartbeat monitor, the
projector run once. The app is served on a free port with that clock and Debian's chromium
(Playwright, ``executable_path``) takes every page of :data:`PAGES` (overview, jobs, a job, the
job form, monitors, a monitor, the monitor form, channels, events, alerts, an alert), narrow
(390 px) and wide (1440 px), light and dark: ``docs/screenshots/<page>-<width>-<scheme>.png``.
The browser signs in to a second team first, so the pages show the team switcher.

``--smoke`` (CI, ``bench/smoke.py``) seeds half an hour instead of four hours and writes to a
temporary folder; the exit status is 1 unless every screenshot was written as a PNG.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import uvicorn
from playwright.async_api import async_playwright

from bench.common import ROOT, scratch_database
from core.actor import Actor
from core.apikeys import create_api_key
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.config import Settings
from core.crypto import KeyRing
from core.db import open_pool
from core.jobs.commands import create_job, set_paused
from core.monitors.checker import Checker
from core.monitors.commands import create_monitor
from core.monitors.ping import Ping, open_ping_pool, record_pings
from core.projections.projector import Projector
from core.secrets import put_secret
from tests.embedded_server import server_dsn
from tests.helpers import make_worker
from tests.sink import Reply, Sink

OUT = ROOT / "docs" / "screenshots"
T0 = datetime(2026, 11, 30, 6, 0, 0, tzinfo=UTC)
SIZES = {"narrow": (390, 844), "wide": (1440, 900)}
PAGES = ("overview", "jobs", "job", "job-form", "monitors", "monitor", "monitor-form",
         "channels", "events", "alerts", "alert")
KEY = "Qm9vdHN0cmFwIGtleSBmb3Igc2NyZWVuc2hvdHMhISE="  # a throwaway AES key (base64, 32 bytes)


async def seed(dsn: str, clock: FrozenClock, sink: Sink,
               minutes: int = 240) -> dict[str, str]:
    """Jobs with ``minutes`` of runs, monitors pinged along, a channel: ``{"key", "ops_key",
    "job", "monitor"}`` (the write keys of the teams ``default`` and ``ops``, the ids shown)."""
    settings = Settings(database_url=dsn, secret_key=KEY)
    pool = await open_pool(dsn, min_size=1, max_size=4)
    key, record = await create_api_key(pool, "default", "write", "screenshots")
    ops_key, _ = await create_api_key(pool, "ops", "write", "ops laptop")
    actor = Actor(team_id=record["team_id"], key_id=record["id"])
    ring = KeyRing.from_sources(KEY, None)
    alerts, _ = await create_channel(pool, AesGcmSealer(ring), actor, {
        "name": "ops-alerts", "kind": "webhook", "url": sink.url("/alerts")}, clock.now())
    sink.reply("/flaky", *[Reply(status=500 if i % 5 == 3 else 200, body=b'{"ok": true}')
                           for i in range(500)])
    sink.reply("/broken", *[Reply(status=503, body=b"upstream unavailable")
                            for _ in range(500)])
    await put_secret(pool, ring, actor, "REPORT_TOKEN",
                     "s3cr3t-token", clock.now())
    shown = await create_job(pool, actor, {
        "name": "nightly-report", "schedule": "*/10 * * * *", "timezone": "Europe/Berlin",
        "request": {"url": sink.url("/flaky"), "method": "POST", "body": '{"report": "daily"}',
                    "headers": {"Authorization": "Bearer ${secrets.REPORT_TOKEN}"}},
        "retry": {"attempts": 2, "delay_seconds": 5}, "channels": [alerts],
        "alert_on": ["skipped", "missed"]}, clock.now())
    await create_job(pool, actor, {"name": "cache-warmup", "schedule": "*/15 * * * *",
                                   "request": {"url": sink.url("/ok")}}, clock.now())
    await create_job(pool, actor, {"name": "billing-sync", "schedule": "0 * * * *",
                                   "request": {"url": sink.url("/broken")}}, clock.now())
    paused = await create_job(pool, actor, {"name": "legacy-export", "schedule": "0 4 * * 1",
                                            "request": {"url": sink.url("/ok")}}, clock.now())
    await set_paused(pool, actor, paused, True, clock.now())
    tokens = {}
    for name, every in (("backup-db", "@every 20m"), ("certbot-renew", "@every 1h")):
        monitor_id, tokens[name] = await create_monitor(pool, actor, {
            "name": name, "schedule": every, "grace_seconds": 300,
            "channels": [alerts], **({"max_duration": "30m", "realert_every": "1h"}
                                     if name == "backup-db" else {})}, clock.now(), ring)
        if name == "backup-db":
            shown_monitor = monitor_id
    checker = Checker(pool, "", clock)
    worker = make_worker(pool, dsn, settings, clock)
    ping_pool = await open_ping_pool(dsn, size=1)
    for step in range(2 * minutes):  # 30-second steps (retries come 5 s after)
        clock.advance(25)
        await worker.run_once()
        await worker.settle()
        clock.advance(5)
        await worker.run_once()
        await worker.settle()
        if step % 40 == 1 and not 0.5 < step / (2 * minutes) < 0.7:  # a gap: down
            failed = step % 200 == 161  # now and then a run that failed
            await record_pings(ping_pool, [
                (Ping(token=tokens["backup-db"], kind="fail" if failed else "success",
                      method="POST", exit_status=1 if failed else 0,
                      body=b"backup done: 1.2 GB in 241 s", body_size=28), clock.now())])
        await checker.run_once(clock.now())
        if step % 120 == 5:
            await record_pings(ping_pool, [
                (Ping(token=tokens["certbot-renew"], kind="success", method="GET",
                      body=None, body_size=0), clock.now())])
    await ping_pool.close()
    await worker.executor.aclose()
    await Projector(pool, dsn, clock).run_once(clock.now())
    async with pool.connection() as conn:  # the newest alert of the monitor shown
        cur = await conn.execute("SELECT id FROM alerts WHERE subject_id = %s "
                                 "ORDER BY created_at DESC LIMIT 1", (shown_monitor,))
        alert = (await cur.fetchone())["id"]
    await pool.close()
    return {"key": key, "ops_key": ops_key, "job": str(shown), "monitor": str(shown_monitor),
            "alert": str(alert)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def shoot(dsn: str, out: Path = OUT, minutes: int = 240) -> list[Path]:
    from api.app import create_app

    clock = FrozenClock(T0)
    async with Sink() as sink:
        seeded = await seed(dsn, clock, sink, minutes)
        job_id, monitor_id = seeded["job"], seeded["monitor"]
        port = _free_port()
        server = uvicorn.Server(uvicorn.Config(
            create_app(dsn, Settings(database_url=dsn, secret_key=KEY), clock),
            host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1))
        task = asyncio.create_task(server.serve())
        while not server.started:
            await asyncio.sleep(0.05)
        base = f"http://127.0.0.1:{port}"
        pages = {"overview": "/", "jobs": "/ui/jobs", "job": f"/ui/jobs/{job_id}",
                 "job-form": f"/ui/jobs/{job_id}/edit", "monitors": "/ui/monitors",
                 "monitor": f"/ui/monitors/{monitor_id}",
                 "monitor-form": f"/ui/monitors/{monitor_id}/edit", "channels": "/ui/channels",
                 "events": "/ui/events", "alerts": "/ui/alerts",
                 "alert": f"/ui/alerts/{seeded['alert']}"}
        assert tuple(pages) == PAGES
        written = []
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            for scheme in ("light", "dark"):
                for size, (width, height) in SIZES.items():
                    context = await browser.new_context(
                        viewport={"width": width, "height": height}, color_scheme=scheme,
                        timezone_id="Europe/Berlin", locale="en-GB")
                    page = await context.new_page()
                    for key in (seeded["ops_key"], seeded["key"]):  # default shown; ops held
                        await page.goto(base + "/ui/signin")
                        await page.get_by_label("API key").fill(key)
                        await page.get_by_role("button", name="Sign in").click()
                        await page.wait_for_url(base + "/")
                    for name, path in pages.items():
                        await page.goto(base + path)
                        await page.wait_for_load_state("load")
                        target = out / f"{name}-{size}-{scheme}.png"
                        await page.screenshot(path=str(target),
                                              full_page=not name.endswith("-form")
                                              or size == "wide")
                        written.append(target)
                    await context.close()
            await browser.close()
        server.should_exit = True
        await task
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: a shorter seed, written to a temporary folder")
    args = parser.parse_args()
    if shutil.which("chromium") is None:
        raise SystemExit("chromium is not installed: apt-get install chromium")
    with tempfile.TemporaryDirectory() as tmp, server_dsn() as admin:
        out = Path(tmp) if args.smoke else OUT
        out.mkdir(parents=True, exist_ok=True)
        with scratch_database(admin, "cronledger_screens") as dsn:
            written = asyncio.run(shoot(dsn, out, 30 if args.smoke else 240))
        for path in written:
            print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name)
        pngs = [p for p in written if p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"]
        expected = 2 * len(SIZES) * len(PAGES)  # schemes x sizes x pages
    if len(written) != expected or len(pngs) != expected:
        print(f"{len(pngs)} PNG screenshots of {expected}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
