"""Pools that heal at once (docs/operations.md, "Database outages"): once PostgreSQL accepts
connections again after a restart, no request fails because of a pooled connection that died
while idle - not a query of the pools, not an API route, not a ping. The restart is a real TCP
(or Unix-socket) proxy cutting every connection and accepting again (tests/dbproxy.py)."""

from __future__ import annotations

import asyncio

import pytest
from litestar.testing import AsyncTestClient

from api.app import create_app
from core.apikeys import create_api_key
from core.clock import SystemClock
from core.config import Settings
from core.db import QUIET_CHECK_SECONDS, open_pool
from core.migrate import upgrade
from core.monitors.ping import open_ping_pool
from tests.clusters import single_cluster
from tests.dbproxy import DbProxy
from tests.helpers import eventually
from tests.teams import Team


@pytest.mark.parametrize("idle", [False, True], ids=["just-used", "idle"])
async def test_no_query_draws_a_connection_that_died_idle(fresh_dsn: str, idle: bool,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """Both ways a dead connection is found: its socket reads EOF (the server closed it), or
    it sat idle long enough to be checked with a round trip."""
    if idle:
        monkeypatch.setattr("core.db.QUIET_CHECK_SECONDS", 0.0)
    assert QUIET_CHECK_SECONDS <= 1.0
    with DbProxy(fresh_dsn) as proxy:
        pool = await open_pool(proxy.dsn, min_size=5, max_size=5)
        pings = await open_ping_pool(proxy.dsn, size=4)
        try:
            await eventually(lambda: pool.get_stats()["pool_available"] == 5)
            proxy.refuse()  # PostgreSQL restarts: every connection is cut ...
            proxy.forward()  # ... and it accepts connections again
            for _ in range(12):
                async with pool.connection() as conn:
                    assert (await (await conn.execute("SELECT 1 AS one")).fetchone()) == \
                        {"one": 1}
                async with pings.connection() as conn:
                    assert (await (await conn.execute("SELECT 1")).fetchone()) == (1,)
            assert pool.dead_connections >= 1 and pings.dead_connections >= 1
        finally:
            await pings.close()
            await pool.close()


async def test_no_request_fails_after_a_restart(shared_dsn: str, settings: Settings,
                                                team: Team) -> None:
    with DbProxy(shared_dsn) as proxy:
        app = create_app(proxy.dsn, settings, SystemClock())
        async with AsyncTestClient(app=app, raise_server_exceptions=False) as api:
            r = await api.post("/v1/monitors", json={"name": "heal", "schedule": "1h"},
                               headers=team.auth)
            assert r.status_code == 201, r.text
            token = r.json()["ping_token"]
            assert (await api.get(f"/ping/{token}")).status_code == 200
            proxy.refuse()
            proxy.forward()
            codes = []
            for _ in range(10):
                codes += [(await api.get("/v1/jobs", headers=team.auth)).status_code,
                          (await api.get(f"/ping/{token}")).status_code,
                          (await api.get("/readyz")).status_code]
            assert codes == [200] * 30, codes


async def test_no_request_fails_after_a_real_restart(settings: Settings) -> None:
    """PostgreSQL itself restarted (``pg_ctl restart``, fast and immediate): its sessions end
    with FATAL 57P01 or without a word."""
    with single_cluster() as cluster:
        cluster.execute("CREATE DATABASE cronledger")
        dsn = cluster.conninfo("cronledger")
        upgrade(dsn)
        pool = await open_pool(dsn, min_size=1, max_size=1)
        try:
            key, _ = await create_api_key(pool, "restart")
        finally:
            await pool.close()
        app = create_app(dsn, settings, SystemClock())
        async with AsyncTestClient(app=app, raise_server_exceptions=False) as api:
            auth = {"Authorization": f"Bearer {key}"}
            r = await api.post("/v1/monitors", json={"name": "heal", "schedule": "1h"},
                               headers=auth)
            assert r.status_code == 201, r.text
            token = r.json()["ping_token"]
            for mode in ("fast", "immediate"):
                assert (await api.get(f"/ping/{token}")).status_code == 200
                assert (await api.get("/v1/jobs", headers=auth)).status_code == 200
                await asyncio.to_thread(cluster.restart, mode)
                codes = []
                for _ in range(8):
                    codes += [(await api.get("/v1/jobs", headers=auth)).status_code,
                              (await api.get(f"/ping/{token}")).status_code]
                assert codes == [200] * 16, (mode, codes)
