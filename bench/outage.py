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

Then, for a failover (docs/operations.md, "High availability"), once with a synchronous and once
with an asynchronous standby: a primary and a streaming standby of their own
(``tests/clusters.py``), one ``cronledger serve`` given the multi-host DSN
(``target_session_attrs=read-write``), the same jobs, and PINGERS clients pinging one monitor
without pause. After a few slots the primary is killed (``pg_ctl stop -m immediate``) and the
standby promoted; it prints the seconds from the end of the promotion to the first delivery,
the slots lost (no row on the new primary between the first and the last slot), the slots
delivered twice (with the same Idempotency-Key / with different keys) and the pings answered 200
that are on the new primary. With an asynchronous standby the commits of the replication lag at
the kill are lost; under this light load that lag is about zero, so the standby is detached
LAG seconds before the kill (``--async-lag``, default 1): the row shows what a standby 1 s
behind loses.

    uv run python bench/outage.py [--jobs 50] [--restart 2] [--outage 20] [--failover-only]
                                  [--pingers 4] [--async-lag 1] [--smoke]

A benchmark, not a test: it uses the wall clock and real processes. docs/operations.md,
"Database outages" and "High availability", describes the behaviour measured. The exit status
is 1 when no delivery came after an outage or a failover, a slot was delivered twice by the
outages, a slot was lost or delivered under two keys by a failover, a ping answered 200 was lost
by the synchronous failover, or a process did not exit cleanly; ``--smoke`` (CI,
``bench/smoke.py``) runs it with 5 jobs, a 1 s restart, a 4 s outage and one pinger.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
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

from bench.common import (
    scratch_database,
    start_cronledger,
    start_workers,
    stop_process,
    workers_registered,
)
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


def first_hit_after(instant: float, slot_after: float = 0.0) -> float | None:
    """Seconds from ``instant`` (Unix) to the first delivery after it (of a slot later than
    ``slot_after``, Unix seconds, when given)."""
    arrivals = [at for at, _, slot in SinkProtocol.hits if at >= instant
                and (not slot_after or _unix(slot) > slot_after)]
    return min(arrivals) - instant if arrivals else None


def _unix(slot: str) -> float:
    return datetime.fromisoformat(slot.replace("Z", "+00:00")).timestamp() if slot else 0.0


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


class KeyedSink(SinkProtocol):
    """:class:`SinkProtocol` that also keeps each request's Idempotency-Key per (job, slot)."""

    keys: dict[tuple[str, str], list[str]] = collections.defaultdict(list)

    def data_received(self, data: bytes) -> None:
        for line in data.split(b"\r\n"):
            if line.lower().startswith(b"idempotency-key:"):
                self._key = line.partition(b":")[2].strip().decode()
        before = len(self.hits)
        super().data_received(data)
        for _, job, slot in self.hits[before:]:
            self.keys[(job, slot)].append(getattr(self, "_key", ""))


async def ping_forever(base: str, token: str, answered: list[str], n: list[int]) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=base, timeout=10) as client:
        while True:
            n[0] += 1
            body = f"ping {n[0]}"
            with contextlib.suppress(httpx.HTTPError):
                if (await client.post(f"/ping/{token}", content=body.encode())).status_code \
                        == 200:
                    answered.append(body)


async def failover_run(synchronous: bool, jobs: int, pingers: int, logdir: Path,
                       lag: float = 0.0) -> dict[str, object]:
    """One failover under load; the figures of its row."""
    import httpx

    from tests.clusters import replicated_pair

    mode = "sync" if synchronous else "async"
    KeyedSink.hits.clear()
    KeyedSink.keys.clear()
    loop = asyncio.get_running_loop()
    server = await loop.create_server(KeyedSink, "127.0.0.1", 0, backlog=4096)
    sink = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/hook"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    try:
        with replicated_pair(synchronous=synchronous) as pair:
            pair.primary.execute("CREATE DATABASE cronledger")
            dsn = pair.dsn("cronledger")
            serve = start_cronledger(["serve", "--port", str(port)], {
                "DATABASE_URL": dsn, "CRONLEDGER_LOG_LEVEL": "WARNING",
                "CRONLEDGER_SECRET_KEY": base64.b64encode(os.urandom(32)).decode(),
                "CRONLEDGER_HEARTBEAT_FILE": str(logdir / f"heartbeat-{mode}")},
                logdir / f"serve-{mode}.log")
            tasks: list[asyncio.Task[None]] = []
            answered: list[str] = []
            sent = [0]
            try:
                deadline = time.monotonic() + 60
                while True:
                    with contextlib.suppress(httpx.HTTPError):
                        if httpx.get(f"{base}/readyz", timeout=1).status_code == 200:
                            break
                    if time.monotonic() > deadline or serve.poll() is not None:
                        raise RuntimeError(f"serve did not start: see {logdir}/serve-{mode}.log")
                    await asyncio.sleep(0.2)
                await create_jobs(dsn, sink, jobs)
                token = await create_monitor(dsn)
                tasks = [asyncio.create_task(ping_forever(base, token, answered, sent))
                         for _ in range(pingers)]
                await asyncio.sleep(3 * PERIOD)
                if lag:
                    await asyncio.to_thread(pair.detach_standby)
                    await asyncio.sleep(lag)
                killed = time.time()
                await asyncio.to_thread(pair.fail_over)
                promoted = time.time()
                # The first delivery of a slot claimed on the new primary: later than the kill
                # plus the claim lookahead (1 s); requests sent before the kill may still
                # arrive after the promotion.
                fresh = killed + 1.0
                deadline = time.time() + 60
                while first_hit_after(promoted, fresh) is None and time.time() < deadline:
                    await asyncio.sleep(0.05)
                first = first_hit_after(promoted, fresh)
                await asyncio.sleep(3 * PERIOD + 2)
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                await stop_scheduling(dsn)
                await asyncio.sleep(2)
                row: dict[str, object] = {
                    "mode": mode, "kill->promoted": promoted - killed, "first": first,
                    **failover_outcome(dsn, answered)}
            finally:
                for task in tasks:
                    task.cancel()
                code = await asyncio.to_thread(stop_process, serve)
    finally:
        server.close()
    return {**row, "exit": code}


