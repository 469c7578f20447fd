"""Dashboard page speed: seed 10,000 jobs, 1,000,000 runs and 1,000 monitors into a fresh
database, then time the pages (and the JSON read models behind them) at the server.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        uv run python bench/pages.py [--jobs 10000] [--runs 1000000] [--monitors 1000]
                                     [--repeat 30] [--keep | --reuse DSN] [--smoke]

One team owns everything (the heaviest case for a page: every count, list and page of it is
over all the rows). The seed, in a scratch database made by :func:`bench.common.scratch_database`:

- the daily leaves of the history tables exist for the whole seeded past, as on a server that
  ran through it (its maintenance service creates each day's ahead);
- jobs and monitors are created by the real commands (``core/jobs/commands.py``,
  ``core/monitors/commands.py``), so their rows, ``due_jobs`` and ``*.created`` events are the
  ones the API writes: jobs fire every 5, 10, 15, 30 or 60 minutes; monitors expect a ping
  every 6 hours (grace 1 hour) and were created 30 days ago;
- the monitors' pings go through the real ping statement (``core/monitors/ping.py``) at their
  past instants, 6 hours apart, 3 % of them missed and 10 % with a body; between ping rounds
  the real checker (``core/monitors/checker.py``) decides late and down at that instant, so
  the 30-day history has flips;
- the runs are COPYed with their events as ``bench/reporting.py``'s generator writes them
  (90 % succeed, 6 % fail, a third after one retry, 2 % skipped, 2 % missed), over the span
  that gives each job its share of ``--runs`` (about 20 hours for the defaults); ``due_jobs`` is
  then moved to each job's next slot after now;
- the projector (``core/projections/projector.py``) catches up on the whole log, then
  ``VACUUM ANALYZE``.

Each route is then asked ``--repeat`` times after three warm-up calls, in process (Litestar's
ASGI test client: the application and the database, no network), with a write key (the pages
with every control); the table gives p50/p95/max in ms and the answer's size in kB (HTML pages:
also with the local CSS and JavaScript they load). Results: docs/benchmarks.md.

Every route must answer 200 (a page not built yet may answer 404), and the seeded database must
hold what was seeded (jobs, runs, monitors, ping events): otherwise the exit status is 1.
``--smoke`` (CI, ``bench/smoke.py``): 20 jobs, 300 runs, 3 monitors, one timed call per route.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import os
import random
import re
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from bench.common import ROOT, percentile, scratch_database
from tests.embedded_server import server_dsn

sys.path.insert(0, str(ROOT))

from bench.reporting import EVENT_COPY, RUN_COPY, Generator  # noqa: E402
from core.actor import Actor  # noqa: E402
from core.clock import FrozenClock, SystemClock  # noqa: E402
from core.config import Settings  # noqa: E402

logging.getLogger("httpx").setLevel(logging.WARNING)
logging.getLogger("cronledger").setLevel(logging.WARNING)

PERIODS = (5, 10, 15, 30, 60)  # minutes between a job's slots
MONITOR_EVERY = timedelta(hours=6)
MONITOR_HISTORY = timedelta(days=30)
PING_MISSED, PING_WITH_BODY = 0.03, 0.10
TARGET_MS, TARGET_KB = 50, 200  # the targets: p95 at the server, page weight


class RunLines(Generator):
    """The run rows and run events of :class:`bench.reporting.Generator`, for given jobs."""

    def __init__(self, seed: int = 1) -> None:  # noqa: D107 - only what Generator._run uses
        self.rng = random.Random(seed)
        self.events = 0
        self.runs = 0


async def _create_jobs(pool: Any, actor: Actor, count: int, at: datetime,
                       ) -> list[tuple[uuid.UUID, int]]:
    """``count`` jobs created at ``at`` by the real command: ``[(job_id, period minutes)]``."""
    from core.jobs.commands import create_job

    rng = random.Random(2)
    periods = [rng.choice(PERIODS) for _ in range(count)]
    created: list[tuple[uuid.UUID, int]] = []

    async def one(i: int) -> None:
        period = periods[i]
        job_id = await create_job(pool, actor, {
            "name": f"job {i:05d} every {period} min", "schedule": f"*/{period} * * * *",
            "request": {"method": "GET", "url": f"https://example.com/hooks/{i}"},
            "retry": {"attempts": 2, "backoff": "fixed", "delay_seconds": 10}}, at)
        created.append((job_id, period))

    for start in range(0, count, 50):
        await asyncio.gather(*(one(i) for i in range(start, min(count, start + 50))))
    return created


async def _create_monitors(pool: Any, actor: Actor, count: int, at: datetime,
                           ) -> list[tuple[uuid.UUID, str]]:
    """``count`` monitors created at ``at``: ``[(monitor_id, ping token)]``."""
    from core.monitors.commands import create_monitor

    out = []
    for i in range(count):
        out.append(await create_monitor(pool, actor, {
            "name": f"backup host-{i:04d}", "schedule": "6h", "grace_seconds": 3600}, at))
    return out


async def _ping_history(dsn: str, pool: Any, monitors: Sequence[tuple[uuid.UUID, str]],
                        start: datetime, now: datetime) -> int:
    """Ping every monitor each :data:`MONITOR_EVERY` from ``start`` to ``now`` (real ping
    statement, past instants), the checker deciding at each round; returns the ping count."""
    from core.monitors.checker import Checker
    from core.monitors.ping import Ping, open_ping_pool, record_pings

    rng = random.Random(3)
    ping_pool = await open_ping_pool(dsn, size=1, synchronous_commit=False)
    checker = Checker(pool, dsn, FrozenClock(start), batch=1000)
    count = 0
    try:
        at = start + timedelta(minutes=5)
        while at < now:
            batch = []
            for n, (_, token) in enumerate(monitors):
                if rng.random() < PING_MISSED:
                    continue
                body = None
                if rng.random() < PING_WITH_BODY:
                    body = (f"backup of host-{n:04d}: {rng.randint(1, 900)} files, "
                            f"{rng.random() * 10:.2f} GB\n").encode()
                ping = Ping(token=token, kind="success", method="POST" if body else "GET",
                            remote_addr="10.0.0.7", user_agent="curl/8.5.0", body=body,
                            body_size=len(body or b""))
                batch.append((ping, at + timedelta(seconds=n % 600)))
            batch.sort(key=lambda item: item[1])
            for i in range(0, len(batch), 500):
                await record_pings(ping_pool, batch[i:i + 500])
            count += len(batch)
            at += MONITOR_EVERY
            await checker.run_once(min(at, now))
    finally:
        await ping_pool.close()
    return count


def _next_slot(at: datetime, period: int) -> datetime:
    """The first slot of ``*/period * * * *`` (UTC) at or after ``at`` (``period`` divides
    60, so the slots are the multiples of ``period`` minutes since the epoch)."""
    step = period * 60
    return datetime.fromtimestamp(math.ceil(at.timestamp() / step) * step, UTC)


def _copy_runs(dsn: str, team: uuid.UUID, jobs: Sequence[tuple[uuid.UUID, int]],
               start: datetime, now: datetime) -> RunLines:
    """COPY the runs of every job's slots in ``[start, now)``, with their events, hour by
    hour in time order (one transaction per hour)."""
    lines = RunLines()
    job_texts = [(str(job), period) for job, period in jobs]
    team_text = str(team)
    with psycopg.connect(dsn) as conn:
        conn.execute("SET synchronous_commit = off")
        hour = start
        while hour < now:
            end = min(hour + timedelta(hours=1), now)
            out: list[tuple[datetime, str]] = []
            runs: list[str] = []
            for job, period in job_texts:
                slot = _next_slot(hour, period)
                while slot < end:
                    lines._run(job, team_text, slot, out, runs)
                    slot += timedelta(minutes=period)
            out.sort(key=lambda item: item[0])
            with conn.cursor().copy(EVENT_COPY) as copy:
                copy.write("".join(line for _, line in out))
            with conn.cursor().copy(RUN_COPY) as copy:
                copy.write("".join(runs))
            conn.commit()
            hour = end
        # Each job's next fire is its first slot after now (its runs stop before now).
        conn.execute(
            "UPDATE due_jobs d SET due_at = n.due_at "
            "FROM unnest(%(ids)s::uuid[], %(due)s::timestamptz[]) AS n(id, due_at) "
            "WHERE d.job_id = n.id",
            {"ids": [j for j, _ in jobs], "due": [_next_slot(now, p) for _, p in jobs]})
        conn.commit()
    return lines


async def _history_leaves(pool: Any, start: datetime, now: datetime) -> None:
    """The daily leaves of the history tables from ``start`` to a few days after ``now``, as a
    server running since ``start`` has them (its maintenance service creates each day's ahead,
    core/retention/partitions.py); without them the seeded past would all be in the default
    partitions."""
    from core.retention.partitions import create_ahead

    async with pool.connection() as conn:
        day = start
        while day <= now:
            await create_ahead(conn, day, 3)
            day += timedelta(days=1)


async def seed(dsn: str, jobs: int, runs: int, monitors: int, now: datetime,
               ) -> dict[str, Any]:
    """Fill the scratch database at ``dsn``; returns the ids and keys the timing needs."""
    from core.apikeys import create_api_key
    from core.db import open_pool
    from core.projections.projector import Projector

    pool = await open_pool(dsn, min_size=2, max_size=8)
    try:
        key, record = await create_api_key(pool, "bench pages", "write")
        read_key, _ = await create_api_key(pool, record["team_id"], "read")
        actor = Actor(team_id=record["team_id"], key_id=record["id"])
        rate = sum(1 / p for p in PERIODS) / len(PERIODS) * jobs  # runs per minute
        span = timedelta(minutes=math.ceil(runs / rate))
        job_start = (now - span).replace(second=0, microsecond=0)
        await _history_leaves(pool, min(job_start, now - MONITOR_HISTORY), now)
        t = time.perf_counter()
        job_ids = await _create_jobs(pool, actor, jobs, job_start)
        print(f"  {jobs:,} jobs in {time.perf_counter() - t:.0f} s", file=sys.stderr)
        t = time.perf_counter()
        monitor_start = now - MONITOR_HISTORY
        created = await _create_monitors(pool, actor, monitors, monitor_start)
        pings = await _ping_history(dsn, pool, created, monitor_start, now)
        print(f"  {monitors:,} monitors, {pings:,} pings in {time.perf_counter() - t:.0f} s",
              file=sys.stderr)
        t = time.perf_counter()
        lines = await asyncio.to_thread(_copy_runs, dsn, actor.team_id, job_ids, job_start,
                                        now)
        print(f"  {lines.runs:,} runs ({lines.events:,} events) in "
              f"{time.perf_counter() - t:.0f} s", file=sys.stderr)
        t = time.perf_counter()
        projector = Projector(pool, dsn, SystemClock(), batch_size=Settings().projector_batch)
        applied = await projector.run_once()
        print(f"  projected {applied:,} events in {time.perf_counter() - t:.0f} s",
              file=sys.stderr)
    finally:
        await pool.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    t = time.perf_counter()
    alerts = await seed_alerts(dsn, actor.team_id, now)
    print(f"  {alerts:,} alerts in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    return {"key": key, "read_key": read_key, "team_id": actor.team_id,
            "job": job_ids[len(job_ids) // 2][0], "monitor": created[len(created) // 2][0],
            "runs": lines.runs, "pings": pings, "jobs": len(job_ids), "monitors": len(created)}


ALERTS_SQL = (
    # a monitor's down and up alerts: one per status flip of the seeded history
    "INSERT INTO alerts (id, team_id, subject_type, subject_id, event, title, rule, created_at) "
    "SELECT gen_random_uuid(), e.team_id, 'monitor', e.stream_id, "
    "       CASE e.event_type WHEN 'monitor.down' THEN 'down' ELSE 'up' END, "
    "       'Monitor “' || m.name || '” is ' || CASE e.event_type WHEN 'monitor.down' "
    "       THEN 'down' ELSE 'up' END, e.data || '{\"failures\": 1}'::jsonb, e.occurred_at "
    "FROM events e JOIN monitors m ON m.id = e.stream_id "
    "WHERE e.team_id = %(team)s AND e.event_type IN ('monitor.down', 'monitor.up')",
    # a job's alert for each failed run (alert_after_failures 1)
    "INSERT INTO alerts (id, team_id, subject_type, subject_id, event, title, rule, created_at) "
    "SELECT gen_random_uuid(), r.team_id, 'job', r.job_id, 'failed', "
    "       'Job “' || j.name || '” failed', jsonb_build_object("
    "           'reason', 'alert_after_failures', 'consecutive_failures', 1, "
    "           'alert_after_failures', 1, 'run_id', r.id, 'scheduled_for', r.scheduled_for), "
    "       coalesce(r.finished_at, r.scheduled_for) "
    "FROM runs r JOIN jobs j ON j.id = r.job_id "
    "WHERE r.team_id = %(team)s AND r.status = 'failed'",
    # each sent to one channel: its notification, sent
    "INSERT INTO notifications (id, team_id, channel_id, subject_type, subject_id, event, "
    "       message, status, attempt, max_attempts, version, created_at, sent_at, finished_at, "
    "       alert_id) "
    "SELECT gen_random_uuid(), a.team_id, %(channel)s, a.subject_type, a.subject_id, a.event, "
    "       '{}'::jsonb, 'sent', 1, 5, 2, a.created_at, a.created_at, a.created_at, a.id "
    "FROM alerts a WHERE a.team_id = %(team)s",
)


async def seed_alerts(dsn: str, team_id: uuid.UUID, now: datetime) -> int:
    """The alerts of the seeded history, once (a database seeded before alerts were records
    gets them on its next ``--reuse``): a channel (the real command), one alert per monitor
    status flip and per failed run, as the outbox records them (``alerts``, migration 0028),
    each with its sent notification; returns the team's alert count."""
    from core.channels.commands import create_channel
    from core.channels.sealing import AesGcmSealer
    from core.db import open_pool

    with psycopg.connect(dsn) as conn:
        count = conn.execute("SELECT count(*) FROM alerts WHERE team_id = %s",
                             (team_id,)).fetchone()[0]
    if count:
        return count
    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        channel, _ = await create_channel(pool, AesGcmSealer.random(), Actor(team_id=team_id), {
            "name": "on-call", "kind": "telegram", "chat_id": "@opsroom",
            "token_secret": "TG_TOKEN"}, now)
    finally:
        await pool.close()
    with psycopg.connect(dsn) as conn:
        for statement in ALERTS_SQL:
            conn.execute(statement, {"team": team_id, "channel": channel})
        conn.commit()
        count = conn.execute("SELECT count(*) FROM alerts WHERE team_id = %s",
                             (team_id,)).fetchone()[0]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE alerts")
        conn.execute("VACUUM ANALYZE notifications")
    return count


