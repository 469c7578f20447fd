"""The API while PostgreSQL is away (docs/operations.md, "Database outages"): every route that
needs the database answers 503 with Retry-After within 2 s, the outage is logged once without a
traceback, a ping answered 503 is not recorded, and the API serves again soon after the
database is back. The database is cut off by a real TCP proxy (tests/dbproxy.py)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import Any

import httpx
import pytest
from litestar.testing import AsyncTestClient

from api.app import create_app
from core.clock import SystemClock
from core.config import Settings
from tests.dbproxy import DbProxy
from tests.teams import Team

BOUND = 2.0  # seconds: the longest a request may take to be answered 503
JOB = {"name": "outage", "schedule": "*/5 * * * *", "request": {"url": "http://127.0.0.1:9/"}}


async def _timed(request: Awaitable[httpx.Response]) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = await request
    return response, time.monotonic() - started


async def _recovered(api: AsyncTestClient, team: Team, token: str, limit: float) -> float:
    """Seconds until jobs, pings and readiness all answer 200 again (at most ``limit``)."""
    started = time.monotonic()
    while True:
        codes = [(await api.get("/v1/jobs", headers=team.auth)).status_code,
                 (await api.get(f"/ping/{token}")).status_code,
                 (await api.get("/readyz")).status_code]
        elapsed = time.monotonic() - started
        if codes == [200, 200, 200]:
            return elapsed
        assert elapsed < limit, f"not serving {elapsed:.1f} s after the database came back: {codes}"
        await asyncio.sleep(0.05)


async def _ping_count(api: AsyncTestClient, team: Team, monitor: dict[str, Any]) -> int:
    r = await api.get(f"/v1/monitors/{monitor['id']}/pings?limit=200", headers=team.auth)
    assert r.status_code == 200, r.text
    return len(r.json()["items"])


@pytest.mark.parametrize("cut", ["blackhole", "refuse", "full"])
async def test_every_route_answers_503_fast_and_recovers(
        shared_dsn: str, settings: Settings, team: Team, cut: str,
        caplog: pytest.LogCaptureFixture) -> None:
    """``blackhole``: connects hang; ``refuse``: PostgreSQL stopped; ``full``: every connection
    is refused with FATAL 53300 (too many clients). Existing connections are cut in each."""
    with DbProxy(shared_dsn) as proxy:
        app = create_app(proxy.dsn, settings, SystemClock())
        async with AsyncTestClient(app=app, raise_server_exceptions=False) as api:
            r = await api.post("/v1/monitors", json={"name": "outage", "schedule": "1h"},
                               headers=team.auth)
            assert r.status_code == 201, r.text
            monitor, token = r.json(), r.json()["ping_token"]
            assert (await api.get(f"/ping/{token}")).status_code == 200
            assert await _ping_count(api, team, monitor) == 1
            # Litestar's logging set-up replaced the root handlers, pytest's among them.
            logging.getLogger().addHandler(caplog.handler)
            try:
                await _cut_off(api, proxy, cut, team, monitor, token, caplog)
            finally:
                logging.getLogger().removeHandler(caplog.handler)


async def _cut_off(api: AsyncTestClient, proxy: DbProxy, cut: str, team: Team,
                   monitor: dict[str, Any], token: str, caplog: pytest.LogCaptureFixture) -> None:
    """Cut the database off with ``cut``, check the answers, the log, and the recovery."""
    caplog.set_level(logging.INFO, logger="cronledger")
    caplog.clear()
    getattr(proxy, cut)()

    auth = team.auth
    answers = await asyncio.gather(*(_timed(request) for request in (
        api.get("/v1/jobs", headers=auth),
        api.post("/v1/jobs", json=JOB, headers=auth),
        api.get(f"/v1/monitors/{monitor['id']}", headers=auth),
        api.get("/readyz"),
        api.get("/metrics"),
        api.get(f"/ping/{token}"),  # (the test client sends these one at a time; pings
        api.post(f"/ping/{token}/fail", content=b"log"),  # queued behind one: test_outage_pings)
        api.head(f"/v1/ping/{token}/start"),
        api.get(f"/ping/{token}/0"),
        api.get("/api/v3/checks/", headers={"X-Api-Key": team.write}),
        api.post("/api/v3/checks/", json={"name": "x"}, headers={"X-Api-Key": team.write}),
    )))
    for (response, elapsed), path in zip(answers, (
            "jobs", "post job", "monitor", "readyz", "metrics", "ping", "ping fail",
            "ping start", "ping 0", "v3 list", "v3 create"), strict=True):
        assert response.status_code == 503, (path, response.status_code, response.text)
        assert response.headers["retry-after"] == "1", path
        assert elapsed < BOUND, (path, elapsed)
        if path.startswith("v3"):  # healthchecks' error shape (api/hc/routes.py)
            assert "error" in response.json(), path
        elif not path.startswith("ping"):
            assert response.headers["content-type"] == "application/problem+json"
            assert response.json()["status"] == 503
    assert (await api.get("/healthz")).status_code == 200  # liveness: no database

    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING
                and r.name.startswith("cronledger")]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "database unreachable" in warnings[0].getMessage()
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"

    proxy.forward()
    took = await _recovered(api, team, token, limit=5.0)
    assert took < 1.5, took
    # Only the ping sent after the outage was recorded: none answered 503 was.
    assert await _ping_count(api, team, monitor) == 2
    back = [r.getMessage() for r in caplog.records
            if "database reachable again" in r.getMessage()]
    assert len(back) == 1, back
