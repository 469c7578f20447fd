"""cronledger at scale: many jobs spread over a minute, and a worker's memory with a million
jobs defined.

``spread``: ``--jobs`` jobs (default 10,000), job ``i`` due at second ``i % 60`` of every
minute (``S * * * * *``), fired by 1 or 2 `cronledger worker` processes for ``--minutes`` full
minutes; prints fire lateness (sink arrival minus slot) p50/p99/max, missed and duplicate
slots, and the peak RSS per worker.

``million``: ``--defined`` jobs (default 1,000,000) with daily schedules spread evenly over the
day (job ``n`` at ``n`` seconds after midnight, modulo a day: about 11.6 due per second), the
first created by the API's command and the rest copied from it in SQL; one worker fires them
for ``--seconds`` seconds; prints the peak RSS, lateness and missed slots.

    uv run python bench/scale.py spread [--jobs 10000] [--workers 1 2] [--minutes 2]
    uv run python bench/scale.py million [--defined 1000000] [--seconds 60]
    uv run python bench/scale.py storage [--pings 200000] [--monitors 100]
    uv run python bench/scale.py --smoke

``storage``: ``--pings`` pings (a 20-byte body each) spread over ``--monitors`` monitors,
written by the ping route's statement in batches of 500, then the projector; prints the growth
of the database (tables and indexes) per million pings.

DATABASE_URL names the PostgreSQL server (a scratch database is created on it); without it an
embedded server is started. The exit status is 1 when a slot was missed or fired twice, or the
database does not hold the pings written. ``--smoke`` (CI, ``bench/smoke.py``) runs the three
scenarios small: ``spread`` with 60 jobs over a 10-second window and one worker, ``million``
with 2,000 jobs for 8 seconds (their slots start at the next seconds), ``storage`` with 2,000
pings.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from bench.common import (
    peak_rss_mb,
    percentile,
    scratch_database,
    start_workers,
    stop_process,
    workers_registered,
)
from bench.dispatch import SinkProtocol
from tests.embedded_server import server_dsn

DAY = 86_400


async def create_jobs(dsn: str, url: str, schedules: list[str]) -> None:
    """One job per schedule, through the API's command (events and due rows as in production)."""
    from core.actor import Actor
    from core.apikeys import create_api_key
    from core.db import open_pool
    from core.jobs.commands import create_job

    pool = await open_pool(dsn, min_size=1, max_size=8)
    try:
        _, record = await create_api_key(pool, "bench")
        actor = Actor(team_id=record["team_id"], key_id=record["id"])
        now = datetime.now(UTC)
        for start in range(0, len(schedules), 500):
            await asyncio.gather(*(
                create_job(pool, actor, {"name": f"scale {start + i}", "schedule": schedule,
                                         "request": {"url": url}}, now)
                for i, schedule in enumerate(schedules[start:start + 500])))
    finally:
        await pool.close()


def stats(hits: list[tuple[float, str, str]], since: float, until: float,
          expected: set[tuple[str, str]] | None) -> dict:
    """Lateness (ms) of the hits whose slot is in [since, until); missed = ``expected`` pairs
    (job id, slot) that never arrived; duplicates = pairs that arrived twice or more."""
    counts = collections.Counter((job, slot) for _, job, slot in hits)
    lateness = []
    for arrival, _, slot in hits:
        at = datetime.fromisoformat(slot.replace("Z", "+00:00")).timestamp()
        if since <= at < until:
            lateness.append((arrival - at) * 1000)
    missed = len(expected - set(counts)) if expected is not None else 0
    return {"fired": len(lateness), "p50": percentile(lateness, 50),
            "p99": percentile(lateness, 99), "max": max(lateness, default=0.0),
            "missed": missed, "duplicates": sum(c - 1 for c in counts.values() if c > 1)}