def more_ids(dsn: str, team_id: uuid.UUID, job: uuid.UUID) -> dict[str, Any]:
    """The newest alert of a job and of a monitor (the alert pages timed) and the newest run
    of ``job`` (its run page)."""
    with psycopg.connect(dsn) as conn:
        run = conn.execute("SELECT id FROM runs WHERE job_id = %s ORDER BY scheduled_for DESC "
                           "LIMIT 1", (job,)).fetchone()

        def newest(kind: str) -> Any:
            row = conn.execute("SELECT id FROM alerts WHERE team_id = %s AND subject_type = %s "
                               "ORDER BY created_at DESC, id DESC LIMIT 1",
                               (team_id, kind)).fetchone()
            return row[0] if row else None
        return {"job_alert": newest("job"), "monitor_alert": newest("monitor"),
                "run": run[0] if run else None}


def seeded_counts(dsn: str, team_id: uuid.UUID) -> dict[str, int]:
    """What the database holds for the team: jobs, runs rows, monitors and ping events."""
    with psycopg.connect(dsn) as conn:
        def one(query: str) -> int:
            return conn.execute(query, {"team": team_id}).fetchone()[0]

        return {
            "jobs": one("SELECT count(*) FROM jobs WHERE team_id = %(team)s"),
            "runs": one("SELECT count(*) FROM runs WHERE team_id = %(team)s"),
            "monitors": one("SELECT count(*) FROM monitors WHERE team_id = %(team)s"),
            "pings": one("SELECT count(*) FROM events WHERE team_id = %(team)s "
                         "AND event_type = 'monitor.pinged'")}


