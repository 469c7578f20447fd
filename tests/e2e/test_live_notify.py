"""Live regions render again on the database's notifications, not on a timer
(api/ui/live.py): the app runs under uvicorn on a free port (the frozen clock, a fresh
database) with the safety re-render set to an hour, so each test fails if the notification
path is broken; a test waits on the stream's next ``fragment`` with a timeout, never a sleep."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import psycopg
import pytest
import uvicorn

from api.app import create_app
from api.ui import live
from core.actor import Actor
from core.apikeys import create_api_key
from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.jobs.commands import create_job
from core.projections.projector import PROJECTED_CHANNEL, Projector
from core.runs.worker import Worker
from tests.helpers import eventually
from tests.integration.test_dashboard_auth import sign_in
from tests.integration.test_dashboard_monitors import _create_monitor
from tests.processes import free_port
from tests.sink import Sink

PROMPT = 10.0  # seconds a notified change may take to reach the stream (the safety: an hour)


@pytest.fixture
async def site(fresh_dsn: str, settings: Settings, clock: FrozenClock,
               monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    monkeypatch.setattr(live, "SAFETY_SECONDS", 3600.0)
    port = free_port()
    config = uvicorn.Config(create_app(fresh_dsn, settings, clock), host="127.0.0.1", port=port,
                            log_level="warning", lifespan="on", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    await eventually(lambda: server.started or task.done(), what="the app listening")
    assert not task.done(), "the app did not start"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    await task


@pytest.fixture
async def browser(site: str, fresh_pool: ConnectionPool) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client signed in with a write key (``.team_id`` set on it)."""
    key, record = await create_api_key(fresh_pool, "live", "write")
    async with httpx.AsyncClient(base_url=site, follow_redirects=True, timeout=30) as client:
        client.csrf = await sign_in(client, key)  # type: ignore[arg-type,attr-defined]
        client.team_id = record["team_id"]  # type: ignore[attr-defined]
        yield client


class Fragments:
    """The ``fragment`` events of one open SSE stream, one at a time."""

    def __init__(self, response: httpx.Response) -> None:
        self.lines = response.aiter_lines()

    async def next(self, timeout: float = PROMPT) -> str:
        async def read() -> str:
            kind, data = None, []
            async for line in self.lines:
                if line.startswith("event:"):
                    kind = line.split(":", 1)[1].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
                elif line == "" and data:
                    if kind == "fragment":
                        return "\n".join(data)
                    kind, data = None, []
            raise AssertionError("the stream ended")
        return await asyncio.wait_for(read(), timeout)


async def test_a_ping_reaches_the_monitors_live_region_without_waiting_for_a_poll(
        site: str, browser: httpx.AsyncClient) -> None:
    monitor_id, token = await _create_monitor(browser, browser.csrf, "live backup")  # type: ignore[arg-type,attr-defined]
    async with browser.stream("GET", f"/ui/monitors/{monitor_id}/live") as response:
        assert response.status_code == 200
        fragments = Fragments(response)
        assert 'data-status="new"' in await fragments.next()
        answer = await browser.post(f"/ping/{token}")
        assert answer.status_code == 200, answer.text
        assert 'data-status="up"' in await fragments.next()


async def test_a_run_reaches_the_job_live_region_through_the_projectors_notification(
        site: str, browser: httpx.AsyncClient, fresh_pool: ConnectionPool, fresh_dsn: str,
        worker: Worker, clock: FrozenClock, sink: Sink) -> None:
    actor = Actor(team_id=browser.team_id)  # type: ignore[attr-defined]
    job_id = await create_job(fresh_pool, actor, {
        "name": "live job", "schedule": "* * * * *",
        "request": {"url": sink.url("/hook")}}, clock.now())
    async with browser.stream("GET", f"/ui/jobs/{job_id}/live") as response:
        assert response.status_code == 200
        fragments = Fragments(response)
        assert "No runs yet." in await fragments.next()
        clock.advance(60.1)
        await worker.run_once()
        await worker.settle()
        assert len(sink.hits) == 1
        projector = Projector(fresh_pool, fresh_dsn, clock)
        # the projector's horizon waits for every older transaction of the shared server
        await eventually(projector.run_once, what="the run's events projected")
        shown = ""
        while not re.search(r'data-run-status="succeeded"', shown):
            shown = await fragments.next()


