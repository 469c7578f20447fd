"""Database outages under load: a throwaway PostgreSQL restarted, then stopped for a while.

Starts its own PostgreSQL (``initdb`` + ``pg_ctl`` on a free port in a temporary folder, as the
``postgres`` user when run as root; never the server of DATABASE_URL), one ``cronledger
worker`` and JOBS jobs on ``*/2 * * * * *`` (every 2 s, catch-up ``latest``, overlap ``skip``)
calling a local sink. After a few normal slots it restarts PostgreSQL (down RESTART seconds),
then stops it for OUTAGE seconds, and prints for each outage:

- ``back->first``: seconds from PostgreSQL accepting connections again (``pg_ctl start -w``
  returned) to the first delivery the sink received after it (waited for up to 60 s);
- the runs of the slots that passed while PostgreSQL was down or restarting, by status and
  trigger (``missed``, ``skipped``, ``catchup``, on-time ``schedule``);
- ``stale``: the largest ``lateness_ms`` of a run recorded with trigger ``schedule`` (at most
  the 10 s grace when the claim instant is read after the connection is obtained).

    uv run python bench/outage.py [--jobs 50] [--restart 2] [--outage 20] [--smoke]

A benchmark, not a test: it uses the wall clock and real processes. docs/operations.md,
"Database outages", describes the behaviour measured. The exit status is 1 when no delivery
came after an outage, a slot was delivered twice, or the worker did not exit cleanly;
``--smoke`` (CI, ``bench/smoke.py``) runs it with 5 jobs, a 1 s restart and a 4 s outage.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from bench.common import scratch_database, start_workers, stop_process, workers_registered
from bench.dispatch import SinkProtocol, stop_scheduling

PG_BIN = Path(os.environ.get("PG_BIN", "/usr/lib/postgresql/15/bin"))
PERIOD = 2  # seconds between slots


class Throwaway:
    """A PostgreSQL cluster of its own, in a temporary folder (removed by :meth:`destroy`)."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="cronledger-outage-"))
        self.data = self.dir / "data"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.root = os.geteuid() == 0
        if self.root:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run(PG_BIN / "initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "--no-sync")
        self.dsn = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: object) -> None:
        cmd = [str(a) for a in args]
        if self.root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def start(self) -> float:
        """Start and wait until it accepts connections; returns that instant (Unix seconds)."""
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-w", "-l", self.dir / "pg.log",
                  "-o", f"-p {self.port} -h 127.0.0.1 -k {self.dir} -c fsync=off", "start")
        return time.time()

    def stop(self) -> None:
        self._run(PG_BIN / "pg_ctl", "-D", self.data, "-w", "-m", "fast", "stop")

    def destroy(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


async def create_jobs(dsn: str, url: str, count: int) -> None:
    from core.actor import Actor
    from core.apikeys import create_api_key
    from core.db import open_pool
    from core.jobs.commands import create_job

    pool = await open_pool(dsn, min_size=1, max_size=4)
    try:
        _, record = await create_api_key(pool, "bench")
        actor = Actor(team_id=record["team_id"], key_id=record["id"])
        now = datetime.now(UTC)
        await asyncio.gather(*(
            create_job(pool, actor, {"name": f"outage {i}", "schedule": f"*/{PERIOD} * * * * *",
                                     "catchup": "latest", "overlap": "skip",
                                     "request": {"url": url}}, now)
            for i in range(count)))
    finally:
        await pool.close()


def first_hit_after(instant: float) -> float | None:
    arrivals = [at for at, _, _ in SinkProtocol.hits if at >= instant]
    return min(arrivals) - instant if arrivals else None


def outage_runs(dsn: str, down: float, back: float) -> dict[str, object]:
    """Runs of the slots in ``[down, back]`` (Unix seconds), counted by status and trigger."""
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT status, trigger, lateness_ms FROM runs "
            "WHERE scheduled_for BETWEEN %s AND %s",
            (datetime.fromtimestamp(down, UTC), datetime.fromtimestamp(back, UTC))).fetchall()
        stale = conn.execute(
            "SELECT max(lateness_ms) FROM runs WHERE trigger = 'schedule'").fetchone()[0]
    counts = collections.Counter(f"{status}/{trigger}" for status, trigger, _ in rows)
    return {"slots": len(rows), "by": dict(sorted(counts.items())), "stale_max_ms": stale}


async def main_async(jobs: int, restart: float, outage: float, logdir: Path) -> bool:
    """Run the scenario and print its figures; whether it counted right: a delivery after
    each outage, no (job, slot) delivered twice, the worker's exit status 0."""
    pg = Throwaway()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(SinkProtocol, "127.0.0.1", 0, backlog=4096)
    port = server.sockets[0].getsockname()[1]
    try:
        pg.start()
        with scratch_database(pg.dsn) as dsn:
            [worker] = start_workers(dsn, ["outage-0"], logdir, "worker",
                                     {"CRONLEDGER_LEASE_MARGIN": "30"})
            results = []
            try:
                await workers_registered(dsn, ["outage-0"])
                await create_jobs(dsn, f"http://127.0.0.1:{port}/hook", jobs)
                await asyncio.sleep(3 * PERIOD)
                for name, seconds in (("restart", restart), ("outage", outage)):
                    down = time.time()
                    await asyncio.to_thread(pg.stop)
                    await asyncio.sleep(seconds)
                    back = await asyncio.to_thread(pg.start)
                    deadline = time.time() + 60  # the first delivery, however long it takes
                    while first_hit_after(back) is None and time.time() < deadline:
                        await asyncio.sleep(0.05)
                    await asyncio.sleep(3 * PERIOD + 2)  # catch-up and a few normal slots
                    results.append((name, back - down, first_hit_after(back),
                                    outage_runs(dsn, down, back)))
                await stop_scheduling(dsn)
                await asyncio.sleep(1)
            finally:
                code = await asyncio.to_thread(stop_process, worker)
            with psycopg.connect(dsn) as conn:
                totals = dict(conn.execute(
                    "SELECT status || '/' || trigger, count(*) FROM runs GROUP BY 1 ORDER BY 1"
                ).fetchall())
    finally:
        server.close()
        await asyncio.to_thread(pg.destroy)
    print(f"jobs={jobs} every {PERIOD} s, catchup=latest overlap=skip; worker exit {code}")
    for name, down_for, first, runs in results:
        first_text = f"{first:.2f} s" if first is not None else "none"
        print(f"{name:8s} down {down_for:5.1f} s  back->first delivery {first_text}  "
              f"slots while down {runs['slots']}: {runs['by']}  "
              f"stale schedule lateness max {runs['stale_max_ms']} ms")
    print(f"all runs: {totals}")
    delivered = collections.Counter((job, slot) for _, job, slot in SinkProtocol.hits)
    twice = sum(1 for n in delivered.values() if n > 1)
    back = all(first is not None for _, _, first, _ in results)
    print(f"(job, slot) pairs delivered twice: {twice}")
    return back and twice == 0 and code == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--restart", type=float, default=2.0)
    parser.add_argument("--outage", type=float, default=20.0)
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: small sizes, the count checks only")
    args = parser.parse_args()
    if args.smoke:
        args.jobs, args.restart, args.outage = 5, 1.0, 4.0
    with tempfile.TemporaryDirectory(prefix="cronledger-outage-logs-") as logdir:
        try:
            ok = asyncio.run(main_async(args.jobs, args.restart, args.outage, Path(logdir)))
        finally:
            log = Path(logdir) / "worker.log"
            if log.exists():
                tail = log.read_text().splitlines()[-8:]
                print("worker log (last lines):", *tail, sep="\n  ")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
