"""End to end with real processes: ``cronledger serve`` and two racing ``cronledger worker``s."""

from __future__ import annotations

import asyncio
import collections
import signal
import uuid
from datetime import UTC, datetime
from pathlib import Path

import httpx
import psycopg

from core.db import ConnectionPool
from tests.helpers import add_job, eventually, new_actor
from tests.processes import cronledger, free_port, run_cli, stop, wait_http
from tests.sink import Sink


async def test_serve_fires_a_job_created_over_http(fresh_dsn: str, tmp_path: Path) -> None:
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_PORT": str(free_port())}
    key = run_cli("apikey", "create", "--team", "e2e", env=env).strip()
    assert key.startswith("clk_") and "\n" not in key
    base = f"http://127.0.0.1:{env['CRONLEDGER_PORT']}"
    log = tmp_path / "serve.log"
    server = cronledger("serve", env=env, log=log)
    try:
        await asyncio.to_thread(wait_http, f"{base}/readyz")
        async with Sink() as sink, httpx.AsyncClient(
                base_url=base, headers={"Authorization": f"Bearer {key}"}) as api:
            r = await api.post("/v1/jobs", json={
                "name": "every second", "schedule": "* * * * * *",
                "request": {"url": sink.url("/tick")}})
            assert r.status_code == 201, r.text
            job = r.json()
            await sink.wait_for(3, timeout=15)
            r = await api.post(f"/v1/jobs/{job['id']}/pause")
            assert r.json()["status"] == "paused"

            async def recorded() -> list[dict] | None:  # the last in-flight run is recorded
                items = (await api.get(f"/v1/jobs/{job['id']}/runs")).json()["items"]
                return items if all(r["status"] != "running" for r in items) else None

            runs = await eventually(recorded, 15, what="no run of the paused job in flight")
            seen = len(sink.hits)
            await asyncio.sleep(2.0)  # the window in which a paused job must not fire
            assert len(sink.hits) == seen, "a paused job kept firing"
        succeeded = [r for r in runs if r["status"] == "succeeded"]
        assert len(succeeded) >= 3
        assert all(r["lateness_ms"] < 1000 for r in succeeded), runs
        slots = [h.headers["X-Cronledger-Scheduled-For"] for h in sink.hits]
        assert len(slots) == len(set(slots)), "a slot fired twice"
    finally:
        code = await asyncio.to_thread(stop, server)
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert "Traceback" not in text, text[max(0, text.index("Traceback") - 1000):][:6000]


async def _workers_seen(pool: ConnectionPool) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(DISTINCT worker_id) AS n FROM runs")
        return (await cur.fetchone())["n"]


async def test_two_workers_fire_each_slot_once(
    fresh_dsn: str, fresh_pool: ConnectionPool, tmp_path: Path
) -> None:
    actor = await new_actor(fresh_pool)
    async with Sink() as sink:
        now = datetime.now(UTC)
        for i in range(200):
            await add_job(fresh_pool, actor, now, sink.url(f"/job/{i}"), "*/2 * * * * *",
                          name=f"race {i}")
        env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_CLAIM_BATCH": "20",
               "CRONLEDGER_SHUTDOWN_GRACE": "5"}
        workers = [cronledger("worker", env={**env, "CRONLEDGER_WORKER_ID": f"w{i}"},
                              log=tmp_path / f"worker{i}.log") for i in range(2)]
        try:
            # Under load, process start-up can take seconds: wait for both to be working.
            async def both_working() -> bool:
                return len(sink.hits) >= 400 and await _workers_seen(fresh_pool) >= 2

            await eventually(both_working, 120, 0.2, "400 hits from both workers")
            async with fresh_pool.connection() as conn:
                await conn.execute("DELETE FROM due_jobs")  # stop scheduling new slots
        finally:
            # The sink runs on this event loop: wait for the exits off the loop.
            codes = await asyncio.gather(*(asyncio.to_thread(stop, w, signal.SIGTERM)
                                           for w in workers))
    assert codes == [0, 0]  # exited cleanly: every request sent was answered, so recorded
    hits = collections.Counter(
        (h.path, h.headers["X-Cronledger-Scheduled-For"]) for h in sink.hits)
    assert len(hits) >= 400, len(hits)  # 200 jobs x at least 2 slots
    assert max(hits.values()) == 1, [k for k, v in hits.items() if v > 1][:5]
    with psycopg.connect(fresh_dsn) as conn:
        rows = conn.execute(
            "SELECT j.name, r.scheduled_for, r.status, r.worker_id FROM runs r "
            "JOIN jobs j ON j.id = r.job_id").fetchall()
    # Slots before the workers were up: missed (more than 10 s late), or on time but skipped
    # behind the first of them by the overlap policy (docs/schedules.md, "Catch-up").
    executed = [r for r in rows if r[2] not in ("missed", "skipped")]
    assert len(executed) == len(hits)
    assert {r[2] for r in executed} == {"succeeded"}
    assert {(f"/job/{r[0].split()[1]}", r[1]) for r in executed} == {
        (path, datetime.fromisoformat(slot)) for path, slot in hits}
    assert {r[3] for r in executed} == {"w0", "w1"}, "both workers should have taken a share"


def test_cli_rejects_bad_configuration(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.processes import ROOT

    done = subprocess.run([sys.executable, "-m", "api.cli", "worker"], cwd=ROOT,
                          env={"CRONLEDGER_PORT": "not-a-port", "PATH": "/usr/bin:/bin",
                               "DATABASE_URL": f"postgresql:///nope_{uuid.uuid4().hex}"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "CRONLEDGER_PORT" in done.stderr
