"""Reporting benchmark: load N events (default 10 million) with COPY into a scratch database,
run the projector over them, then time the dashboard endpoint, the stats and uptime endpoints
and every example query of docs/reporting.md.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        uv run python bench/reporting.py [--events 10000000] [--keep] [--smoke]

A scratch database ``cronledger_bench_reporting_<random>`` is created and dropped at the end
unless ``--keep``. The exit status is 1 when the database does not hold the events and runs
loaded; ``--smoke`` (CI, ``bench/smoke.py``) loads 20,000 events and times each read twice.
The synthetic workload, generated hour by hour in time order over a span sized to the event
budget:
- 100 teams; team 0 (the one timed) owns 10 % of the jobs and monitors;
- 2,000 jobs firing every 5, 10, 15, 30 or 60 minutes: about 70 % of the events are runs
  (``run.started`` + final outcome; 90 % succeed, 6 % fail, 1 in 3 failures retried once,
  2 % skipped, 2 % missed), with the matching ``runs`` rows (COPY too);
- 1,000 monitors pinged evenly (about 30 % of the events), going down and up now and then.
The events' secondary indexes are dropped during the load and rebuilt after it (the schema is
the migrated one again before anything is timed). Endpoints are timed in process (Litestar's
ASGI test client: application and database, no network).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import math
import multiprocessing
import os
import random
import re
import statistics
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import scratch_database  # noqa: E402
from core.config import Settings  # noqa: E402
from tests.embedded_server import server_dsn  # noqa: E402

logging.getLogger("httpx").setLevel(logging.WARNING)

SCRATCH = "cronledger_bench_reporting"  # the scratch database's prefix
TEAMS, JOBS, MONITORS = 100, 2000, 1000
PERIODS = (5, 10, 15, 30, 60)  # minutes
RUN_SHARE = 0.7
WORKER = "bench-worker:1"
QUERY_TARGET_MS = 200  # the targets: example queries < 200 ms, dashboard < 50 ms
# The COPY statements of the lines Generator writes (bench/pages.py loads runs with them too).
EVENT_COPY = ("COPY events (stream_type, stream_id, stream_version, event_type, team_id, "
              "data, metadata, occurred_at, recorded_at) FROM STDIN")
RUN_COPY = ("COPY runs (id, job_id, team_id, scheduled_for, trigger, status, attempt, "
            "max_attempts, available_at, lease_expires_at, lease_token, worker_id, "
            "started_at, finished_at, lateness_ms, duration_ms, response_status, "
            "error_class, error, reason, version, created_at) FROM STDIN")


def iso(t: datetime) -> str:
    return t.isoformat()  # much faster than strftime; RFC 3339 with +00:00


class Generator:
    """Yields COPY lines for ``events`` and ``runs``, hour by hour, in time order."""

    def __init__(self, events: int, now: datetime, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.now = now
        self.teams = [uuid.uuid4() for _ in range(TEAMS)]
        self.jobs = [(uuid.uuid4(), self.owner(i), self.rng.choice(PERIODS)) for i in range(JOBS)]
        self.monitors = [(uuid.uuid4(), self.owner(i)) for i in range(MONITORS)]
        runs_per_minute = sum(1 / p for _, _, p in self.jobs)
        # 2.024 events per run: started + outcome (1 for the 4 % skipped or missed), and a
        # retry pair for a third of the 10 % failures
        self.minutes = round(events * RUN_SHARE / 2.024 / runs_per_minute)
        self.start = (now - timedelta(minutes=self.minutes)).replace(second=0, microsecond=0)
        self.pings = max(1, int(events * (1 - RUN_SHARE)) - 3 * MONITORS) // MONITORS
        self.ping_every = timedelta(minutes=self.minutes) / self.pings
        self.monitor_version = dict.fromkeys((m for m, _ in self.monitors), 0)
        self.monitor_down: dict[uuid.UUID, bool] = {}
        self.events = 0
        self.runs = 0

    def owner(self, i: int) -> uuid.UUID:
        """Team 0 owns every tenth job and monitor; the other teams share the rest."""
        return self.teams[0] if i % 10 == 0 else self.teams[1 + i % (TEAMS - 1)]

    def event(self, stream_type: str, stream_id: object, version: int, kind: str,
              team: object, data: str, at: datetime, at_text: str | None = None,
              ) -> tuple[datetime, str]:
        self.events += 1
        at_text = at_text or iso(at)
        return at, (f"{stream_type}\t{stream_id}\t{version}\t{kind}\t{team}\t{data}\t"
                    f'{{"actor": "bench"}}\t{at_text}\t{at_text}\n')

    def setup_events(self) -> list[str]:
        lines = []
        for job, team, period in self.jobs:
            data = (f'{{"name": "job {job.hex[:8]}", "schedule": "*/{period} * * * *", '
                    f'"timezone": "UTC", "request": {{"method": "GET", "url": '
                    f'"https://example.com/hook", "headers": {{}}, "body": null}}, '
                    f'"timeout_seconds": 30.0, "retry": {{"attempts": 2, "backoff": "fixed", '
                    f'"delay_seconds": 10.0, "max_delay_seconds": 300.0}}, "overlap": "skip", '
                    f'"catchup": "latest", "status": "active", "anchor_at": "{iso(self.start)}"}}')
            lines.append(self.event("job", job, 1, "job.created", team, data, self.start)[1])
        for monitor, team in self.monitors:
            self.monitor_version[monitor] = 1
            lines.append(self.event("monitor", monitor, 1, "monitor.created", team,
                                    f'{{"name": "monitor {monitor.hex[:8]}"}}', self.start)[1])
        return lines

    def jobs_rows(self) -> list[str]:
        return [
            f"{job}\t{team}\tjob {job.hex[:8]}\t*/{period} * * * *\tUTC\t"
            '{"method": "GET", "url": "https://example.com/hook", "headers": {}, "body": null}\t'
            '30.0\t{"attempts": 2, "backoff": "fixed", "delay_seconds": 10.0, '
            '"max_delay_seconds": 300.0}\tskip\tlatest\tactive\t1\t'
            f"{iso(self.start)}\t{iso(self.start)}\t{iso(self.start)}\n"
            for job, team, period in self.jobs
        ]

    def _run(self, job: str, team: str, slot: datetime,
             out: list[tuple[datetime, str]], runs: list[str]) -> None:
        """One run of ``job`` at ``slot``: its events and its ``runs`` row (ids as text)."""
        rng = self.rng
        run = "%032x" % rng.getrandbits(128)  # noqa: UP031 - fast; PostgreSQL reads plain hex
        self.runs += 1
        roll = rng.random()
        at = iso(slot)
        base = f'"job_id": "{job}", "scheduled_for": "{at}", "trigger": "schedule"'
        if roll < 0.04:
            kind = "skipped" if roll < 0.02 else "missed"
            out.append(self.event("run", run, 1, f"run.{kind}", team,
                                  f'{{{base}, "max_attempts": 2, "reason": "bench", '
                                  f'"finished_at": "{at}"}}', slot, at))
            runs.append(f"{run}\t{job}\t{team}\t{at}\tschedule\t{kind}\t0\t2\t\\N\t\\N\t"
                        f"\\N\t\\N\t\\N\t{at}\t\\N\t\\N\t\\N\t\\N\t\\N\tbench\t1\t{at}\n")
            return
        lateness = int(rng.expovariate(1 / 25))
        started = slot + timedelta(milliseconds=lateness)
        started_at = iso(started)
        out.append(self.event("run", run, 1, "run.started", team,
                              f'{{{base}, "max_attempts": 2, "attempt": 1, '
                              f'"worker_id": "{WORKER}"}}', slot, at))
        failed = roll > 0.90
        version, attempt = 1, 1
        if failed and rng.random() < 1 / 3:  # one retry
            duration = int(rng.lognormvariate(5.3, 0.6))
            out.append(self.event("run", run, 2, "run.retry_scheduled", team,
                                  f'{{{base}, "attempt": 1, "started_at": "{started_at}", '
                                  f'"duration_ms": {duration}, "lateness_ms": {lateness}, '
                                  f'"response_status": 503, "error_class": "http_status", '
                                  f'"error": "HTTP 503", "available_at": '
                                  f'"{iso(started + timedelta(seconds=10))}"}}', started,
                                  started_at))
            out.append(self.event("run", run, 3, "run.started", team,
                                  f'{{{base}, "max_attempts": 2, "attempt": 2, '
                                  f'"worker_id": "{WORKER}"}}', started, started_at))
            version, attempt = 3, 2
        duration = int(rng.lognormvariate(5.3, 0.6))
        finished = started + timedelta(milliseconds=duration)
        finished_at = iso(finished)
        status, code = ("failed", 500) if failed else ("succeeded", 200)
        error = ('"http_status"', '"HTTP 500"') if failed else ("null", "null")
        out.append(self.event("run", run, version + 1, f"run.{status}", team,
                              f'{{{base}, "attempt": {attempt}, "started_at": "{started_at}", '
                              f'"duration_ms": {duration}, "lateness_ms": {lateness}, '
                              f'"response_status": {code}, "error_class": {error[0]}, '
                              f'"error": {error[1]}, "finished_at": "{finished_at}"}}',
                              finished, finished_at))
        err_cols = "http_status\tHTTP 500" if failed else "\\N\t\\N"
        runs.append(f"{run}\t{job}\t{team}\t{at}\tschedule\t{status}\t{attempt}\t2\t\\N\t"
                    f"\\N\t\\N\t{WORKER}\t{started_at}\t{finished_at}\t{lateness}\t"
                    f"{duration}\t{code}\t{err_cols}\t\\N\t{version + 1}\t{at}\n")

    def _monitor(self, monitor: uuid.UUID, team: uuid.UUID, at: datetime,
                 out: list[tuple[datetime, str]]) -> None:
        def append(kind: str, data: str = "{}") -> None:
            self.monitor_version[monitor] += 1
            out.append(self.event("monitor", monitor, self.monitor_version[monitor], kind, team,
                                  data, at))

        if self.monitor_down.get(monitor):
            if self.rng.random() < 0.3:
                self.monitor_down[monitor] = False
                append("monitor.pinged", '{"kind": "success"}')
                append("monitor.up")
            return
        if self.rng.random() < 0.002:
            self.monitor_down[monitor] = True
            append("monitor.down")
            return
        kind = "fail" if self.rng.random() < 0.01 else "success"
        append("monitor.pinged", f'{{"kind": "{kind}"}}')

    def hours(self) -> Iterator[tuple[list[str], list[str]]]:
        """``(event lines, run lines)`` per hour of the span, events sorted by time."""
        hour = self.start
        offsets = [self.rng.random() for _ in self.monitors]
        job_texts = [str(job) for job, _, _ in self.jobs]
        team_texts = [str(team) for _, team, _ in self.jobs]
        while hour < self.now:
            end = min(hour + timedelta(hours=1), self.now)
            out: list[tuple[datetime, str]] = []
            runs: list[str] = []
            for (_, _, period), job_text, team_text in zip(
                    self.jobs, job_texts, team_texts, strict=True):
                elapsed = (hour - self.start).total_seconds() / 60
                slot = self.start + timedelta(minutes=math.ceil(elapsed / period) * period)
                while slot < end:
                    if slot >= hour:
                        self._run(job_text, team_text, slot, out, runs)
                    slot += timedelta(minutes=period)
            for (monitor, team), offset in zip(self.monitors, offsets, strict=True):
                k = max(0, int((hour - self.start) / self.ping_every - offset))
                at = self.start + (k + offset) * self.ping_every
                while at < end:
                    if at >= hour:
                        self._monitor(monitor, team, at, out)
                    at += self.ping_every
            out.sort(key=lambda item: item[0])
            yield [line for _, line in out], runs
            hour = end


def _produce(gen: Generator, chunks: Any) -> None:
    """Producer process: COPY text of each hour, then ``("done", events, runs)``."""
    for events, runs in gen.hours():
        chunks.put(("".join(events).encode(), "".join(runs).encode(), len(events)))
    chunks.put(("done", gen.events, gen.runs))


def _secondary(conn: psycopg.Connection, table: str) -> tuple[list[str], list[str]]:
    """(drop statements, re-create statements) for a table's non-pkey constraints and indexes."""
    constraints = conn.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint "
        "WHERE conrelid = %s::regclass AND contype IN ('u', 'f')", (table,)).fetchall()
    indexes = conn.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND indexname NOT IN "
        "(SELECT conname FROM pg_constraint WHERE conrelid = %s::regclass)",
        (table, table)).fetchall()
    drop = [f"ALTER TABLE {table} DROP CONSTRAINT {name}" for name, _ in constraints]
    drop += [f"DROP INDEX {name}" for name, _ in indexes]
    create = [definition for _, definition in indexes]
    create += [f"ALTER TABLE {table} ADD CONSTRAINT {name} {definition}"
               for name, definition in constraints]
    return drop, create


