"""``/readyz`` never says ready while jobs are not firing (docs/operations.md,
"Supervision and health checks"): the background services of the same process (``serve``)
starved of connections while the API still holds its own, or registered workers none of which
has reached the database lately, are a 503 that says so; the API alone with no worker
registered is ready."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from litestar.testing import AsyncTestClient

from api.app import create_app
from core.clock import SystemClock
from core.config import Settings
from core.db import open_pool
from core.runs.registry import LIVE_SECONDS, beat
from core.services.health import Heartbeat, ServicesHealth
from tests.dbproxy import DbProxy
from tests.helpers import eventually


async def test_services_starved_of_connections_are_not_ready(
        fresh_dsn: str, settings: Settings, tmp_path: Path) -> None:
    health = ServicesHealth()
    app = create_app(fresh_dsn, settings, SystemClock(), services_health=health)
    with DbProxy(fresh_dsn) as proxy:
        services_pool = await open_pool(proxy.dsn, min_size=1, max_size=1, timeout=0.5)
        heartbeat = Heartbeat(tmp_path / "beat", services_pool, SystemClock(), interval=0.1,
                              db_timeout=0.5, health=health)
        forever = asyncio.create_task(asyncio.Event().wait())
        beating = asyncio.create_task(heartbeat.run([forever]))
        try:
            async with AsyncTestClient(app=app, raise_server_exceptions=False) as api:
                await eventually(lambda: (tmp_path / "beat").exists())
                ready = await api.get("/readyz")
                assert ready.status_code == 200, ready.text
                proxy.full()  # "too many clients" for the services; the API keeps its pool

                async def starved() -> bool:
                    return (await api.get("/readyz")).status_code == 503
                await eventually(starved, what="/readyz 503 while the services are starved")
                answer = await api.get("/readyz")
                assert "background services cannot reach the database" in answer.json()["detail"]
                assert "too many clients" in answer.json()["detail"]
                assert (await api.get("/healthz")).status_code == 200
                proxy.forward()

                async def ready_again() -> bool:
                    return (await api.get("/readyz")).status_code == 200
                await eventually(ready_again, what="/readyz 200 once the services reach it")
        finally:
            beating.cancel()
            forever.cancel()
            await asyncio.gather(beating, forever, return_exceptions=True)
            await services_pool.close()


async def test_services_ready_again_soon_after_the_database_is_back(
        fresh_dsn: str, settings: Settings, tmp_path: Path) -> None:
    """A failed beat is retried every ``retry_interval`` s, not after a whole ``interval``: an
    hour-long interval here, so only the retry can see the database back."""
    health = ServicesHealth()
    app = create_app(fresh_dsn, settings, SystemClock(), services_health=health)
    with DbProxy(fresh_dsn) as proxy:
        services_pool = await open_pool(proxy.dsn, min_size=1, max_size=1, timeout=0.5)
        heartbeat = Heartbeat(tmp_path / "beat", services_pool, SystemClock(), interval=3600,
                              retry_interval=0.2, db_timeout=0.5, health=health)
        forever = asyncio.create_task(asyncio.Event().wait())
        proxy.full()  # the first beat fails
        beating = asyncio.create_task(heartbeat.run([forever]))
        try:
            async with AsyncTestClient(app=app, raise_server_exceptions=False) as api:
                async def not_ready() -> bool:
                    return (await api.get("/readyz")).status_code == 503
                await eventually(not_ready, what="/readyz 503 while the services are starved")
                proxy.forward()

                async def ready_again() -> bool:
                    return (await api.get("/readyz")).status_code == 200
                await eventually(ready_again, 20,
                                 what="/readyz 200 within seconds, not after the interval")
                assert (tmp_path / "beat").exists()
        finally:
            beating.cancel()
            forever.cancel()
            await asyncio.gather(beating, forever, return_exceptions=True)
            await services_pool.close()


async def test_registered_workers_none_live_are_not_ready(fresh_dsn: str,
                                                          settings: Settings) -> None:
    app = create_app(fresh_dsn, settings, SystemClock())
    pool = await open_pool(fresh_dsn, min_size=1, max_size=1)
    try:
        async with AsyncTestClient(app=app, raise_server_exceptions=False) as api:
            ready = await api.get("/readyz")  # no worker ever registered: an API alone
            assert ready.status_code == 200 and ready.json()["live_workers"] == 0
            now = SystemClock().now()
            await beat(pool, "w-starved", now - timedelta(seconds=LIVE_SECONDS + 12))
            stale = await api.get("/readyz")
            assert stale.status_code == 503, stale.text
            detail = stale.json()["detail"]
            assert detail.startswith("workers cannot reach the database") and "42 s" in detail
            await beat(pool, "w-starved", now)
            ready = await api.get("/readyz")
            assert ready.status_code == 200 and ready.json()["live_workers"] == 1
    finally:
        await pool.close()
