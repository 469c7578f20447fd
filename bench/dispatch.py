"""Fire lateness of N jobs due in the same second, with 1 and 2 worker processes.

For each scenario it migrates a scratch database, starts `cronledger worker` processes, creates
N jobs on `*/10 * * * * *` (every 10 seconds, all due at the same second) that call a local sink,
lets SLOTS slots pass, and prints fire lateness (sink arrival minus the slot the request was
meant for, read from `X-Cronledger-Scheduled-For`) p50/p99/max, the p99 of the lateness the
worker recorded (send start minus slot), deliveries per second, and missed and duplicate slots.

    uv run python bench/dispatch.py [--jobs 100 1000] [--workers 1 2] [--slots 3] [--smoke]

DATABASE_URL names the PostgreSQL server (a scratch database is created on it); without it an
embedded server is started. ``--smoke`` (CI, ``bench/smoke.py``): 20 jobs every 5 seconds, 1
and 2 workers, 2 slots; exit status 1 unless every slot of every job arrived exactly once (no
timing assertion). Without it the exit status is 1 as well when a slot was missed or fired
twice.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from bench.common import (
    peak_rss_mb,
    percentile,
    scratch_database,
    start_workers,
    stop_process,
    workers_registered,
)
from tests.embedded_server import server_dsn

PERIOD = 10  # seconds between slots


class SinkProtocol(asyncio.Protocol):
    """A minimal HTTP/1.1 server: records (arrival, job, slot) and answers 200 at once."""

    hits: list[tuple[float, str, str]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while b"\r\n\r\n" in self.buffer:
            head, _, rest = self.buffer.partition(b"\r\n\r\n")
            headers = {}
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
            length = int(headers.get(b"content-length", b"0"))
            if len(rest) < length:
                return
            self.buffer = rest[length:]
            self.hits.append((time.time(), headers.get(b"x-cronledger-job-id", b"").decode(),
                              headers.get(b"x-cronledger-scheduled-for", b"").decode()))
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")  # type: ignore[attr-defined]


async def create_jobs(dsn: str, url: str, count: int, period: int = PERIOD) -> None:
    from core.apikeys import create_api_key
    from core.db import open_pool
    from core.jobs.commands import create_job

    pool = await open_pool(dsn, min_size=1, max_size=4)
    try:
        from core.actor import Actor

        _, record = await create_api_key(pool, "bench")
        actor = Actor(team_id=record["team_id"], key_id=record["id"])
        now = datetime.now(UTC)
        # At most as many creates in flight as the pool has connections: 10,000 waiting at
        # once outlived the pool's 30 s wait for a connection (compare.py's --big row).
        gate = asyncio.Semaphore(4)

        async def create(i: int) -> None:
            async with gate:
                await create_job(pool, actor, {"name": f"bench {i}",
                                               "schedule": f"*/{period} * * * * *",
                                               "request": {"url": url}}, now)

        await asyncio.gather(*(create(i) for i in range(count)))
    finally:
        await pool.close()


async def stop_scheduling(dsn: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        await conn.execute("DELETE FROM due_jobs")


async def runs_in_db(dsn: str) -> tuple[int, list[int], str]:
    """Missed runs, the recorded lateness (send start minus slot, ms) of the others, and how
    each slot's runs were split between the workers (``"100+0 58+42 …"``)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(dsn) as conn:
        cur = await conn.execute("SELECT count(*) FROM runs WHERE status = 'missed'")
        missed = (await cur.fetchone())[0]
        cur = await conn.execute("SELECT lateness_ms FROM runs WHERE lateness_ms IS NOT NULL")
        lateness = [r[0] for r in await cur.fetchall()]
        cur = await conn.execute(
            "SELECT string_agg(n::text, '+' ORDER BY worker_id) FROM ("
            " SELECT scheduled_for, worker_id, count(*) AS n FROM runs"
            " WHERE worker_id IS NOT NULL GROUP BY 1, 2) per_worker"
            " GROUP BY scheduled_for ORDER BY scheduled_for")
        split = " ".join(r[0] for r in await cur.fetchall())
        return missed, lateness, split