def load(dsn: str, n_events: int) -> tuple[Generator, float]:
    """Fill the scratch database; returns the generator (ids) and the load time in seconds."""
    gen = Generator(n_events, datetime.now(UTC).replace(microsecond=0))
    started = time.perf_counter()
    with psycopg.connect(dsn) as conn:
        conn.execute("SET synchronous_commit = off")
        conn.execute("SET maintenance_work_mem = '512MB'")
        with conn.cursor().copy("COPY teams (id, name) FROM STDIN") as copy:
            for i, team in enumerate(gen.teams):
                copy.write_row((team, f"bench team {i}"))
        with conn.cursor().copy(
                "COPY jobs (id, team_id, name, schedule, timezone, request, timeout_seconds, "
                "retry, overlap, catchup, status, version, anchor_at, created_at, updated_at) "
                "FROM STDIN") as copy:
            copy.write("".join(gen.jobs_rows()))
        undo: list[str] = []
        for table in ("events", "runs"):
            drop, create = _secondary(conn, table)
            for statement in drop:
                conn.execute(statement)
            undo += create
        conn.commit()
        event_copy, run_copy = EVENT_COPY, RUN_COPY
        with conn.cursor().copy(event_copy) as copy:
            copy.write("".join(gen.setup_events()))
        # A second process generates while this one copies (the machine has two cores).
        chunks: multiprocessing.Queue[Any] = multiprocessing.get_context("fork").Queue(4)
        producer = multiprocessing.get_context("fork").Process(
            target=_produce, args=(gen, chunks), daemon=True)
        producer.start()
        pending = 0
        while (chunk := chunks.get())[0] != "done":
            events, runs, count = chunk
            with conn.cursor().copy(event_copy) as copy:
                copy.write(events)
            with conn.cursor().copy(run_copy) as copy:
                copy.write(runs)
            pending += count
            if pending >= 500_000:  # a transaction per ~500k events: several tx_ids
                conn.commit()
                pending = 0
                print(f"  loaded {gen.events + count:,}… events", file=sys.stderr)
            gen.events += count
        _, gen.events, gen.runs = chunk
        producer.join()
        conn.commit()
        print(f"  rebuilding indexes of {gen.events:,} events and {gen.runs:,} runs",
              file=sys.stderr)
        for statement in undo:
            conn.execute(statement)
        conn.commit()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    return gen, time.perf_counter() - started


