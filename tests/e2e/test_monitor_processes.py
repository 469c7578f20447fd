"""Monitors end to end with real processes: ``serve`` runs the checker, ``api --workers 2``
serves pings from two processes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import psycopg

from tests.helpers import eventually
from tests.processes import cronledger, free_port, run_cli, stop, wait_http


async def test_serve_notices_a_monitor_that_stops_pinging(fresh_dsn: str,
                                                          tmp_path: Path) -> None:
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_PORT": str(free_port())}
    key = run_cli("apikey", "create", "--team", "e2e", env=env).strip()
    base = f"http://127.0.0.1:{env['CRONLEDGER_PORT']}"
    log = tmp_path / "serve.log"
    server = cronledger("serve", env=env, log=log)
    try:
        await asyncio.to_thread(wait_http, f"{base}/readyz")
        async with httpx.AsyncClient(base_url=base,
                                     headers={"Authorization": f"Bearer {key}"}) as api:
            r = await api.post("/v1/monitors", json={"name": "demo", "schedule": "1s",
                                                     "grace_seconds": 1})
            assert r.status_code == 201, r.text
            monitor = r.json()
            r = await api.post(monitor["ping_url"], content=b"backup ok")
            assert r.status_code == 200 and r.text == "OK"

            async def down() -> bool:
                r = await api.get(f"/v1/monitors/{monitor['id']}")
                return r.json()["status"] == "down"

            await eventually(down, 30, 0.2, "the monitor down")
            events = (await api.get(f"/v1/monitors/{monitor['id']}/events")).json()["items"]
    finally:
        code = await asyncio.to_thread(stop, server)
    assert code == 0, log.read_text()[-3000:]
    assert "Traceback" not in log.read_text()
    assert [e["event_type"] for e in events] == [
        "monitor.created", "monitor.pinged", "monitor.up", "monitor.late", "monitor.down"]
    assert events[-1]["data"]["reason"] == "overdue"


async def test_api_with_two_workers_records_every_ping(fresh_dsn: str, tmp_path: Path) -> None:
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_PORT": str(free_port())}
    key = run_cli("apikey", "create", "--team", "workers", env=env).strip()
    base = f"http://127.0.0.1:{env['CRONLEDGER_PORT']}"
    log = tmp_path / "api.log"
    server = cronledger("api", "--workers", "2", env=env, log=log)
    try:
        await asyncio.to_thread(wait_http, f"{base}/readyz", 60)
        async with httpx.AsyncClient(base_url=base,
                                     headers={"Authorization": f"Bearer {key}"}) as api:
            r = await api.post("/v1/monitors", json={"name": "busy", "schedule": "1h"})
            monitor = r.json()
            answers = await asyncio.gather(*(api.get(monitor["ping_url"]) for _ in range(60)))
            assert [a.status_code for a in answers] == [200] * 60
            # The client address: the peer (127.0.0.1) is a trusted proxy by default
            # (CRONLEDGER_TRUSTED_PROXIES), so the right-most X-Forwarded-For entry that is not
            # one, when it is an IP, else the real peer; never other text from the header.
            for forwarded in (b"203.0.113.9, 10.0.0.1", b"not-an-ip, 198.51.100.7", b"\xff",
                              b"9" * 5000):
                r = await api.get(monitor["ping_url"], headers={"X-Forwarded-For": forwarded})
                assert r.status_code == 200
            r = await api.get(f"/v1/monitors/{monitor['id']}/pings", params={"limit": 4})
            addresses = [p["remote_addr"] for p in r.json()["items"]]
    finally:
        code = await asyncio.to_thread(stop, server)
    assert code == 0, log.read_text()[-3000:]
    assert log.read_text().count("Application startup complete") == 2
    with psycopg.connect(fresh_dsn) as conn:
        [(pinged,)] = conn.execute(
            "SELECT count(*) FROM events WHERE stream_id = %s AND event_type = 'monitor.pinged'",
            (monitor["id"],)).fetchall()
    assert pinged == 64
    assert addresses == ["127.0.0.1", "127.0.0.1", "198.51.100.7", "10.0.0.1"]  # latest first
