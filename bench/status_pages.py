"""Public status page speed (docs/status-pages.md): seed a page of N components (default 100)
with 90 days of history, then time ``GET /status/<key>`` and its feed at the server.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        uv run python bench/status_pages.py [--components 100] [--repeat 300] [--smoke]
    ... bench/status_pages.py --screenshots     # docs/screenshots/status-page-*.png

The seed, in a scratch database (:func:`bench.common.scratch_database`): half the components
monitors, half jobs, created by the real commands (``core/monitors/commands.py``,
``core/jobs/commands.py``) 90 days ago, tagged ``public``; their history is written straight to
the read models the page reads (``monitor_state``, ``monitor_downtime``: about one day in 25
with 10 to 120 minutes down; ``job_stats_daily``: 24 runs a day, about one in 300 failed), and
incidents to ``alerts`` (a down and its up, or a failed and its recovery; the newest monitor one
still open, with a note written by ``core/statuspages/commands.py:set_note``). The page is
made by ``core/statuspages/commands.py:create_page`` (by tag, a display name per component).

Three rows are timed, each ``--repeat`` times after three warm-up calls, in process (Litestar's
ASGI test client: the application and the database, no network), on a frozen clock:

- ``page, cached``: the HTML as visitors get it within the cache's 10 seconds (one lookup of
  the page, the body kept per page version: core/statuspages/cache.py);
- ``page, fresh``: every request renders (the cache's TTL set to 0): the lookup, the three
  statements of ``core/statuspages/public.py:public_view`` (components, alerts, and the bars
  of ``core/statuspages/bars.py``), the template and gzip;
- ``feed, fresh``: the Atom feed, rendered every time (``public_feed``: no bars).

The table gives p50/p95/max in ms, the body's size in kB and the CPU time of this process
per call (client and application, not PostgreSQL: less dependent on a shared machine's load);
a last line gives the fresh and cached page's p95 against the 20 ms target. Every answer must
be 200 and the page must show every component's display name (else the exit status is 1).
``--smoke`` (CI, ``bench/smoke.py``): 10 components, 5 timed calls per row.
``--screenshots``: 8 components, served over HTTP and shot in Debian's chromium with
JavaScript disabled, narrow (390 px) and wide (1440 px), light and dark, into
docs/screenshots/ (``--out`` another folder).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import shutil
import socket
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import ROOT, percentile, scratch_database
from tests.embedded_server import server_dsn

sys.path.insert(0, str(ROOT))

from api.app import create_app  # noqa: E402
from core.actor import Actor  # noqa: E402
from core.apikeys import create_api_key  # noqa: E402
from core.clock import FrozenClock  # noqa: E402
from core.config import Settings  # noqa: E402
from core.crypto import KeyRing  # noqa: E402
from core.db import open_pool  # noqa: E402
from core.jobs.commands import create_job  # noqa: E402
from core.monitors.commands import create_monitor  # noqa: E402
from core.statuspages.cache import PageCache  # noqa: E402
from core.statuspages.commands import create_page, set_note  # noqa: E402

NOW = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)
KEY = "Qm9vdHN0cmFwIGtleSBmb3Igc2NyZWVuc2hvdHMhISE="  # a throwaway AES key (base64, 32 bytes)
SIZES = {"narrow": (390, 844), "wide": (1440, 900)}
NAMES = ("Billing", "Nightly backups", "Search index", "E-mail delivery", "Invoices export",
         "Certificate renewal", "Data warehouse sync", "Customer reports")


def display_name(n: int) -> str:
    return NAMES[n] if n < len(NAMES) else f"Service {n + 1:03d}"


async def seed(dsn: str, components: int, seed_value: int = 7) -> dict[str, Any]:
    """The team, its components and history, the page: ``{"key", "url_key", "names"}``."""
    rng = random.Random(seed_value)
    pool = await open_pool(dsn, min_size=1, max_size=4)
    key, record = await create_api_key(pool, "status", "write", "bench")
    actor = Actor(team_id=record["team_id"], key_id=record["id"])
    ring = KeyRing.from_sources(KEY, None)
    created = NOW - timedelta(days=90)
    subjects: list[tuple[str, uuid.UUID]] = []
    for n in range(components):
        if n % 2 == 0:
            monitor_id, _ = await create_monitor(pool, actor, {
                "name": f"internal-monitor-{n}", "schedule": "@every 1h", "grace_seconds": 600,
                "tags": ["public"]}, created, ring)
            subjects.append(("monitor", monitor_id))
        else:
            job_id = await create_job(pool, actor, {
                "name": f"internal-job-{n}", "schedule": "0 * * * *", "tags": ["public"],
                "request": {"url": f"https://internal.example.com/job/{n}"}}, created)
            subjects.append(("job", job_id))
    first_day = NOW.replace(hour=0) - timedelta(days=89)
    alerts: list[tuple[Any, ...]] = []
    newest_down: uuid.UUID | None = None
    async with pool.connection() as conn:
        for kind, subject in subjects:
            if kind == "monitor":
                await conn.execute(
                    "INSERT INTO monitor_state (monitor_id, team_id, name, status, created_at, "
                    "updated_at) VALUES (%s, %s, 'm', 'up', %s, %s)",
                    (subject, actor.team_id, created, NOW))
                await conn.execute("UPDATE monitors SET status = 'up' WHERE id = %s",
                                   (subject,))
            for day in range(90):
                start = first_day + timedelta(days=day)
                if kind == "job":
                    failed = sum(rng.random() < 0.003 for _ in range(24))
                    await conn.execute(
                        "INSERT INTO job_stats_daily (job_id, bucket_start, team_id, succeeded,"
                        " failed) VALUES (%s, %s, %s, %s, %s)",
                        (subject, start, actor.team_id, 24 - failed, failed))
                    if failed and rng.random() < 0.5:
                        at = start + timedelta(hours=rng.randrange(20))
                        alerts += [(kind, subject, "failed", at),
                                   (kind, subject, "recovered", at + timedelta(hours=1))]
                elif rng.random() < 0.04 and start + timedelta(days=1) < NOW:
                    down = start + timedelta(hours=rng.randrange(20))
                    up = down + timedelta(minutes=rng.randrange(10, 120))
                    await conn.execute(
                        "INSERT INTO monitor_downtime (monitor_id, started_at, team_id, "
                        "ended_at) VALUES (%s, %s, %s, %s)", (subject, down, actor.team_id, up))
                    alerts += [(kind, subject, "down", down), (kind, subject, "up", up)]
        kind, subject = subjects[0]  # the first monitor: down since 40 minutes
        await conn.execute("UPDATE monitors SET status = 'down' WHERE id = %s", (subject,))
        await conn.execute("UPDATE monitor_state SET status = 'down' WHERE monitor_id = %s",
                           (subject,))
        await conn.execute(
            "INSERT INTO monitor_downtime (monitor_id, started_at, team_id) VALUES (%s, %s, %s)",
            (subject, NOW - timedelta(minutes=40), actor.team_id))
        alerts.append((kind, subject, "down", NOW - timedelta(minutes=40)))
        for kind, subject, event, at in alerts:
            alert_id = uuid.uuid4()
            await conn.execute(
                "INSERT INTO alerts (id, team_id, subject_type, subject_id, event, title, "
                "created_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (alert_id, actor.team_id, kind, subject, event, f"{kind} {event}", at))
            if event == "down":
                newest_down = alert_id
        await conn.execute("ANALYZE")
    assert newest_down is not None
    await set_note(pool, actor, newest_down, "The billing queue host is being replaced; "
                   "payments are queued and will be processed when it is back.", NOW)
    names = {str(subject): display_name(n) for n, (_, subject) in enumerate(subjects)}
    minted = await create_page(pool, ring, actor, {"title": "Acme status", "tags": ["public"],
                                                   "names": names}, NOW)
    await pool.close()
    return {"key": key, "url_key": minted.key, "names": list(names.values())}


async def time_rows(dsn: str, seeded: dict[str, Any], repeat: int) -> tuple[list[Any], bool]:
    """``[(label, p50, p95, max, kB, CPU ms per call)]`` and whether every answer was right
    (the CPU is this process's: the client and the application, not PostgreSQL's)."""
    from litestar.testing import AsyncTestClient

    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request otherwise
    app = create_app(dsn, Settings(database_url=dsn, secret_key=KEY), FrozenClock(NOW))
    path = f"/status/{seeded['url_key']}"
    rows, ok = [], True
    async with AsyncTestClient(app=app) as client:
        for label, url, ttl in (("page, cached", path, 10), ("page, fresh", path, 0),
                                ("feed, fresh", f"{path}/feed.atom", 0)):
            app.state.status_cache = PageCache(ttl_seconds=ttl)
            times, size, cpu = [], 0, 0.0
            for n in range(repeat + 3):
                if n == 3:
                    cpu = time.process_time()
                started = time.perf_counter()
                answer = await client.get(url)
                elapsed = (time.perf_counter() - started) * 1000
                ok = ok and answer.status_code == 200
                if n >= 3:
                    times.append(elapsed)
                size = len(answer.content)
                if label.startswith("page") and n == 0:
                    ok = ok and all(name in answer.text for name in seeded["names"])
            cpu = (time.process_time() - cpu) * 1000 / repeat
            rows.append((label, percentile(times, 50), percentile(times, 95), max(times),
                         size / 1024, cpu))
    return rows, ok


async def shoot(dsn: str, seeded: dict[str, Any], out: Path) -> list[Path]:
    """The page in chromium with JavaScript off, narrow and wide, light and dark."""
    import uvicorn
    from playwright.async_api import async_playwright

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(
        create_app(dsn, Settings(database_url=dsn, secret_key=KEY), FrozenClock(NOW)),
        host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    written = []
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=shutil.which("chromium"), args=["--no-sandbox"])
            for scheme in ("light", "dark"):
                for size, (width, height) in SIZES.items():
                    context = await browser.new_context(
                        viewport={"width": width, "height": height}, color_scheme=scheme,
                        java_script_enabled=False)
                    page = await context.new_page()
                    await page.goto(f"http://127.0.0.1:{port}/status/{seeded['url_key']}")
                    target = out / f"status-page-{size}-{scheme}.png"
                    await page.screenshot(path=str(target), full_page=True)
                    written.append(target)
                    await context.close()
            await browser.close()
    finally:
        server.should_exit = True
        await task
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--components", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--dsn", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--screenshots", action="store_true")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: 10 components, 5 calls per row")
    args = parser.parse_args()
    if args.smoke:
        args.components, args.repeat = 10, 5
    if args.screenshots:
        args.components = len(NAMES)
    with contextlib.ExitStack() as stack:
        if not args.dsn:  # an embedded server for the run
            args.dsn = stack.enter_context(server_dsn())
        dsn = stack.enter_context(scratch_database(args.dsn, "cronledger_bench_status"))
        started = time.perf_counter()
        seeded = asyncio.run(seed(dsn, args.components))
        seconds = time.perf_counter() - started
        if args.screenshots:
            for path in asyncio.run(shoot(dsn, seeded, args.out)):
                print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
            return 0
        rows, ok = asyncio.run(time_rows(dsn, seeded, args.repeat))
    print(f"\n{args.components} components, 90 days (seeded in {seconds:.1f} s), "
          f"{args.repeat} calls per row; load average {os.getloadavg()[0]:.2f}\n")
    print("| route | p50 ms | p95 ms | max ms | kB | CPU ms/call |\n"
          "|---|---:|---:|---:|---:|---:|")
    for label, p50, p95, worst, kb, cpu in rows:
        print(f"| {label} | {p50:.2f} | {p95:.2f} | {worst:.2f} | {kb:.1f} | {cpu:.2f} |")
    fresh, cached = (next(r[2] for r in rows if r[0] == label)
                     for label in ("page, fresh", "page, cached"))
    print(f"\npage p95: fresh (uncached) {fresh:.2f} ms, cached "
          f"{cached:.2f} ms (target 20 ms at 100 components)")
    if not ok:
        print("an answer was not 200, or a display name was missing", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