async def project(dsn: str) -> tuple[int, float]:
    from core.clock import SystemClock
    from core.db import open_pool
    from core.projections.projector import Projector

    pool = await open_pool(dsn, min_size=1, max_size=2)
    try:
        batch = Settings().projector_batch
        projector = Projector(pool, dsn, SystemClock(), batch_size=batch)
        started = time.perf_counter()
        applied = await projector.run_once()
        return applied, time.perf_counter() - started
    finally:
        await pool.close()


def timings(samples: list[float]) -> tuple[float, float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return statistics.median(ordered), p95, ordered[-1]


async def time_endpoints(dsn: str, gen: Generator, repeat: int) -> list[tuple[str, list[float]]]:
    from litestar.testing import AsyncTestClient

    from api.app import create_app
    from core.apikeys import create_api_key
    from core.db import open_pool

    pool = await open_pool(dsn, min_size=1, max_size=1)
    try:
        key, _ = await create_api_key(pool, gen.teams[0], "read")
    finally:
        await pool.close()
    job = next(j for j, team, period in gen.jobs if team == gen.teams[0] and period == 5)
    monitor = next(m for m, team in gen.monitors if team == gen.teams[0])
    app = create_app(dsn, Settings())
    headers = {"Authorization": f"Bearer {key}"}
    routes = [
        ("GET /v1/dashboard", "/v1/dashboard"),
        ("GET /v1/jobs/{id}/stats (hour, 24 h)", f"/v1/jobs/{job}/stats?bucket=hour"),
        ("GET /v1/jobs/{id}/stats (day, 30 days)", f"/v1/jobs/{job}/stats?bucket=day"),
        ("GET /v1/monitors/{id}/uptime (30 days)", f"/v1/monitors/{monitor}/uptime"),
    ]
    results = []
    async with AsyncTestClient(app=app) as client:
        for name, url in routes:
            samples = []
            for i in range(repeat + 3):
                started = time.perf_counter()
                r = await client.get(url, headers=headers)
                elapsed = time.perf_counter() - started
                assert r.status_code == 200, r.text
                if i >= 3:  # warm-up
                    samples.append(elapsed)
            results.append((name, samples))
    return results


def time_queries(dsn: str, gen: Generator, repeat: int) -> list[tuple[str, list[float]]]:
    text = (ROOT / "docs" / "reporting.md").read_text()
    examples = text.split("## Example queries", 1)[1].split("\n## ", 1)[0]
    found = re.findall(r"^### (.+?)\n.*?```sql\n(.*?)```", examples, re.MULTILINE | re.DOTALL)
    job = next(j for j, team, period in gen.jobs if period == 5)
    results = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET TIME ZONE 'UTC'")
        conn.execute("SET ROLE cronledger_reporting")
        for title, query in found:
            query = query.replace(":'job_id'", "%(job_id)s::uuid")
            samples = []
            for i in range(repeat + 1):
                started = time.perf_counter()
                conn.execute(query, {"job_id": job}).fetchall()
                if i:
                    samples.append(time.perf_counter() - started)
            results.append((title, samples))
    return results


def table(rows: list[tuple[str, list[float]]], target_ms: Callable[[str], float]) -> str:
    lines = ["| what | p50 ms | p95 ms | max ms | target |", "|---|---:|---:|---:|---|"]
    for name, samples in rows:
        p50, p95, worst = timings(samples)
        lines.append(f"| {name} | {p50 * 1000:.1f} | {p95 * 1000:.1f} | {worst * 1000:.1f} | "
                     f"< {target_ms(name):.0f} ms |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--dsn", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: small sizes, the count checks only")
    args = parser.parse_args()
    if args.smoke:
        args.events, args.repeat, args.keep = 20_000, 2, False
    with contextlib.ExitStack() as stack:
        admin = args.dsn or stack.enter_context(server_dsn())  # embedded without a server
        dsn = stack.enter_context(scratch_database(admin, SCRATCH, keep=args.keep))
        if args.keep:
            print(f"scratch database kept: {dsn}", file=sys.stderr)
        gen, load_seconds = load(dsn, args.events)
        print(f"loaded {gen.events:,} events ({gen.runs:,} runs) over "
              f"{gen.minutes / 1440:.1f} days in {load_seconds:.0f} s "
              f"({gen.events / load_seconds:,.0f} events/s)", file=sys.stderr)
        with psycopg.connect(dsn) as conn:
            held = conn.execute("SELECT (SELECT count(*) FROM events), "
                                "(SELECT count(*) FROM runs)").fetchone()
        applied, seconds = asyncio.run(project(dsn))
        print(f"projected {applied:,} events in {seconds:.0f} s", file=sys.stderr)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
        endpoints = asyncio.run(time_endpoints(dsn, gen, args.repeat))
        queries = time_queries(dsn, gen, max(5, args.repeat // 2))
    print(f"\n{gen.events:,} events ({gen.runs:,} runs, {JOBS:,} jobs, {MONITORS:,} monitors, "
          f"{TEAMS} teams) over {gen.minutes / 1440:.1f} days; load (COPY + indexes + "
          f"analyze) {load_seconds:.0f} s\n")
    print("| projector | events | seconds | events/s | target |\n|---|---:|---:|---:|---|")
    print(f"| catch-up from an empty checkpoint, batches of {Settings().projector_batch:,} "
          f"| {applied:,} | {seconds:.1f} | {applied / seconds:,.0f} | ≥ 5,000 |\n")
    print(table(endpoints, lambda name: 50 if "dashboard" in name else QUERY_TARGET_MS))
    print()
    print(table(queries, lambda name: QUERY_TARGET_MS))
    if held != (gen.events, gen.runs):
        print(f"the database holds {held[0]:,} events and {held[1]:,} runs; "
              f"{gen.events:,} and {gen.runs:,} were loaded", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
