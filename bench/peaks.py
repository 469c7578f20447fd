"""Busiest seconds speed (docs/schedules.md, *Spread*): a team of N jobs (default 10,000), then
``GET /v1/schedules/peaks`` timed at the server.

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres \\
        uv run python bench/peaks.py [--jobs 10000] [--repeat 10] [--smoke]

The seed, in a scratch database (:func:`bench.common.scratch_database`), by the real command
(``core/jobs/commands.py:create_job``, at most four in flight), the mix a team that never
thought about spread has: of every 20 jobs, 12 ``0 * * * *`` (hourly, at :00), 4
``*/15 * * * *``, 2 ``30 2 * * *`` (daily), 1 hourly with ``spread: "15m"`` and 1 every
15 minutes with ``spread: "5m"``. The clock is frozen at 15:00:30 UTC, so every job's fires in
the next day are known: 24 per hourly job, 96 per quarter-hour job, 1 per daily job (a spread
moves each fire inside its slot's window, never out of the day).

Each call is timed ``--repeat`` times after one warm-up call, in process (Litestar's ASGI test
client: the application and the database, no network): ``top=10`` (the default) and
``top=100`` (the most an answer may ask for). The table gives p50/p95/max in ms, the
answer's size in kB and this process's CPU time per call (client and application, not
PostgreSQL). Every answer must be 200 with ``jobs_counted`` = N, ``fires`` = the sum above,
the busiest second's fires at least the number of unspread jobs firing at :00, and
``would_move`` only unspread jobs, at least those firing at :00 up to its cap of 1,000 (else
the exit status is 1). ``--smoke`` (CI,
``bench/smoke.py``): 200 jobs, 3 calls per row.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.common import ROOT, percentile, scratch_database
from tests.embedded_server import server_dsn

sys.path.insert(0, str(ROOT))

from api.app import create_app  # noqa: E402
from core.actor import Actor  # noqa: E402
from core.apikeys import create_api_key  # noqa: E402
from core.clock import FrozenClock  # noqa: E402
from core.config import Settings  # noqa: E402
from core.db import open_pool  # noqa: E402
from core.jobs.commands import create_job  # noqa: E402
from core.jobs.peaks import MAX_WOULD_MOVE  # noqa: E402

NOW = datetime(2026, 11, 30, 15, 0, 30, tzinfo=UTC)
KEY = "Qm9vdHN0cmFwIGtleSBmb3Igc2NyZWVuc2hvdHMhISE="  # a throwaway AES key (base64, 32 bytes)
# (schedule, spread, fires in the next day) of each of 20 jobs in turn
MIX = ([("0 * * * *", None, 24)] * 12 + [("*/15 * * * *", None, 96)] * 4
       + [("30 2 * * *", None, 1)] * 2 + [("0 * * * *", "15m", 24), ("*/15 * * * *", "5m", 96)])


def kind(n: int) -> tuple[str, str | None, int]:
    return MIX[n % len(MIX)]


async def seed(dsn: str, jobs: int) -> str:
    """The team and its ``jobs`` jobs (:data:`MIX`); the API key."""
    pool = await open_pool(dsn, min_size=1, max_size=4)
    try:
        key, record = await create_api_key(pool, "peaks", "write", "bench")
        actor = Actor(team_id=record["team_id"], key_id=record["id"])
        gate = asyncio.Semaphore(4)

        async def create(n: int) -> None:
            schedule, spread, _ = kind(n)
            body: dict[str, Any] = {"name": f"job {n:05d}", "schedule": schedule,
                                    "request": {"url": "https://example.com/"}}
            if spread:
                body["spread"] = spread
            async with gate:
                await create_job(pool, actor, body, NOW - timedelta(days=1))

        await asyncio.gather(*(create(n) for n in range(jobs)))
        async with pool.connection() as conn:
            await conn.execute("ANALYZE jobs")
    finally:
        await pool.close()
    return key


def check(answer: Any, jobs: int) -> bool:
    """Whether an answer counts the seeded jobs right (the module docstring)."""
    if answer.status_code != 200:
        return False
    body = answer.json()
    fires = sum(kind(n)[2] for n in range(jobs))
    at_zero = sum(1 for n in range(jobs) if kind(n)[1] is None and kind(n)[0] != "30 2 * * *")
    unspread = {f"job {n:05d}" for n in range(jobs) if kind(n)[1] is None}
    moving = {j["name"] for j in body["would_move"]}
    # every unspread job firing at :00 fires in the busiest second; the list is capped
    return (body["jobs_counted"] == jobs and body["fires"] == fires
            and body["seconds"][0]["fires"] >= at_zero and moving <= unspread
            and min(at_zero, MAX_WOULD_MOVE) <= len(moving) <= MAX_WOULD_MOVE)


async def time_rows(dsn: str, key: str, jobs: int, repeat: int) -> tuple[list[Any], bool]:
    """``[(label, p50, p95, max, kB, CPU ms per call)]`` and whether every answer was right."""
    from litestar.testing import AsyncTestClient

    logging.getLogger("httpx").setLevel(logging.WARNING)
    app = create_app(dsn, Settings(database_url=dsn, secret_key=KEY), FrozenClock(NOW))
    headers = {"Authorization": f"Bearer {key}"}
    rows, ok = [], True
    async with AsyncTestClient(app=app) as client:
        for top in (10, 100):
            url = f"/v1/schedules/peaks?top={top}"
            answer = await client.get(url, headers=headers)  # warm-up
            ok = ok and check(answer, jobs)
            times, cpu = [], time.process_time()
            for _ in range(repeat):
                started = time.perf_counter()
                answer = await client.get(url, headers=headers)
                times.append((time.perf_counter() - started) * 1000)
                ok = ok and check(answer, jobs)
            cpu = (time.process_time() - cpu) * 1000 / repeat
            rows.append((f"peaks, top={top}", percentile(times, 50), percentile(times, 95),
                         max(times), len(answer.content) / 1024, cpu))
    return rows, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--dsn", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--smoke", action="store_true", help="CI check: 200 jobs, 3 calls")
    args = parser.parse_args()
    if args.smoke:
        args.jobs, args.repeat = 200, 3
    with contextlib.ExitStack() as stack:
        if not args.dsn:  # an embedded server for the run
            args.dsn = stack.enter_context(server_dsn())
        dsn = stack.enter_context(scratch_database(args.dsn, "cronledger_bench_peaks"))
        started = time.perf_counter()
        key = asyncio.run(seed(dsn, args.jobs))
        seconds = time.perf_counter() - started
        rows, ok = asyncio.run(time_rows(dsn, key, args.jobs, args.repeat))
    print(f"\n{args.jobs} jobs (created in {seconds:.1f} s), {args.repeat} calls per row; "
          f"load average {os.getloadavg()[0]:.2f}\n")
    print("| route | p50 ms | p95 ms | max ms | kB | CPU ms/call |\n"
          "|---|---:|---:|---:|---:|---:|")
    for label, p50, p95, worst, kb, cpu in rows:
        print(f"| {label} | {p50:.1f} | {p95:.1f} | {worst:.1f} | {kb:.1f} | {cpu:.1f} |")
    if not ok:
        print("an answer was not 200 or counted the jobs wrong", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
