"""End to end with real processes: ``cronledger serve`` delivers a job's failure alert, and a
``kill -9`` while the notifier is sending loses nothing (delivered again after restart)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
from pathlib import Path

import httpx
import psycopg

from tests.integration.test_notifications import verify_signature
from tests.processes import cronledger, free_port, run_cli, stop, wait_http
from tests.sink import Reply, Sink


async def test_serve_alert_survives_kill_between_claim_and_send(
    fresh_dsn: str, tmp_path: Path
) -> None:
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_PORT": str(free_port()),
           "CRONLEDGER_SECRET_KEY": base64.b64encode(os.urandom(32)).decode(),
           "CRONLEDGER_LEASE_MARGIN": "1", "CRONLEDGER_NOTIFY_TIMEOUT": "3"}
    key = run_cli("apikey", "create", "--team", "alerts", env=env).strip()
    base = f"http://127.0.0.1:{env['CRONLEDGER_PORT']}"
    log = tmp_path / "serve.log"
    server = cronledger("serve", env=env, log=log)
    async with Sink() as sink:
        # The first delivery hangs (the process is killed meanwhile); the next one is answered.
        sink.reply("/hook", Reply(delay=5), Reply(status=200))
        sink.reply("/job", Reply(status=500, body=b"disk full"))
        try:
            await asyncio.to_thread(wait_http, f"{base}/readyz")
            async with httpx.AsyncClient(base_url=base,
                                         headers={"Authorization": f"Bearer {key}"}) as api:
                r = await api.post("/v1/channels", json={
                    "name": "receiver", "kind": "webhook", "url": sink.url("/hook")})
                assert r.status_code == 201, r.text
                signing = r.json()["signing_secret"]
                r = await api.post("/v1/jobs", json={
                    "name": "nightly", "schedule": "0 3 * * *",
                    "request": {"url": sink.url("/job")}, "channels": [r.json()["id"]]})
                assert r.status_code == 201, r.text
                job = r.json()["id"]
                assert (await api.post(f"/v1/jobs/{job}/trigger")).status_code == 202
            await sink.wait_for(1, timeout=30, path="/hook")
            server.send_signal(signal.SIGKILL)  # between claim and a recorded send
            await asyncio.to_thread(server.wait, 30)
            server = cronledger("serve", env=env, log=log)
            await sink.wait_for(2, timeout=60, path="/hook")
        finally:
            code = await asyncio.to_thread(stop, server)
    assert code == 0, log.read_text()[-3000:]
    first, second = sink.hits_for("/hook")
    assert first.headers["Idempotency-Key"] == second.headers["Idempotency-Key"]
    assert first.body == second.body
    verify_signature(second.headers["X-Cronledger-Signature"], signing, second.body)
    payload = json.loads(second.body)
    assert payload["type"] == "job.failed" and payload["subject"]["id"] == job
    assert payload["last_response"]["body"] == "disk full"
    with psycopg.connect(fresh_dsn) as conn:
        status, attempt, nid = conn.execute(
            "SELECT status, attempt, id FROM notifications").fetchone()
        kinds = [r[0] for r in conn.execute(
            "SELECT event_type FROM events WHERE stream_id = %s ORDER BY stream_version",
            (nid,)).fetchall()]
    assert (status, attempt) == ("sent", 1)
    assert kinds == ["notification.queued", "notification.sent"]