async def spread(admin: str, jobs: int, workers: int, seconds: int, logdir: Path) -> dict:
    """Job ``i`` due at second ``i % 60`` of every minute; the slots of ``seconds`` seconds
    from the next full minute (or, for a window shorter than a minute, from two seconds after
    the workers have started) fired."""
    SinkProtocol.hits = []
    server = await asyncio.get_running_loop().create_server(SinkProtocol, "127.0.0.1", 0,
                                                             backlog=4096)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/hook"
    with scratch_database(admin) as dsn:
        await create_jobs(dsn, url, [f"{i % 60} * * * * *" for i in range(jobs)])
        async with await psycopg.AsyncConnection.connect(dsn) as conn:
            cur = await conn.execute("SELECT id::text, schedule FROM jobs")
            second_of = {r[0]: int(r[1].split()[0]) for r in await cur.fetchall()}
        ids = [f"scale-{i}" for i in range(workers)]
        procs = start_workers(dsn, ids, logdir, f"spread-{jobs}-{workers}")
        try:
            await workers_registered(dsn, ids)
            # The next full minute (a shorter window: two seconds from now).
            now = int(time.time())
            since = (now // 60 + 1) * 60 if seconds >= 60 else now + 2
            until = since + seconds
            await asyncio.sleep(max(0.0, until + 5 - time.time()))
            rss = max(peak_rss_mb(p.pid) for p in procs)
        finally:
            for proc in procs:
                await asyncio.to_thread(stop_process, proc)
    server.close()
    expected = {(job, _iso(at)) for job, second in second_of.items()
                for at in range(since, until) if at % 60 == second}
    return {"jobs": jobs, "workers": workers, "rss_mb": rss,
            **stats(SinkProtocol.hits, since, until, expected)}


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


async def million(admin: str, defined: int, seconds: int, logdir: Path,
                  offset: int | None = 0) -> dict:
    """``defined`` daily jobs, job ``n`` at ``offset + n`` seconds after midnight (UTC, modulo
    a day; ``offset`` ``None``: the next seconds from now), fired by one worker for
    ``seconds`` seconds."""
    SinkProtocol.hits = []
    server = await asyncio.get_running_loop().create_server(SinkProtocol, "127.0.0.1", 0,
                                                             backlog=4096)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/hook"
    with scratch_database(admin) as dsn:
        await create_jobs(dsn, url, ["0 0 0 * * *"])
        started = time.time()
        if offset is None:
            offset = int(started) % DAY + 15  # after the copies below are made
        async with await psycopg.AsyncConnection.connect(dsn) as conn:
            # Copies of the first job: job n at offset + n seconds after midnight (UTC),
            # modulo a day.
            await conn.execute("""
                INSERT INTO jobs (id, team_id, name, schedule, timezone, request,
                                  timeout_seconds, retry, overlap, catchup, status, version,
                                  anchor_at, created_at, updated_at)
                SELECT gen_random_uuid(), j.team_id, 'scale ' || n,
                       format('%%s %%s %%s * * *', s %% 60, s / 60 %% 60, s / 3600 %% 24),
                       j.timezone, j.request, j.timeout_seconds, j.retry, j.overlap,
                       j.catchup, j.status, j.version, j.anchor_at, j.created_at, j.updated_at
                FROM jobs j, generate_series(1, %(n)s) AS n,
                     LATERAL (SELECT (%(offset)s + n) %% 86400 AS s) AS at""",
                {"n": defined - 1, "offset": offset})
            await conn.execute("""
                INSERT INTO due_jobs (job_id, due_at)
                SELECT id, CASE WHEN at > now() THEN at ELSE at + interval '1 day' END
                FROM (SELECT id, date_trunc('day', now())
                             + make_interval(secs => split_part(schedule, ' ', 1)::int
                                              + 60 * split_part(schedule, ' ', 2)::int
                                              + 3600 * split_part(schedule, ' ', 3)::int) AS at
                      FROM jobs WHERE name <> 'scale 0') AS next
                ON CONFLICT (job_id) DO NOTHING""")
            await conn.execute("ANALYZE jobs")
            await conn.execute("ANALYZE due_jobs")
            await conn.commit()
        print(f"  {defined} jobs defined in {time.time() - started:.0f} s", flush=True)
        [proc] = start_workers(dsn, ["scale-million"], logdir, "million")
        try:
            await workers_registered(dsn, ["scale-million"])
            since = max(int(time.time()) + 1, int(started) - int(started) % DAY + offset)
            until = since + seconds
            await asyncio.sleep(max(0.0, until + 5 - time.time()))
            rss = peak_rss_mb(proc.pid)
        finally:
            await asyncio.to_thread(stop_process, proc)
        # Every job due in [since, until): its slot is the second of the day it names.
        async with await psycopg.AsyncConnection.connect(dsn) as conn:
            cur = await conn.execute("SELECT id::text, schedule FROM jobs")
            rows = await cur.fetchall()
    server.close()
    midnight = since - since % DAY
    expected = set()
    for job, schedule in rows:
        s, m, h = (int(x) for x in schedule.split()[:3])
        at = midnight + h * 3600 + m * 60 + s
        for slot in (at, at + DAY):
            if since <= slot < until:
                expected.add((job, _iso(slot)))
    return {"defined": defined, "seconds": seconds, "rss_mb": rss,
            **stats(SinkProtocol.hits, since, until, expected)}


async def storage(admin: str, pings: int, monitors: int) -> dict:
    from core.actor import Actor
    from core.apikeys import create_api_key
    from core.clock import SystemClock
    from core.db import open_pool
    from core.monitors.commands import create_monitor
    from core.monitors.ping import Ping, open_ping_pool, record_pings
    from core.projections.projector import Projector

    size = "SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c " \
           "JOIN pg_namespace n ON n.oid = c.relnamespace " \
           "WHERE c.relkind IN ('r', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema')"
    with scratch_database(admin) as dsn:
        pool = await open_pool(dsn, min_size=1, max_size=4)
        ping_pool = await open_ping_pool(dsn, size=2)
        try:
            _, record = await create_api_key(pool, "bench")
            actor = Actor(team_id=record["team_id"], key_id=record["id"])
            now = datetime.now(UTC)
            tokens = [(await create_monitor(pool, actor, {"name": f"storage {i}",
                                                          "schedule": "1m"}, now))[1]
                      for i in range(monitors)]
            async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
                await conn.execute("VACUUM ANALYZE")
                before = (await (await conn.execute(size)).fetchone())[0]
            started = time.time()
            for start in range(0, pings, 500):
                at = datetime.now(UTC)
                await record_pings(ping_pool, [
                    (Ping(token=tokens[n % monitors], kind="success", method="POST",
                          remote_addr="192.0.2.1", user_agent="curl/8.5.0",
                          body=b"backup ok: 42 files\n", body_size=20), at)
                    for n in range(start, min(pings, start + 500))])
            written = time.time() - started
            await Projector(pool, None, SystemClock()).run_once()  # up to date: batches
            # are applied until one comes back short
            async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
                await conn.execute("VACUUM ANALYZE")
                after = (await (await conn.execute(size)).fetchone())[0]
                recorded = (await (await conn.execute(
                    "SELECT count(*) FROM events WHERE event_type = 'monitor.pinged'"
                )).fetchone())[0]
        finally:
            await ping_pool.close()
            await pool.close()
    return {"pings": pings, "monitors": monitors, "seconds": written, "recorded": recorded,
            "per_million_mb": (after - before) / pings * 1_000_000 / 1e6}


def _print_storage(r: dict) -> bool:
    print("| pings written | monitors | pings/s (one writer, batches of 500) "
          "| database growth per million pings | ping events in the database |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| {r['pings']} | {r['monitors']} | {r['pings'] / r['seconds']:.0f} "
          f"| {r['per_million_mb']:.0f} MB | {r['recorded']} |", flush=True)
    return r["recorded"] == r["pings"]


def _print_spread(rows: list[dict]) -> bool:
    print("| jobs (over a minute) | workers | fired | lateness p50 | p99 | max | missed "
          "| duplicates | peak RSS per worker |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['jobs']} | {r['workers']} | {r['fired']} | {r['p50']:.1f} ms "
              f"| {r['p99']:.1f} ms | {r['max']:.1f} ms | {r['missed']} "
              f"| {r['duplicates']} | {r['rss_mb']:.0f} MB |", flush=True)
    return all(r["missed"] == 0 and r["duplicates"] == 0 for r in rows)


def _print_million(r: dict) -> bool:
    print("| jobs defined | seconds | fired | lateness p50 | p99 | max | missed "
          "| duplicates | worker peak RSS |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {r['defined']} | {r['seconds']} | {r['fired']} | {r['p50']:.1f} ms "
          f"| {r['p99']:.1f} ms | {r['max']:.1f} ms | {r['missed']} "
          f"| {r['duplicates']} | {r['rss_mb']:.0f} MB |", flush=True)
    return r["missed"] == 0 and r["duplicates"] == 0


def smoke(admin: str, logdir: Path) -> bool:
    """The three scenarios, small (CI): whether each counted right."""
    spread_row = asyncio.run(spread(admin, 60, 1, 10, logdir))
    million_row = asyncio.run(million(admin, 2_000, 8, logdir, offset=None))
    storage_row = asyncio.run(storage(admin, 2_000, 10))
    results = [_print_spread([spread_row]), _print_million(million_row),
               _print_storage(storage_row)]
    return all(results) and spread_row["fired"] > 0 and million_row["fired"] > 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: every scenario small, the count checks only")
    sub = parser.add_subparsers(dest="scenario")
    one = sub.add_parser("spread")
    one.add_argument("--jobs", type=int, default=10_000)
    one.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    one.add_argument("--minutes", type=int, default=2)
    two = sub.add_parser("million")
    two.add_argument("--defined", type=int, default=1_000_000)
    two.add_argument("--seconds", type=int, default=60)
    three = sub.add_parser("storage")
    three.add_argument("--pings", type=int, default=200_000)
    three.add_argument("--monitors", type=int, default=100)
    args = parser.parse_args()
    if args.smoke == (args.scenario is not None):
        parser.error("name one scenario (spread, million, storage), or --smoke alone")
    with server_dsn() as admin, tempfile.TemporaryDirectory() as tmp:
        if args.smoke:
            ok = smoke(admin, Path(tmp))
        elif args.scenario == "storage":
            ok = _print_storage(asyncio.run(storage(admin, args.pings, args.monitors)))
        elif args.scenario == "spread":
            ok = _print_spread([asyncio.run(spread(admin, args.jobs, workers,
                                                   args.minutes * 60, Path(tmp)))
                                for workers in args.workers])
        else:
            ok = _print_million(asyncio.run(million(admin, args.defined, args.seconds,
                                                    Path(tmp))))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
