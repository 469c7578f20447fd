"""APScheduler 3.x as `bench/compare.py` runs it: an ``AsyncIOScheduler`` with the
``SQLAlchemyJobStore`` on PostgreSQL (psycopg 3), one cron job per benchmark job
(``second='*/PERIOD'``), each call an aiohttp request.

The slot a call stands for is its trigger time: APScheduler 3 does not pass it to the job, so
the call takes the start of the current period (it never fires early, and a call later than a
period would be counted as the next slot's duplicate, so lateness past one period shows).

    uv run --group bench python -m bench.peers.apscheduler_peer --dsn … --url … --jobs 100
"""

from __future__ import annotations

import asyncio
import signal
import time

from apscheduler.executors.asyncio import AsyncIOExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from psycopg.conninfo import conninfo_to_dict

from bench.peers.common import arguments, fire, ready

PERIOD = 10


async def call(job: int, url: str, period: int) -> None:
    """The job function (referenced by name, as a persistent job store requires)."""
    now = time.time()
    await fire(job, url, now - now % period)


def sqlalchemy_url(dsn: str) -> str:
    parts = conninfo_to_dict(dsn)
    host = parts.get("host", "127.0.0.1")
    auth = parts.get("user", "postgres") + (f":{parts['password']}" if "password" in parts
                                            else "")
    return f"postgresql+psycopg://{auth}@{host}:{parts.get('port', 5432)}/{parts['dbname']}"


async def main() -> None:
    args = arguments(__doc__.split("\n\n")[0])
    scheduler = AsyncIOScheduler(
        jobstores={"default": SQLAlchemyJobStore(url=sqlalchemy_url(args.dsn))},
        executors={"default": AsyncIOExecutor()},
        job_defaults={"coalesce": False, "max_instances": 1, "misfire_grace_time": 60},
        timezone="UTC")
    scheduler.start()
    for i in range(args.jobs):
        scheduler.add_job("bench.peers.apscheduler_peer:call", "cron",
                          second=f"*/{args.period}", args=[i, args.url, args.period],
                          id=f"job-{i}", replace_existing=True)
    ready()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    scheduler.shutdown(wait=False)


if __name__ == "__main__":
    asyncio.run(main())