async def existing(dsn: str) -> dict[str, Any]:
    """The ids of a database seeded before (``--keep``; migrated to head first), and a new
    write key of its team."""
    from core.apikeys import create_api_key
    from core.db import open_pool
    from core.migrate import upgrade

    await asyncio.to_thread(upgrade, dsn)

    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        key, record = await create_api_key(pool, "bench pages", "write")
        async with pool.connection() as conn:
            def one(query: str) -> Any:
                return conn.execute(query, {"team": record["team_id"]})
            jobs = await (await one("SELECT id FROM jobs WHERE team_id = %(team)s "
                                    "ORDER BY created_at, id")).fetchall()
            monitors = await (await one("SELECT id FROM monitors WHERE team_id = %(team)s "
                                        "ORDER BY created_at, id")).fetchall()
            runs = await (await one("SELECT count(*) AS n FROM runs")).fetchone()
            pings = await (await one("SELECT count(*) AS n FROM events "
                                     "WHERE event_type = 'monitor.pinged'")).fetchone()
    finally:
        await pool.close()
    await seed_alerts(dsn, record["team_id"], datetime.now(UTC))
    return {"key": key, "team_id": record["team_id"], "job": jobs[len(jobs) // 2]["id"],
            "monitor": monitors[len(monitors) // 2]["id"], "runs": runs["n"],
            "pings": pings["n"], "jobs": len(jobs), "monitors": len(monitors)}


Route = tuple[str, str]  # (label, path)


def routes(ids: dict[str, Any]) -> list[Route]:
    """What is timed: the JSON read models the pages are built from."""
    job, monitor = ids["job"], ids["monitor"]
    alerts = [("GET /v1/alerts (first page)", "/v1/alerts"),
              ("GET /v1/alerts?monitor=", f"/v1/alerts?monitor={monitor}")]
    if ids.get("monitor_alert"):
        alerts.append(("GET /v1/alerts/{id}/explain (a monitor's)",
                       f"/v1/alerts/{ids['monitor_alert']}/explain"))
    if ids.get("job_alert"):
        alerts.append(("GET /v1/alerts/{id}/explain (a job's)",
                       f"/v1/alerts/{ids['job_alert']}/explain"))
    return [*alerts,
        ("GET /v1/dashboard", "/v1/dashboard"),
        ("GET /v1/jobs (first page)", "/v1/jobs"),
        ("GET /v1/jobs/{id}", f"/v1/jobs/{job}"),
        ("GET /v1/jobs/{id}/runs", f"/v1/jobs/{job}/runs"),
        ("GET /v1/jobs/{id}/stats (hour, 24 h)", f"/v1/jobs/{job}/stats?bucket=hour"),
        ("GET /v1/jobs/{id}/events", f"/v1/jobs/{job}/events"),
        ("GET /v1/monitors (first page)", "/v1/monitors"),
        ("GET /v1/monitors/{id}", f"/v1/monitors/{monitor}"),
        ("GET /v1/monitors/{id}/pings", f"/v1/monitors/{monitor}/pings"),
        ("GET /v1/monitors/{id}/uptime (30 days)", f"/v1/monitors/{monitor}/uptime"),
        ("GET /v1/monitors/{id}/events", f"/v1/monitors/{monitor}/events"),
    ]


def page_routes(ids: dict[str, Any]) -> list[Route]:
    """What is timed: every page of the dashboard that a GET shows (signed in with the write
    key: the pages with every control)."""
    job, monitor = ids["job"], ids["monitor"]
    pages = [
        ("/ (overview)", "/"),
        ("/ui/jobs", "/ui/jobs"),
        ("/ui/jobs?state=paused (none)", "/ui/jobs?state=paused"),
        ("/ui/jobs?name=", "/ui/jobs?name=0500"),
        ("/ui/jobs/{id}", f"/ui/jobs/{job}"),
        ("/ui/jobs/{id}/edit", f"/ui/jobs/{job}/edit"),
        ("/ui/jobs/new", "/ui/jobs/new"),
        ("/ui/monitors", "/ui/monitors"),
        ("/ui/monitors/{id}", f"/ui/monitors/{monitor}"),
        ("/ui/monitors/{id}/edit", f"/ui/monitors/{monitor}/edit"),
        ("/ui/monitors/new", "/ui/monitors/new"),
        ("/ui/alerts", "/ui/alerts"),
        ("/ui/alerts?monitor=", f"/ui/alerts?monitor={monitor}"),
        ("/ui/alerts?job=", f"/ui/alerts?job={job}"),
        ("/ui/channels", "/ui/channels"),
        ("/ui/secrets", "/ui/secrets"),
        ("/ui/maintenance", "/ui/maintenance"),
        ("/ui/apikeys", "/ui/apikeys"),
        ("/ui/events", "/ui/events"),
        ("/ui/events?stream_type=monitor", "/ui/events?stream_type=monitor"),
        ("/ui/events?stream_type=channel", "/ui/events?stream_type=channel"),
    ]
    if ids.get("run"):
        pages.insert(6, ("/ui/runs/{id}", f"/ui/runs/{ids['run']}"))
    for kind in ("monitor", "job"):
        if ids.get(f"{kind}_alert"):
            pages.append((f"/ui/alerts/{{id}} (a {kind}'s)", f"/ui/alerts/{ids[kind + '_alert']}"))
    return pages


ASSET = re.compile(r'<(?:link rel="stylesheet"|script) (?:href|src)="(/[^"]+)"')


async def _sign_in(client: Any, key: str) -> None:
    form = await client.get("/ui/signin")
    token = re.search(r'name="csrf" value="([^"]+)"', form.text)
    assert token, "no sign-in form"
    answer = await client.post("/ui/signin", data={"csrf": token.group(1), "api_key": key},
                               follow_redirects=False)
    assert answer.status_code == 303, answer.text[:300]


async def time_routes(dsn: str, key: str, table_routes: Sequence[Route], repeat: int, *,
                      pages: bool = False) -> list[tuple[str, list[float], float]]:
    """``[(label, samples in seconds, size in kB)]`` for each route: with ``pages`` signed in
    to the dashboard, the size counting the stylesheet and scripts the page loads; else with
    the key as a bearer token. A page that answers 404 (not built) is left out."""
    from litestar.testing import AsyncTestClient

    from api.app import create_app

    app = create_app(dsn, Settings())
    headers = {} if pages else {"Authorization": f"Bearer {key}"}
    results = []
    async with AsyncTestClient(app=app) as client:
        if pages:
            await _sign_in(client, key)
        for label, path in table_routes:
            samples = []
            size = 0.0
            for i in range(repeat + 3):
                started = time.perf_counter()
                r = await client.get(path, headers=headers)
                elapsed = time.perf_counter() - started
                if r.status_code == 404 and pages:
                    break
                assert r.status_code == 200, (path, r.status_code, r.text[:300])
                size = len(r.content) / 1000
                if i >= 3:
                    samples.append(elapsed)
            if not samples:
                print(f"  {path}: 404, not timed", file=sys.stderr)
                continue
            if pages:
                for asset in sorted(set(ASSET.findall(r.text))):
                    size += len((await client.get(asset)).content) / 1000
            results.append((label, samples, size))
    return results


WATCH_JS = """
window.__seen = {}; window.__want = [];
document.addEventListener("live:updated", () => {
  for (const [selector, key] of window.__want) {
    if (!(key in window.__seen) && document.querySelector(selector)) {
      window.__seen[key] = Date.now();
    }
  }
});
"""


class _Server:
    """The app under uvicorn on a free port, in a thread of its own (its own event loop, as
    in ``cronledger serve``), so the browser driver does not share its loop."""

    def __init__(self, dsn: str) -> None:
        import threading

        import uvicorn

        from api.app import create_app
        from tests.processes import free_port

        self.port = free_port()
        config = uvicorn.Config(create_app(dsn, Settings()), host="127.0.0.1", port=self.port,
                                log_level="warning", lifespan="on",
                                timeout_graceful_shutdown=1)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    async def __aenter__(self) -> str:
        self.thread.start()
        while not self.server.started:  # start-up, not a synchronisation under test
            if not self.thread.is_alive():
                raise RuntimeError("the app did not start")
            await asyncio.sleep(0.05)
        return f"http://127.0.0.1:{self.port}"

    async def __aexit__(self, *_: object) -> None:
        self.server.should_exit = True
        await asyncio.to_thread(self.thread.join, 10)


async def time_live(dsn: str, key: str, team_id: uuid.UUID, monitor: uuid.UUID,
                    samples: int = 20) -> list[tuple[str, list[float], float]]:
    """The live path, one NOTIFY to an update on screen, in Debian's chromium: pages open on
    the monitors list (one, then ten) and on one monitor's page; each sample records a ping
    (the real statement, a monitor of the list's first page or that monitor) and then sends
    ``NOTIFY cronledger_projected`` as the projector does after a batch; the time is from the
    NOTIFY to the moment the page's live region shows that ping (a ``MutationObserver``-free
    listener on ``live:updated``, ``Date.now()`` in the page; one clock, one machine), the
    slowest of the open pages for each sample. Samples are 0.5 s apart so that each measures
    one notification, not the 0.25 s coalescing of a burst (api/ui/live.py). ``[]`` without
    chromium."""
    import shutil

    from playwright.async_api import async_playwright

    from core.crypto import KeyRing
    from core.monitors.commands import rotate_token
    from core.monitors.ping import Ping, open_ping_pool, record_pings

    chromium = shutil.which("chromium")
    if chromium is None:
        print("  live path: chromium is not installed, not measured", file=sys.stderr)
        return []
    with psycopg.connect(dsn) as conn:
        first = [r[0] for r in conn.execute(
            "SELECT id FROM monitors WHERE team_id = %s AND status <> 'deleted' "
            "ORDER BY created_at, id LIMIT %s", (team_id, samples)).fetchall()]
    from core.db import open_pool

    pool = await open_pool(dsn, min_size=1, max_size=2)
    ping_pool = await open_ping_pool(dsn, size=1, synchronous_commit=False)
    settings = Settings()
    ring = KeyRing.from_sources(settings.secret_key, settings.secret_key_file)
    actor = Actor(team_id=team_id)
    now = datetime.now(UTC)
    tokens = {m: await rotate_token(pool, actor, m, now, ring) for m in {*first, monitor}}
    results = []
    try:
        async with _Server(dsn) as base, async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=chromium,
                                                       args=["--no-sandbox"])
            context = await browser.new_context()
            await context.add_init_script(WATCH_JS)
            page = await context.new_page()
            await page.goto(base + "/ui/signin")
            await page.get_by_label("API key").fill(key)
            await page.get_by_role("button", name="Sign in").click()
            await page.wait_for_url(base + "/")
            for label, path, count, targets in (
                    ("monitors list, 1 open page", "/ui/monitors", 1, first),
                    ("monitors list, 10 open pages", "/ui/monitors", 10, first),
                    ("a monitor's page", f"/ui/monitors/{monitor}", 1, [monitor] * samples)):
                # one browser context per open page, as separate browsers: one context
                # keeps at most 6 HTTP/1.1 connections to a host, and each page's live
                # region holds one
                state = await context.storage_state()
                contexts = [await browser.new_context(storage_state=state)
                            for _ in range(count)]
                for c in contexts:
                    await c.add_init_script(WATCH_JS)
                pages = [await c.new_page() for c in contexts]
                for p in pages:
                    await p.goto(base + path)
                    await p.wait_for_function("document.querySelector('[data-live]')")
                took = []
                for n, target in enumerate(targets):
                    at = datetime.now(UTC)
                    iso = at.isoformat().replace("+00:00", "Z")
                    selector = (f'tr[data-monitor="{target}"] time[datetime="{iso}"]'
                                if path == "/ui/monitors" else f'time[datetime="{iso}"]')
                    want = f"s{n}"
                    for p in pages:
                        await p.evaluate("([s, k]) => window.__want.push([s, k])",
                                         [selector, want])
                    ping = Ping(token=tokens[target], kind="success", method="GET",
                                remote_addr="10.0.0.7", user_agent="bench", body=None,
                                body_size=0)
                    await record_pings(ping_pool, [(ping, at)])
                    async with await psycopg.AsyncConnection.connect(dsn,
                                                                     autocommit=True) as conn:
                        sent = time.time() * 1000
                        await conn.execute("NOTIFY cronledger_projected")
                    seen = [await p.wait_for_function(f"window.__seen['{want}']")
                            for p in pages]
                    shown = [float(await s.json_value()) for s in seen]
                    took.append((max(shown) - sent) / 1000)
                    await asyncio.sleep(0.5)  # one notification per sample (see above)
                results.append((f"NOTIFY -> on screen: {label}", took, 0.0))
                for c in contexts:
                    await c.close()
            await browser.close()
    finally:
        await ping_pool.close()
        await pool.close()
    return results


def table(rows: Sequence[tuple[str, list[float], float]], page_label: str = "route",
          target: Callable[[str], str] = lambda _: f"< {TARGET_MS} ms, < {TARGET_KB} kB",
          sizes: bool = True) -> str:
    lines = [f"| {page_label} | p50 ms | p95 ms | max ms |{' kB |' if sizes else ''} target |",
             f"|---|---:|---:|---:|{'---:|' if sizes else ''}---|"]
    for label, samples, size in rows:
        p50, p95 = percentile(samples, 50) * 1000, percentile(samples, 95) * 1000
        lines.append(f"| `{label}` | {p50:.1f} | {p95:.1f} | {max(samples) * 1000:.1f} | "
                     + (f"{size:.1f} | " if sizes else "") + f"{target(label)} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=1_000_000)
    parser.add_argument("--monitors", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch database (its DSN is printed)")
    parser.add_argument("--reuse", metavar="DSN",
                        help="time a database seeded before with --keep (no seeding)")
    parser.add_argument("--dsn", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--no-live", action="store_true",
                        help="leave out the live path (one NOTIFY to an update on screen)")
    parser.add_argument("--only", metavar="TEXT",
                        help="time only the routes whose label contains TEXT")
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: small sizes, the count checks only")
    args = parser.parse_args()
    if args.smoke:
        args.jobs, args.runs, args.monitors, args.repeat = 20, 300, 3, 1
        args.keep, args.reuse = False, None
    now = datetime.now(UTC).replace(microsecond=0)
    mismatch: list[str] = []
    with contextlib.ExitStack() as stack:
        if not args.dsn and not args.reuse:  # an embedded server for the run
            args.dsn = stack.enter_context(server_dsn())
        started = time.perf_counter()
        if args.reuse:
            dsn = args.reuse
            ids = asyncio.run(existing(dsn))
        else:
            dsn = stack.enter_context(
                scratch_database(args.dsn, "cronledger_bench_pages", keep=args.keep))
            ids = asyncio.run(seed(dsn, args.jobs, args.runs, args.monitors, now))
            if args.keep:
                print(f"scratch database kept: {dsn}", file=sys.stderr)
            found = seeded_counts(dsn, ids["team_id"])
            mismatch = [f"{what}: seeded {ids[what]}, found {found[what]}"
                        for what in found if found[what] != ids[what]]
        seconds = time.perf_counter() - started
        ids.update(more_ids(dsn, ids["team_id"], ids["job"]))
        def chosen(table_routes: list[Route]) -> list[Route]:
            return [r for r in table_routes if not args.only or args.only in r[0]]

        pages = asyncio.run(time_routes(dsn, ids["key"], chosen(page_routes(ids)),
                                        args.repeat, pages=True))
        rows = asyncio.run(time_routes(dsn, ids["key"], chosen(routes(ids)), args.repeat))
        live_rows = [] if args.smoke or args.no_live else asyncio.run(
            time_live(dsn, ids["key"], ids["team_id"], ids["monitor"]))
    what = "reused" if args.reuse else "seeded"
    # what the database holds (with --reuse, not the --jobs and --monitors defaults)
    print(f"\n{ids['jobs']:,} jobs, {ids['runs']:,} runs, {ids['monitors']:,} monitors "
          f"({ids['pings']:,} pings over 30 days), one team; {what} in {seconds:.0f} s\n")
    print(table(pages, page_label="page (HTML + its CSS/JS)"))
    print()
    print(table(rows))
    if live_rows:
        print()
        print(table(live_rows, page_label="live path (chromium)", sizes=False,
                    target=lambda _: "the projector's interval (1 s)"))
    if mismatch:
        print("the database does not hold what was seeded: " + "; ".join(mismatch),
              file=sys.stderr)
    return 1 if mismatch else 0


if __name__ == "__main__":
    raise SystemExit(main())
