"""Soak benchmark: a simulated year of history, pruned as time passes (docs/benchmarks.md,
"Storage over a year").

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        uv run python bench/soak.py [--days 365] [--monitors 1000] [--jobs 1000] \\
        [--pings-per-day 24] [--runs-per-day 4] [--alerts-per-day 100] [--prune-every 7]

A scratch database is created and dropped. The clock is injected: each simulated day the
retention pass (:func:`core.retention.maintenance.ensure_partitions`) creates the partitions
ahead; the day's history is written with COPY (a compressed rate: ``--pings-per-day`` pings
per monitor, ``--runs-per-day`` runs per job, each a ``runs`` row, ``run.started`` and
``run.succeeded`` events and an attempt with a 200-byte response; ``--alerts-per-day``
notifications, delivered, each a row of the outbox); the projector checkpoint is
moved to the end of the log (the read models themselves are not built here: the reporting
benchmark does that); and every ``--prune-every`` days a prune runs
(:func:`core.retention.prune.prune`, default retention). At the end of each simulated month it
prints the database size, the history tables' (the four kinds of docs/operations.md,
"Retention"), the prune snapshot's, the ``runs`` rows' (with the count of rows), the outbox's
(``notifications``) and the system catalog's (``pg_catalog``: the partitions and snapshot
copies created and dropped leave dead catalog rows until vacuumed). Once, at the first prune
after every kind's horizon (runs rows and notifications deleted too), it times the ping
statement (a real monitor) and the scheduler's claim (``claim_due``) before, while and after
the prune, and prints the prune's steps; at the end the reporting reads.

Count check: every ping event and run event written (COPY, and the probes' pings) is either
still in the log or was in a leaf a prune dropped; otherwise the exit status is 1.
``--smoke`` (CI, ``bench/smoke.py``): 12 simulated days of 5 monitors and 5 jobs with
horizons of 3 to 5 days (``CRONLEDGER_RETENTION_*``), a prune every 3 days (one timed).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import random
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import percentile, scratch_database  # noqa: E402
from core.actor import Actor  # noqa: E402
from core.apikeys import create_api_key  # noqa: E402
from core.channels.commands import create_channel  # noqa: E402
from core.channels.sealing import AesGcmSealer  # noqa: E402
from core.config import load_settings  # noqa: E402
from core.db import open_pool  # noqa: E402
from core.events import to_json  # noqa: E402
from core.jobs.commands import create_job  # noqa: E402
from core.monitors.commands import create_monitor  # noqa: E402
from core.monitors.ping import Ping, open_ping_pool, record_ping  # noqa: E402
from core.monitors.queries import list_pings  # noqa: E402
from core.projections import queries as reports  # noqa: E402
from core.retention.maintenance import ensure_partitions  # noqa: E402
from core.retention.prune import PruneResult, prune  # noqa: E402
from core.retention.size import sizes  # noqa: E402
from core.runs.claim import claim_due  # noqa: E402
from tests.embedded_server import server_dsn  # noqa: E402

START = datetime(2027, 1, 1, tzinfo=UTC)
HISTORY = ("pings", "runs", "attempt_bodies", "deliveries")


def _tsv(rows: list[tuple[object, ...]]) -> bytes:
    out = io.StringIO()
    for row in rows:
        out.write("\t".join("\\N" if v is None else str(v) for v in row) + "\n")
    return out.getvalue().encode()


async def _copy(conn, statement: str, rows: list[tuple[object, ...]]) -> None:  # noqa: ANN001
    async with conn.cursor() as cur, cur.copy(statement) as copy:
        await copy.write(_tsv(rows))


async def write_day(pool, day: datetime, team: uuid.UUID, monitors: list[uuid.UUID],  # noqa: ANN001
                    versions: dict[uuid.UUID, int], jobs: list[uuid.UUID], channel: uuid.UUID,
                    args, written: dict[str, int]) -> None:  # noqa: ANN001
    rnd = random.Random(day.toordinal())
    events, runs, attempts, notes = [], [], [], []
    for i in range(args.alerts_per_day):
        at = day + timedelta(seconds=(i + rnd.random()) * 86_400 / max(args.alerts_per_day, 1))
        notes.append((uuid.uuid4(), team, channel, "job", jobs[i % len(jobs)], "failed",
                      '{"text": "job failed"}', "sent", 1, 3, 2, at.isoformat(),
                      at.isoformat(), at.isoformat()))
    for m in monitors:
        for i in range(args.pings_per_day):
            at = day + timedelta(seconds=(i + rnd.random()) * 86_400 / args.pings_per_day)
            versions[m] += 1
            events.append(("monitor", m, versions[m], "monitor.pinged", team,
                           '{"kind": "success", "method": "GET"}', at.isoformat()))
    body = "\\\\x" + "61" * 200
    for j in jobs:
        for i in range(args.runs_per_day):
            slot = day + timedelta(seconds=i * 86_400 / args.runs_per_day)
            run = uuid.uuid4()
            done = slot + timedelta(milliseconds=rnd.randint(20, 900))
            runs.append((run, j, team, slot.isoformat(), "schedule", "succeeded", 1, 1,
                         slot.isoformat(), done.isoformat(), 5, 300, 200, 2, slot.isoformat()))
            data = to_json({"job_id": str(j), "scheduled_for": slot.isoformat(),
                            "trigger": "schedule"})
            events.append(("run", run, 1, "run.started", team, data, slot.isoformat()))
            events.append(("run", run, 2, "run.succeeded", team, '{"status": 200}',
                           done.isoformat()))
            attempts.append((run, 1, slot.isoformat(), done.isoformat(), 300,
                             '{"method": "GET"}', 200, "{}", body))
    events.sort(key=lambda e: e[6])
    written["pings"] += sum(1 for e in events if e[3] == "monitor.pinged")
    written["runs"] += sum(1 for e in events if e[0] == "run")
    async with pool.connection() as conn:
        await _copy(conn, "COPY runs (id, job_id, team_id, scheduled_for, trigger, status, "
                          "attempt, max_attempts, started_at, finished_at, lateness_ms, "
                          "duration_ms, response_status, version, created_at) FROM STDIN", runs)
        await _copy(conn, "COPY events (stream_type, stream_id, stream_version, event_type, "
                          "team_id, data, occurred_at) FROM STDIN", events)
        await _copy(conn, "COPY run_attempts (run_id, attempt, started_at, finished_at, "
                          "duration_ms, request, response_status, response_headers, "
                          "response_body) FROM STDIN", attempts)
        await _copy(conn, "COPY notifications (id, team_id, channel_id, subject_type, "
                          "subject_id, event, message, status, attempt, max_attempts, version, "
                          "created_at, sent_at, finished_at) FROM STDIN", notes)
        # The projector is taken as caught up (the read models are the reporting bench's).
        await conn.execute(
            "UPDATE projection_checkpoints SET (tx_id, global_position) = "
            "(SELECT max(tx_id), max(global_position) FROM events) WHERE name = 'reporting'")
        await conn.commit()


async def probe(pool, ping_pool, token: str, now: datetime, n: int  # noqa: ANN001
                ) -> tuple[list[float], list[float]]:
    """``n`` pings and ``n`` claims, timed one after the other (ms)."""
    pings, claims = [], []
    for _ in range(n):
        t = time.perf_counter()
        await record_ping(ping_pool, Ping(token=token, kind="success", method="GET"), now)
        pings.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        await claim_due(pool, now, limit=100, lookahead=0, worker_id="soak", lease_margin=30)
        claims.append((time.perf_counter() - t) * 1000)
    return pings, claims


SMOKE_SETTINGS = {"CRONLEDGER_RETENTION_PINGS_DAYS": "3", "CRONLEDGER_RETENTION_RUNS_DAYS": "5",
                  "CRONLEDGER_RETENTION_ATTEMPT_BODIES_DAYS": "2",
                  "CRONLEDGER_RETENTION_DELIVERIES_DAYS": "5"}


def dropped_rows(result: PruneResult | None, parent: str) -> int:
    """Rows of the leaves of ``parent`` a prune dropped (planned and not deferred)."""
    if result is None:
        return 0
    return sum(p.rows for p in result.planned
               if p.leaf.parent == parent and p.leaf.name not in result.deferred)


async def main(args: argparse.Namespace) -> bool:
    """The soak; whether every ping and run event written is in the log or was pruned."""
    settings = load_settings(SMOKE_SETTINGS if args.smoke else {})
    written = {"pings": 0, "runs": 0}
    dropped = {"pings": 0, "runs": 0}

    def count_dropped(result: PruneResult | None) -> None:
        dropped["pings"] += dropped_rows(result, "events_pings")
        dropped["runs"] += dropped_rows(result, "events_runs")

    with server_dsn() as admin, scratch_database(admin, "cronledger_bench_soak") as dsn:
        pool = await open_pool(dsn, min_size=2, max_size=6)
        ping_pool = await open_ping_pool(dsn, size=1)
        _, record = await create_api_key(pool, "soak", "write")
        actor = Actor(team_id=record["team_id"], key_id=record["id"])
        await ensure_partitions(pool, START - timedelta(hours=1), settings.partitions_ahead_days)
        probe_monitor, token = await create_monitor(pool, actor, {
            "name": "probe", "schedule": "1h"}, START - timedelta(hours=1))
        jobs = [await create_job(pool, actor, {
            "name": f"job {i}", "schedule": "0 0 1 1 *",
            "request": {"url": "http://127.0.0.1:9/"}}, START - timedelta(hours=1))
            for i in range(args.jobs)]
        channel, _ = await create_channel(pool, AesGcmSealer.random(), actor, {
            "name": "alerts", "kind": "webhook", "url": "http://127.0.0.1:9/"},
            START - timedelta(hours=1))
        monitors = [uuid.uuid4() for _ in range(args.monitors)]
        versions = dict.fromkeys(monitors, 1)
        print(f"{'month':>7} {'database MB':>12} {'history MB':>11} {'snapshot MB':>12} "
              f"{'runs rows MB':>13} {'runs rows':>10} {'outbox MB':>10} {'catalog MB':>11} "
              f"{'write s':>8} {'prune s':>8}")
        timed: dict[str, list[float]] = {}
        steps: dict[str, float] = {}
        deleted: dict[str, int] = {}
        write_s = prune_s = 0.0
        for d in range(args.days):
            day = START + timedelta(days=d)
            await ensure_partitions(pool, day, settings.partitions_ahead_days)
            t = time.perf_counter()
            await write_day(pool, day, actor.team_id, monitors, versions, jobs, channel, args,
                            written)
            write_s += time.perf_counter() - t
            if d % args.prune_every == args.prune_every - 1:
                now = day + timedelta(hours=23)
                if not timed and d > max(settings.retention_pings_days,
                                         settings.retention_runs_days,
                                         settings.retention_deliveries_days):
                    timed["before"] = await probe(pool, ping_pool, token, now, args.probes)
                    t = time.perf_counter()
                    task = asyncio.create_task(prune(pool, settings, now))
                    pings: list[float] = []
                    claims: list[float] = []
                    while not task.done():
                        p, c = await probe(pool, ping_pool, token, now, 1)
                        pings += p
                        claims += c
                    result = task.result()
                    count_dropped(result)
                    prune_s += time.perf_counter() - t
                    timed["while"] = (pings, claims)
                    timed["after"] = await probe(pool, ping_pool, token, now, args.probes)
                    timed["prune"] = [len(result.planned) if result else -1]
                    if result is not None:
                        steps = result.seconds
                        deleted = result.deleted
                else:
                    t = time.perf_counter()
                    count_dropped(await prune(pool, settings, now))
                    prune_s += time.perf_counter() - t
            if (day + timedelta(days=1)).day == 1:
                rows, total = await sizes(pool)
                history = sum(int(r["bytes"]) for r in rows if r["kind"] in HISTORY)
                runs_rows = sum(int(r["bytes"]) for r in rows if r["family"] == "runs")
                copies = sum(int(r["bytes"]) for r in rows if r["kind"] == "snapshots")
                outbox = sum(int(r["bytes"]) for r in rows if r["family"] == "notifications")
                async with pool.connection() as conn:
                    cur = await conn.execute("SELECT count(*) AS n FROM runs")
                    run_count = (await cur.fetchone())["n"]
                    cur = await conn.execute(
                        "SELECT sum(pg_total_relation_size(c.oid))::bigint AS b FROM pg_class c "
                        "JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE n.nspname = 'pg_catalog' AND c.relkind = 'r'")
                    catalog = (await cur.fetchone())["b"]
                print(f"{day:%Y-%m} {total / 1e6:12.0f} {history / 1e6:11.0f} "
                      f"{copies / 1e6:12.0f} {runs_rows / 1e6:13.0f} {run_count:10d} "
                      f"{outbox / 1e6:10.1f} {catalog / 1e6:11.0f} {write_s:8.1f} "
                      f"{prune_s:8.1f}", flush=True)
                write_s = prune_s = 0.0
        async with pool.connection() as conn:
            cur = await conn.execute(
                "SELECT c.relname, pg_total_relation_size(c.oid)::bigint AS b, "
                "coalesce(s.n_dead_tup, 0) AS dead, coalesce(s.n_live_tup, 0) AS live "
                "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "LEFT JOIN pg_stat_all_tables s ON s.relid = c.oid "
                "WHERE n.nspname = 'pg_catalog' AND c.relkind = 'r' ORDER BY 2 DESC LIMIT 5")
            print("\nlargest catalog tables: " + ", ".join(
                f"{r['relname']} {r['b'] / 1e6:.0f} MB ({r['live']} live, {r['dead']} dead)"
                for r in await cur.fetchall()))
        rows, total = await sizes(pool)
        print(f"\nat the end: {total / 1e6:.0f} MB; largest: " + ", ".join(
            f"{r['family']} ({r['kind']}) {int(r['bytes']) / 1e6:.0f} MB" for r in rows[:8]))
        print()
        print(f"{'phase':8} {'pings':>6} {'ping p50 ms':>12} {'ping p99 ms':>12} "
              f"{'ping max ms':>12} {'claim p50 ms':>13} {'claim max ms':>13}")
        for phase in ("before", "while", "after"):
            if phase in timed:
                p, c = timed[phase]
                print(f"{phase:8} {len(p):6d} {percentile(p, 50):12.1f} {percentile(p, 99):12.1f} "
                      f"{max(p):12.1f} {percentile(c, 50):13.1f} {max(c):13.1f}")
        if steps:
            print("the timed prune: " + ", ".join(f"{k} {v:.2f} s" for k, v in steps.items())
                  + "; deleted " + ", ".join(f"{k} {v}" for k, v in deleted.items() if v))
        now = START + timedelta(days=args.days)
        print()
        for name, call in (
            ("dashboard", lambda: reports.dashboard(pool, actor, now)),
            ("job stats (30 days)", lambda: reports.job_stats(
                pool, actor, jobs[0], start=now - timedelta(days=30), end=now, bucket="day",
                now=now)),
            ("monitor uptime (30 days)", lambda: reports.monitor_uptime(
                pool, actor, probe_monitor, start=now - timedelta(days=30), end=now, now=now)),
            ("monitor pings (100)", lambda: list_pings(pool, actor, probe_monitor, limit=100,
                                                        before_version=None)),
        ):
            times = []
            for _ in range(20):
                t = time.perf_counter()
                await call()
                times.append((time.perf_counter() - t) * 1000)
            print(f"{name:28} p50 {percentile(times, 50):7.1f} ms   max {max(times):7.1f} ms")
        written["pings"] += sum(len(p) for p, _ in (timed[k] for k in ("before", "while",
                                                                       "after") if k in timed))
        async with pool.connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) FILTER (WHERE event_type = 'monitor.pinged') AS pings, "
                "count(*) FILTER (WHERE stream_type = 'run') AS runs FROM events")
            held = await cur.fetchone()
        await ping_pool.close()
        await pool.close()
    print()
    ok = True
    for kind in ("pings", "runs"):
        print(f"{kind} events: written {written[kind]}, in the log {held[kind]}, pruned "
              f"{dropped[kind]}")
        ok = ok and written[kind] == held[kind] + dropped[kind]
    return ok


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--monitors", type=int, default=1000)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--pings-per-day", type=int, default=24)
    parser.add_argument("--runs-per-day", type=int, default=4)
    parser.add_argument("--alerts-per-day", type=int, default=100)
    parser.add_argument("--prune-every", type=int, default=7)
    parser.add_argument("--probes", type=int, default=200)
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: small sizes, short horizons, the count check only")
    arguments = parser.parse_args()
    if arguments.smoke:
        arguments.days, arguments.monitors, arguments.jobs = 12, 5, 5
        arguments.pings_per_day, arguments.runs_per_day, arguments.alerts_per_day = 4, 2, 4
        arguments.prune_every, arguments.probes = 3, 5
    raise SystemExit(0 if asyncio.run(main(arguments)) else 1)
