"""procrastinate as `bench/compare.py` runs it: one periodic task registered once per benchmark
job (``cron="* * * * * */PERIOD"``: procrastinate reads a sixth field, last, as seconds;
``periodic_id`` per job), a worker with ``concurrency`` asynchronous slots, each job an aiohttp
request. procrastinate passes the slot as the task's ``timestamp`` argument.

    uv run --group bench python -m bench.peers.procrastinate_peer --dsn … --url … --jobs 100
"""

from __future__ import annotations

import asyncio

import procrastinate

from bench.peers.common import arguments, fire, ready


async def main() -> None:
    args = arguments(__doc__.split("\n\n")[0])
    app = procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=args.dsn))

    @app.task(name="bench_call", pass_context=False)
    async def call(timestamp: int, job: int, url: str) -> None:
        await fire(job, url, timestamp)

    for i in range(args.jobs):
        app.periodic_registry.register_task(
            task=call, cron=f"* * * * * */{args.period}", periodic_id=f"job-{i}",
            configure_kwargs={"task_kwargs": {"job": i, "url": args.url}})
    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        ready()
        # SIGINT / SIGTERM stop the worker gracefully (procrastinate installs the handlers).
        await app.run_worker_async(concurrency=args.concurrency, install_signal_handlers=True)


if __name__ == "__main__":
    asyncio.run(main())