async def test_the_projector_notifies_once_a_batch_is_applied(
        fresh_pool: ConnectionPool, fresh_dsn: str, clock: FrozenClock) -> None:
    async with await psycopg.AsyncConnection.connect(fresh_dsn, autocommit=True) as conn:
        await conn.execute(f"LISTEN {PROJECTED_CHANNEL}")
        projector = Projector(fresh_pool, fresh_dsn, clock)
        await projector.run_once()  # whatever the template left
        await create_job(fresh_pool, Actor(team_id=(await create_api_key(
            fresh_pool, "notify", "write"))[1]["team_id"]), {
            "name": "notified", "schedule": "@every 1h",
            "request": {"url": "https://example.com/"}}, clock.now())
        await eventually(projector.run_once, what="the job's event projected")
        notify = await anext(conn.notifies(timeout=PROMPT))
        assert notify.channel == PROJECTED_CHANNEL


async def test_an_idle_projector_keeps_the_read_models_current(
        fresh_pool: ConnectionPool, fresh_dsn: str, clock: FrozenClock) -> None:
    projector = Projector(fresh_pool, fresh_dsn, clock)
    await eventually(lambda: _idle(projector), what="the log applied")
    clock.advance(3600)
    assert await projector.run_once() == 0
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT updated_at FROM projection_checkpoints WHERE name = 'reporting'")
        row: Any = await cur.fetchone()
    assert row["updated_at"] == clock.now()  # as of the last check, not of the last event


async def _idle(projector: Projector) -> bool:
    return await projector.run_once() == 0


async def _listening_pids(pool: ConnectionPool) -> list[int]:
    """The backends that have run their LISTEN statements (every channel in one) and wait."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
            " AND query LIKE 'LISTEN %%' AND state = 'idle' ORDER BY pid")
        return [row["pid"] for row in await cur.fetchall()]


async def test_ten_open_pages_share_one_listening_connection_and_all_see_a_ping(
        site: str, browser: httpx.AsyncClient, fresh_pool: ConnectionPool) -> None:
    monitor_id, token = await _create_monitor(browser, browser.csrf, "shared")  # type: ignore[arg-type,attr-defined]
    async with contextlib.AsyncExitStack() as stack:
        streams = []
        for _ in range(10):
            response = await stack.enter_async_context(
                browser.stream("GET", f"/ui/monitors/{monitor_id}/live"))
            streams.append(Fragments(response))
            assert 'data-status="new"' in await streams[-1].next()
        assert len(await _listening_pids(fresh_pool)) == 1  # one per process, not per page
        assert (await browser.post(f"/ping/{token}")).status_code == 200
        shown = await asyncio.gather(*(s.next() for s in streams))
        assert all('data-status="up"' in html for html in shown)


async def test_a_lost_listening_connection_comes_back_and_pages_stay_live(
        site: str, browser: httpx.AsyncClient, fresh_pool: ConnectionPool) -> None:
    monitor_id, token = await _create_monitor(browser, browser.csrf, "failover")  # type: ignore[arg-type,attr-defined]
    async with browser.stream("GET", f"/ui/monitors/{monitor_id}/live") as response:
        fragments = Fragments(response)
        assert 'data-status="new"' in await fragments.next()
        # the first fragment may go out before the listening connection has run its LISTEN
        # (api/ui/live.py starts it with the first stream; on_notify(None) after it connects
        # renders again, so nothing notified meanwhile is missed)
        [lost] = await eventually(lambda: _listening_pids(fresh_pool),
                                  what="the listening connection")
        async with fresh_pool.connection() as conn:
            await conn.execute("SELECT pg_terminate_backend(%s)", (lost,))

        async def back() -> bool:
            pids = await _listening_pids(fresh_pool)
            return bool(pids) and lost not in pids
        await eventually(back, what="a new listening connection")
        assert (await browser.post(f"/ping/{token}")).status_code == 200
        shown = ""
        while 'data-status="up"' not in shown:
            shown = await fragments.next()