async def scenario(admin: str, jobs: int, workers: int, slots: int, logdir: Path,
                   period: int = PERIOD) -> dict:
    SinkProtocol.hits = []
    loop = asyncio.get_running_loop()
    server = await loop.create_server(SinkProtocol, "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    with scratch_database(admin) as dsn:
        ids = [f"bench-{i}" for i in range(workers)]
        procs = start_workers(dsn, ids, logdir, f"worker-{jobs}-{workers}")
        try:
            await workers_registered(dsn, ids)
            # Create the jobs between slots so the first slot is a full one.
            while time.time() % period > min(2, period / 2):
                await asyncio.sleep(0.05)
            await create_jobs(dsn, f"http://127.0.0.1:{port}/hook", jobs, period)
            first = (int(time.time()) // period + 1) * period
            last = first + period * (slots - 1)
            await asyncio.sleep(max(0.0, last + 1 - time.time()))
            deadline = time.time() + 30  # let the last slot's deliveries arrive
            last_slot = datetime.fromtimestamp(last, UTC).isoformat().replace("+00:00", "Z")
            while time.time() < deadline and sum(
                    1 for _, _, slot in SinkProtocol.hits if slot == last_slot) < jobs:
                await asyncio.sleep(0.1)
            await stop_scheduling(dsn)
            await asyncio.sleep(1)
        finally:
            rss = max(peak_rss_mb(proc.pid) for proc in procs)  # per worker process
            for proc in procs:
                await asyncio.to_thread(stop_process, proc)
        missed_db, sent_lateness, split = await runs_in_db(dsn)
    server.close()
    stats = slot_stats(SinkProtocol.hits, first, last, jobs, period)
    stats["missed"] += missed_db
    return {"jobs": jobs, "workers": workers, "slots": slots, "rss_mb": rss,
            "sent_p99": percentile(sent_lateness, 99), "split": split, **stats}


def slot_stats(hits: list[tuple[float, str, str]], first: int, last: int,
               jobs: int, period: int = PERIOD) -> dict:
    """Fire lateness (ms: sink arrival minus slot) of the slots ``first``..``last`` (epoch
    seconds, every ``period``): p50, p99, max, deliveries per second of a slot's burst,
    missed and duplicate (job, slot) pairs, and each slot's latest arrival (``slot_max``)."""
    slots_fired = range(first, last + 1, period)
    counts = collections.Counter((job, slot) for _, job, slot in hits)
    lateness = []
    per_slot: dict[int, list[float]] = collections.defaultdict(list)
    for arrival, _, slot in hits:
        at = datetime.fromisoformat(slot.replace("Z", "+00:00")).timestamp()
        if first <= at <= last:
            lateness.append((arrival - at) * 1000)
            per_slot[int(at)].append(arrival - at)
    delivered = sum(len(v) for v in per_slot.values())
    busy = sum(max(v) for v in per_slot.values()) or 1e-9
    distinct = sum(1 for (_, slot) in counts
                   if first <= datetime.fromisoformat(slot.replace("Z", "+00:00")).timestamp()
                   <= last)
    return {
        "delivered": delivered,
        "p50": percentile(lateness, 50), "p99": percentile(lateness, 99),
        "max": max(lateness, default=0.0), "rate": delivered / busy,
        "missed": jobs * len(slots_fired) - distinct,
        "duplicates": sum(c - 1 for c in counts.values() if c > 1),
        "slot_max": " ".join(f"{max(per_slot[t]) * 1000:.0f}" for t in sorted(per_slot)),
    }


def counted_right(row: dict) -> bool:
    """Every (job, slot) of the scenario arrived exactly once."""
    return row["missed"] == 0 and row["duplicates"] == 0 \
        and row["delivered"] == row["jobs"] * row["slots"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--slots", type=int, default=3)
    parser.add_argument("--period", type=int, default=PERIOD, help="seconds between slots")
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: small sizes, the count checks only")
    args = parser.parse_args()
    if args.smoke:
        args.jobs, args.slots, args.period = [20], 2, 5
    rows = []
    with server_dsn() as admin, tempfile.TemporaryDirectory() as tmp:
        for jobs in args.jobs:
            for workers in args.workers:
                row = asyncio.run(scenario(admin, jobs, workers, args.slots, Path(tmp),
                                           args.period))
                rows.append(row)
                print(f"done: {jobs} jobs, {workers} worker(s); by slot: runs per worker "
                      f"{row['split']}; latest arrival (ms) {row['slot_max']}", flush=True)
    print()
    print("| jobs | workers | slots | delivered | lateness p50 | p99 | max | send start p99 "
          "| deliveries/s | missed | duplicates |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['jobs']} | {r['workers']} | {r['slots']} | {r['delivered']} "
              f"| {r['p50']:.1f} ms | {r['p99']:.1f} ms | {r['max']:.1f} ms "
              f"| {r['sent_p99']:.0f} ms | {r['rate']:.0f} "
              f"| {r['missed']} | {r['duplicates']} |")
    return 0 if all(counted_right(r) for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
