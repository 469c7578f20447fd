"""Every ping answered 200 survives a kill -9 of the API (docs/heartbeats.md): ``cronledger api
--workers 2`` is killed with SIGKILL, every process of it at once, while pings are in flight;
each ping carries its own number in its User-Agent, and every number answered 200 must be in
a ``monitor.pinged`` event. A ping whose answer was lost with the process may be recorded or
not (its outcome is unknown to the client, which retries it)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.helpers import eventually
from tests.processes import cronledger, free_port, run_cli, wait_http

MONITORS = 3
SENDERS = 24


def _descendants(pid: int) -> list[int]:
    """The processes under ``pid`` (uvicorn's workers), from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


@pytest.mark.parametrize("synchronous_commit", ["true", "false"])
async def test_every_ping_answered_200_survives_kill_9_of_the_api(
        fresh_dsn: str, tmp_path: Path, synchronous_commit: str) -> None:
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_PORT": str(free_port()),
           "CRONLEDGER_PING_SYNCHRONOUS_COMMIT": synchronous_commit}
    key = run_cli("apikey", "create", "--team", "kill", env=env).strip()
    base = f"http://127.0.0.1:{env['CRONLEDGER_PORT']}"
    server = cronledger("api", "--workers", "2", env=env, log=tmp_path / "api.log")
    answered: set[int] = set()
    numbers = iter(range(10**9))
    try:
        await asyncio.to_thread(wait_http, f"{base}/readyz", 120)
        async with httpx.AsyncClient(base_url=base,
                                     headers={"Authorization": f"Bearer {key}"}) as api:
            monitors = []
            for n in range(MONITORS):
                r = await api.post("/v1/monitors", json={"name": f"m{n}", "schedule": "1h"})
                assert r.status_code == 201, r.text
                monitors.append(r.json())
        await asyncio.to_thread(wait_http, f"{base}/readyz", 120)
        workers = _descendants(server.pid)

        async def send(client: httpx.AsyncClient) -> None:
            while True:
                number = next(numbers)
                url = monitors[number % MONITORS]["ping_url"]
                try:
                    r = await client.get(url, headers={"User-Agent": f"ping-{number}"})
                except httpx.HTTPError:
                    return  # the API is gone: this ping's outcome is unknown
                assert r.status_code == 200, r.text
                answered.add(number)

        limits = httpx.Limits(max_connections=SENDERS, max_keepalive_connections=SENDERS)
        async with httpx.AsyncClient(limits=limits, timeout=10) as client:
            senders = [asyncio.create_task(send(client)) for _ in range(SENDERS)]
            await eventually(lambda: len(answered) >= 300, 60, 0.01, "300 pings answered")
            for pid in [server.pid, *workers]:  # every process of the API at once
                os.kill(pid, signal.SIGKILL)
            await asyncio.wait_for(asyncio.gather(*senders), 30)
    finally:  # whatever happened, no process of the API is left behind
        for pid in [server.pid, *_descendants(server.pid)]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        server.wait()
    with psycopg.connect(fresh_dsn) as conn:
        rows = conn.execute(
            "SELECT data->>'user_agent' FROM events WHERE event_type = 'monitor.pinged'"
            " AND stream_id = ANY(%s::uuid[])", ([m["id"] for m in monitors],)).fetchall()
    recorded = {int(agent.removeprefix("ping-")) for (agent,) in rows}
    assert len(rows) == len(recorded)  # no ping recorded twice
    assert answered <= recorded, sorted(answered - recorded)[:20]
    assert len(answered) >= 300
