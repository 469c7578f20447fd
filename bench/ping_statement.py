"""What one call of the ping statement costs, and what each ping in it adds: no HTTP.

    DATABASE_URL=postgresql://... uv run python bench/ping_statement.py [--calls 500]
        [--sizes 1x1,4x1,8x1,16x1,64x1,4x4,50x50] [--commit off|on] [--smoke]

Creates a scratch database on the server of ``DATABASE_URL`` (an embedded server without it),
a team and 64 monitors (``core/monitors/commands.py``, the real command), then, for each size
``NxM`` of ``--sizes`` (N success pings over M monitors in one call, in turn), records
``--calls`` batches through :func:`core.monitors.ping.record_pings` on a ping pool of one
connection (the API's path: :func:`core.monitors.ping.open_ping_pool`, autocommit, one
``monitor_ping_batch`` statement per batch), twice. It prints, per round: the CPU of that
connection's PostgreSQL backend per call and per ping (its time on CPU from ``/proc``), the
CPU of this process per call (building the parameters, psycopg, the pool: the API process's
share of a batch, without its HTTP), and the wall time per call.

So the figures say how a ping's PostgreSQL cost splits into a fixed cost per statement and a
cost per ping in it, which is why larger batches (group commit,
:class:`core.monitors.batcher.PingBatcher`) cost less per ping: see docs/benchmarks.md,
*Where a ping's CPU goes*. Client and server share the machine; CPU times depend little on
other load, wall times do.

Count check: every ping of every call became one ``monitor.pinged`` event (exit status 1
otherwise). ``--smoke`` (CI, ``bench/smoke.py``): 20 calls each of ``1x1`` and ``4x2``, the
same check, no timing assertion.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from bench.common import ROOT, scratch_database
from tests.embedded_server import server_dsn

sys.path.insert(0, str(ROOT))

MONITORS = 64


def backend_cpu(pid: int) -> float:
    """CPU seconds of process ``pid`` so far (Linux ``/proc``): the scheduler's time on CPU
    (``schedstat``, nanoseconds) where the kernel keeps it, else user + system time in
    clock ticks (10 ms: too coarse to tell two statements apart by 0.05 ms in 500 calls)."""
    try:
        return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def size(text: str) -> tuple[int, int]:
    pings, _, monitors = text.partition("x")
    n, m = int(pings), int(monitors or 1)
    if not 1 <= m <= min(n, MONITORS):
        raise argparse.ArgumentTypeError(f"{text}: 1 <= monitors <= min(pings, {MONITORS})")
    return n, m


async def run(dsn: str, sizes: list[tuple[int, int]], calls: int, commit: str
              ) -> tuple[list[str], int, int]:
    """The table rows, the pings sent and the ``monitor.pinged`` events counted."""
    from core.actor import Actor
    from core.apikeys import create_api_key
    from core.db import open_pool
    from core.monitors.commands import create_monitor
    from core.monitors.ping import Ping, open_ping_pool, record_pings

    now = datetime.now(UTC).replace(microsecond=0)
    pool = await open_pool(dsn, min_size=1, max_size=2)
    try:
        _, record = await create_api_key(pool, "bench ping statement", "write")
        actor = Actor(team_id=record["team_id"], key_id=record["id"])
        monitors = [await create_monitor(pool, actor, {"name": f"statement {i:02d}",
                                                       "schedule": "1h"}, now)
                    for i in range(MONITORS)]
    finally:
        await pool.close()
    tokens = [token for _, token in monitors]
    pings = await open_ping_pool(dsn, size=1, synchronous_commit=commit == "on")
    rows, sent, n = [], 0, 0
    try:
        async with pings.connection() as conn:
            backend = conn.info.backend_pid
        for pings_per_call, over in sizes:
            for round_ in (1, 2):
                pg, me, wall = backend_cpu(backend), time.process_time(), time.perf_counter()
                for _ in range(calls):
                    batch = []
                    for k in range(pings_per_call):
                        n += 1
                        batch.append((Ping(token=tokens[k % over], kind="success",
                                           method="GET", remote_addr="127.0.0.1",
                                           user_agent="bench"),
                                      now + timedelta(microseconds=n)))
                    statuses = await record_pings(pings, batch)
                    assert statuses == ["up"] * pings_per_call, statuses
                pg = (backend_cpu(backend) - pg) * 1000 / calls
                me = (time.process_time() - me) * 1000 / calls
                wall = (time.perf_counter() - wall) * 1000 / calls
                sent += calls * pings_per_call
                rows.append(f"| {pings_per_call} | {over} | {round_} | {pg:.3f} | "
                            f"{pg / pings_per_call:.3f} | {me:.3f} | {wall:.3f} |")
    finally:
        await pings.close()
    with psycopg.connect(dsn) as conn:
        counted = conn.execute("SELECT count(*) FROM events WHERE event_type = "
                               "'monitor.pinged'").fetchone()[0]
    return rows, sent, counted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500, help="calls per size and round")
    parser.add_argument("--sizes", type=lambda t: [size(s) for s in t.split(",")],
                        default=[(1, 1), (4, 1), (8, 1), (16, 1), (64, 1), (4, 4), (50, 50)],
                        help="NxM: N pings over M monitors per call")
    parser.add_argument("--commit", choices=("on", "off"), default="off",
                        help="synchronous_commit of the ping connection")
    parser.add_argument("--smoke", action="store_true", help="CI: 20 calls of 1x1 and 4x2")
    args = parser.parse_args()
    if args.smoke:
        args.calls, args.sizes = 20, [(1, 1), (4, 2)]
    with server_dsn() as admin, scratch_database(admin, "cronledger_bench_statement") as dsn:
        rows, sent, counted = asyncio.run(run(dsn, args.sizes, args.calls, args.commit))
    print(f"\n{os.cpu_count()} CPUs, synchronous_commit={args.commit}, {args.calls} calls per "
          f"round, load average {os.getloadavg()[0]:.1f}\n")
    print("| pings per call | monitors | round | PostgreSQL CPU ms/call | ms/ping "
          "| client CPU ms/call | wall ms/call |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    ok = counted == sent
    print(f"\nmonitor.pinged events: {counted:,} of {sent:,} pings sent "
          f"({'ok' if ok else 'MISMATCH'})")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
