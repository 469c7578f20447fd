"""cronledger beside APScheduler and procrastinate, in one run, on one sink and one PostgreSQL.

For each size (jobs due in the same second, every 10 seconds) it runs, one after the other on
a fresh scratch database each:

* cronledger with 1 and 2 `cronledger worker` processes (``bench/dispatch.py``'s scenario);
* APScheduler 3.x: ``AsyncIOScheduler``, ``SQLAlchemyJobStore`` on the same PostgreSQL, aiohttp
  calls (``bench/peers/apscheduler_peer.py``);
* procrastinate: periodic tasks, one async worker (``bench/peers/procrastinate_peer.py``);

and prints one table: fire lateness p50/p99/max (sink arrival minus slot), missed and duplicate
slots, the workers' peak RSS, and each p99 as a multiple of cronledger's best p99 at that size.
Then one more row, cronledger alone with 2 workers and ``--big`` jobs (10,000) due in the same
second, 2 slots at least 30 seconds apart (the peers are not run at that size: APScheduler
needs about 2 s for 1,000). ``--runs`` repeats the whole set and prints each run's table and
the spread (min–max) of p99.

    uv run --group bench python bench/compare.py [--jobs 100 1000] [--slots 3] [--runs 3]
        [--big 10000] [--smoke]

DATABASE_URL names the PostgreSQL server (scratch databases are created on it); without it an
embedded server is started. The peers are installed by the ``bench`` dependency group only.
The exit status is 1 when a row missed a slot or fired one twice (the big row included).
``--smoke`` (CI, ``bench/smoke.py``): 10 jobs every 5 seconds, 2 slots, one run, every
scheduler, and a big row of 50 jobs; no timing assertion.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import ROOT, peak_rss_mb, scratch_database, stop_process
from bench.dispatch import PERIOD, SinkProtocol, counted_right, scenario, slot_stats
from bench.peers.common import READY
from tests.embedded_server import server_dsn

PEERS = {"APScheduler 3": "bench.peers.apscheduler_peer",
         "procrastinate": "bench.peers.procrastinate_peer"}
READY_TIMEOUT = 300  # seconds for a peer to define its jobs


async def peer_scenario(admin: str, name: str, module: str, jobs: int, slots: int,
                        logdir: Path, period: int = PERIOD) -> dict:
    """Run peer ``module`` with ``jobs`` jobs for ``slots`` full slots; its row of the table."""
    SinkProtocol.hits = []
    loop = asyncio.get_running_loop()
    server = await loop.create_server(SinkProtocol, "127.0.0.1", 0, backlog=4096)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/hook"
    log = (logdir / f"{module}-{jobs}.log").open("ab")
    with scratch_database(admin, "cronledger_peer", migrate=False) as dsn:
        proc = subprocess.Popen(
            [sys.executable, "-m", module, "--dsn", dsn, "--url", url, "--jobs", str(jobs),
             "--period", str(period)], cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True)
        try:
            line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline),  # type: ignore[union-attr]
                                          READY_TIMEOUT)
            if READY not in line:
                raise RuntimeError(f"{name} did not start: see {log.name}")
            # The first full slot: the next boundary at least one period after the jobs exist.
            first = (int(time.time()) // period + 2) * period
            last = first + period * (slots - 1)
            await asyncio.sleep(max(0.0, last + 1 - time.time()))
            deadline = time.time() + 30  # let the last slot's deliveries arrive
            while time.time() < deadline and sum(
                    1 for _, _, s in SinkProtocol.hits
                    if s.endswith("Z") and _epoch(s) == last) < jobs:
                await asyncio.sleep(0.1)
            rss = peak_rss_mb(proc.pid)
        finally:
            await asyncio.to_thread(stop_process, proc)
            log.close()
    server.close()
    return {"name": name, "jobs": jobs, "slots": slots, "rss_mb": rss,
            **slot_stats(SinkProtocol.hits, first, last, jobs, period)}


def _epoch(slot: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(slot.replace("Z", "+00:00")).timestamp())


BIG_SLOTS = 2
BIG_PERIOD = 30  # seconds at least between the big row's slots: 10,000 runs are recorded between


async def one_run(admin: str, sizes: list[int], slots: int, logdir: Path,
                  period: int = PERIOD, big: int = 0) -> list[dict]:
    rows = []
    for jobs in sizes:
        for workers in (1, 2):
            row = await scenario(admin, jobs, workers, slots, logdir, period)
            rows.append({**row, "name": f"cronledger, {workers} worker{'s' * (workers > 1)}"})
            print(f"  {rows[-1]['name']}, {jobs} jobs: p99 {row['p99']:.0f} ms", flush=True)
        for name, module in PEERS.items():
            rows.append(await peer_scenario(admin, name, module, jobs, slots, logdir, period))
            print(f"  {name}, {jobs} jobs: p99 {rows[-1]['p99']:.0f} ms", flush=True)
    if big:
        row = await scenario(admin, big, 2, BIG_SLOTS, logdir,
                             period if big < 1000 else max(period, BIG_PERIOD))
        rows.append({**row, "name": "cronledger, 2 workers"})
        print(f"  cronledger, 2 workers, {big} jobs: p99 {row['p99']:.0f} ms, "
              f"{row['missed']} missed, {row['duplicates']} twice", flush=True)
    return rows


def table(rows: list[dict]) -> str:
    best = {jobs: min(r["p99"] for r in rows if r["jobs"] == jobs and
                      r["name"].startswith("cronledger")) for jobs in {r["jobs"] for r in rows}}
    out = ["| scheduler | jobs | lateness p50 | p99 | max | missed | duplicates "
           "| peak RSS per worker "
           "| p99 vs cronledger |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        ratio = r["p99"] / best[r["jobs"]] if best[r["jobs"]] else float("inf")
        out.append(f"| {r['name']} | {r['jobs']} | {r['p50']:.1f} ms | {r['p99']:.1f} ms "
                   f"| {r['max']:.1f} ms | {r['missed']} | {r['duplicates']} "
                   f"| {r['rss_mb']:.0f} MB | {ratio:.1f}× |")
    return "\n".join(out)


def spread(runs: list[list[dict]]) -> str:
    by = collections.defaultdict(list)
    for rows in runs:
        for r in rows:
            by[(r["name"], r["jobs"])].append(r["p99"])
    out = ["| scheduler | jobs | p99 over the runs (min–max) |", "|---|---:|---:|"]
    for (name, jobs), values in by.items():
        out.append(f"| {name} | {jobs} | {min(values):.0f}–{max(values):.0f} ms "
                   f"({', '.join(f'{v:.0f}' for v in values)}) |")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--slots", type=int, default=3)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--period", type=int, default=PERIOD, help="seconds between slots")
    parser.add_argument("--big", type=int, default=10_000,
                        help="jobs of the last row, cronledger alone (0: no such row)")
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: small sizes, the count checks only")
    args = parser.parse_args()
    if args.smoke:
        args.jobs, args.slots, args.runs, args.period, args.big = [10], 2, 1, 5, 50
    runs = []
    with server_dsn() as admin, tempfile.TemporaryDirectory() as tmp:
        for n in range(args.runs):
            print(f"run {n + 1} of {args.runs}", flush=True)
            runs.append(asyncio.run(one_run(admin, args.jobs, args.slots, Path(tmp),
                                            args.period, args.big)))
            print(f"\nrun {n + 1}\n\n{table(runs[-1])}\n", flush=True)
    if args.runs > 1:
        print(spread(runs))
    wrong = [f"{r['name']}, {r['jobs']} jobs" for rows in runs for r in rows
             if not counted_right(r)]
    if wrong:
        print(f"missed or duplicate slots: {'; '.join(wrong)}", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