async def create_monitor(dsn: str) -> str:
    from core.actor import Actor
    from core.apikeys import create_api_key
    from core.db import open_pool
    from core.monitors.commands import create_monitor as create

    pool = await open_pool(dsn, min_size=1, max_size=2)
    try:
        _, record = await create_api_key(pool, "bench-pings")
        _, token = await create(pool, Actor(team_id=record["team_id"], key_id=record["id"]),
                                {"name": "failover", "schedule": "1h"}, datetime.now(UTC))
        return token
    finally:
        await pool.close()


def failover_outcome(dsn: str, answered: list[str]) -> dict[str, object]:
    """Lost slots, duplicated deliveries and kept pings, read on the new primary."""
    with psycopg.connect(dsn) as conn:
        runs = conn.execute("SELECT job_id::text, scheduled_for FROM runs "
                            "WHERE trigger <> 'manual' ORDER BY 1, 2").fetchall()
        bodies = {bytes(b).decode() for (b,) in conn.execute(
            "SELECT body FROM monitor_ping_bodies")}
    by_job: dict[str, list[datetime]] = collections.defaultdict(list)
    for job, slot in runs:
        by_job[job].append(slot)
    lost = sum(round((slots[-1] - slots[0]).total_seconds() / PERIOD) + 1 - len(slots)
               for slots in by_job.values())
    twice_same = sum(1 for keys in KeyedSink.keys.values() if len(keys) > 1 and len(set(keys)) == 1)
    twice_other = sum(1 for keys in KeyedSink.keys.values() if len(set(keys)) > 1)
    return {"lost": lost, "twice_same_key": twice_same, "twice_other_key": twice_other,
            "pings": f"{sum(1 for b in answered if b in bodies)}/{len(answered)}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=50)
    parser.add_argument("--restart", type=float, default=2.0)
    parser.add_argument("--outage", type=float, default=20.0)
    parser.add_argument("--pingers", type=int, default=4)
    parser.add_argument("--async-lag", type=float, default=1.0,
                        help="seconds the asynchronous standby is behind at the kill")
    parser.add_argument("--failover-only", action="store_true",
                        help="skip the restart and outage rows")
    parser.add_argument("--smoke", action="store_true",
                        help="CI check: small sizes, the count checks only")
    args = parser.parse_args()
    if args.smoke:
        args.jobs, args.restart, args.outage, args.pingers = 5, 1.0, 4.0, 1
    ok = True
    with tempfile.TemporaryDirectory(prefix="cronledger-outage-logs-") as logdir:
        try:
            if not args.failover_only:
                ok = asyncio.run(main_async(args.jobs, args.restart, args.outage,
                                            Path(logdir)))
            for synchronous in (True, False):
                row = asyncio.run(failover_run(synchronous, args.jobs, args.pingers,
                                               Path(logdir),
                                               0.0 if synchronous else args.async_lag))
                ok = failover_row(row, synchronous, args.async_lag) and ok
        finally:
            for log in sorted(Path(logdir).glob("*.log")):
                tail = log.read_text().splitlines()[-8:]
                if tail:
                    print(f"{log.name} (last lines):", *tail, sep="\n  ")
    return 0 if ok else 1


def failover_row(row: dict[str, object], synchronous: bool, lag: float) -> bool:
    """Print a failover's row; whether it counted right: a delivery from the new primary, no
    slot lost or delivered under two keys, the serve process's exit status 0, and with a
    synchronous standby every ping answered 200 kept and nothing delivered twice."""
    first = row["first"]
    mode = "sync" if synchronous else f"async, {lag:g} s behind"
    print(f"failover ({mode}) kill->promoted {row['kill->promoted']:.2f} s  "
          f"promoted->first delivery {f'{first:.2f} s' if first is not None else 'none'}  "
          f"slots lost {row['lost']}  delivered twice: same key {row['twice_same_key']}, "
          f"other key {row['twice_other_key']}  pings answered 200 kept {row['pings']}  "
          f"serve exit {row['exit']}")
    kept, answered = (int(n) for n in str(row["pings"]).split("/"))
    ok = first is not None and row["lost"] == 0 and row["twice_other_key"] == 0 \
        and row["exit"] == 0 and answered > 0
    if synchronous:
        ok = ok and kept == answered and row["twice_same_key"] == 0
    return ok


if __name__ == "__main__":
    main()
