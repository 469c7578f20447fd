"""Leases with real processes: a worker killed with SIGKILL mid-flight, and a worker stopped with
SIGTERM, against a slow local HTTP server (docs/operations.md, "Leases, crashes and shutdown")."""

from __future__ import annotations

import asyncio
import collections
import subprocess
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg

from core.db import ConnectionPool
from core.jobs.commands import trigger_job
from tests.helpers import add_job, eventually, new_actor
from tests.processes import cronledger, stop
from tests.sink import Reply, Sink


async def _wait_for_log(path: Path, text: str, process: subprocess.Popen,
                        timeout: float = 90) -> None:
    def logged() -> bool:
        if path.exists() and text in path.read_text():
            return True
        assert process.poll() is None, path.read_text()[-3000:]
        return False

    await eventually(logged, timeout, 0.1, f"{text!r} in {path}")


async def _rows(pool: ConnectionPool, sql: str, *params: Any) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(sql, params)
        return await cur.fetchall()


async def _until(check: Any, timeout: float, what: str) -> Any:
    return await eventually(check, timeout, 0.2, what)


def _start(role: str, env: dict[str, str], tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    log = tmp_path / f"{role}.log"
    return cronledger("worker", env={**env, "CRONLEDGER_WORKER_ID": role}, log=log), log


async def test_kill_9_mid_flight_loses_nothing_and_fires_nothing_twice(
    fresh_dsn: str, fresh_pool: ConnectionPool, tmp_path: Path
) -> None:
    actor = await new_actor(fresh_pool)
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_LEASE_MARGIN": "2",
           "CRONLEDGER_SHUTDOWN_GRACE": "5"}
    workers: dict[str, subprocess.Popen] = {}
    async with Sink() as sink:
        jobs = {}
        for i in range(8):
            path = f"/slow/{i}"
            sink.reply(path, Reply(delay=1.5))
            job_id = await add_job(fresh_pool, actor, datetime.now(UTC), sink.url(path),
                                   "*/2 * * * * *", name=f"slow {i}", timeout_seconds=4,
                                   overlap="allow")
            jobs[job_id] = path
        try:
            for role in ("w0", "w1"):
                workers[role], log = _start(role, env, tmp_path)
            for role in ("w0", "w1"):
                await _wait_for_log(tmp_path / f"{role}.log", f"worker {role} started",
                                    workers[role])

            async def w0_mid_flight() -> bool:
                seen = {h.headers["Idempotency-Key"] for h in sink.hits}
                rows = await _rows(fresh_pool, "SELECT id FROM runs WHERE worker_id = 'w0' "
                                               "AND status = 'running'")
                return any(str(r["id"]) in seen for r in rows)

            await _until(w0_mid_flight, 60, "w0 to have a request in flight")
            workers["w0"].kill()  # SIGKILL: no shutdown, no release, no recording
            workers["w0"].wait(30)
            orphans = await _rows(fresh_pool, "SELECT id, lease_expires_at FROM runs "
                                              "WHERE worker_id = 'w0' AND status = 'running'")
            assert orphans, "w0 had nothing in flight when killed"

            async def orphans_done() -> bool:
                rows = await _rows(fresh_pool, "SELECT status FROM runs WHERE id = ANY(%s)",
                                   [o["id"] for o in orphans])
                return all(r["status"] == "succeeded" for r in rows)

            await _until(orphans_done, 60, "w1 to take over the orphaned runs")
            async with fresh_pool.connection() as conn:
                await conn.execute("DELETE FROM due_jobs")  # stop scheduling new slots

            async def drained() -> bool:
                rows = await _rows(fresh_pool, "SELECT count(*) AS n FROM runs "
                                               "WHERE status IN ('queued', 'running')")
                return rows[0]["n"] == 0

            await _until(drained, 60, "every run to finish")
        finally:
            codes = await asyncio.gather(*(asyncio.to_thread(stop, w) for w in workers.values()))
    assert codes[1] == 0, (tmp_path / "w1.log").read_text()[-3000:]
    assert "Traceback" not in (tmp_path / "w1.log").read_text()
    runs = await _rows(fresh_pool, "SELECT * FROM runs")
    run_by_id = {str(r["id"]): r for r in runs}
    # Every slot ends exactly once in runs, none is left behind, none is lost.
    slots = collections.Counter((r["job_id"], r["scheduled_for"]) for r in runs)
    assert max(slots.values()) == 1
    assert {r["status"] for r in runs} <= {"succeeded", "missed"}, collections.Counter(
        r["status"] for r in runs)
    for job_id in jobs:
        mine = sorted(r["scheduled_for"] for r in runs if r["job_id"] == job_id)
        gaps = [b - a for a, b in zip(mine, mine[1:], strict=False)]
        assert set(gaps) == {timedelta(seconds=2)}, (job_id, mine)  # no slot lost
    # Every request the server saw belongs to its slot's run; a slot seen twice carried the
    # same Idempotency-Key (and the same attempt number) both times.
    by_slot: dict[tuple[str, str], list[Any]] = collections.defaultdict(list)
    for hit in sink.hits:
        by_slot[(hit.path, hit.headers["X-Cronledger-Scheduled-For"])].append(hit)
    twice = {slot: hits for slot, hits in by_slot.items() if len(hits) > 1}
    assert twice, "no request was re-sent: the kill did not interrupt a request in flight"
    for (path, slot), hits in by_slot.items():
        keys = {h.headers["Idempotency-Key"] for h in hits}
        assert len(keys) == 1, (path, slot, keys)
        assert len({h.headers["X-Cronledger-Attempt"] for h in hits}) == 1
        run = run_by_id[keys.pop()]
        assert jobs[run["job_id"]] == path
        assert run["scheduled_for"] == datetime.fromisoformat(slot)
        assert run["status"] == "succeeded"
    assert all(len(h) == 2 for h in twice.values())
    for orphan in orphans:
        run = run_by_id[str(orphan["id"])]
        assert run["worker_id"] == "w1" and run["attempt"] == 1
        events = await _rows(fresh_pool, "SELECT event_type, data FROM events "
                                         "WHERE stream_id = %s ORDER BY stream_version",
                             orphan["id"])
        assert [e["event_type"] for e in events] == ["run.started", "run.started",
                                                     "run.succeeded"]
        assert events[0]["data"]["worker_id"] == "w0"
        assert events[1]["data"]["redispatch"] is True
        assert events[1]["data"]["worker_id"] == "w1"


async def test_sigterm_finishes_in_flight_and_releases_the_rest(
    fresh_dsn: str, fresh_pool: ConnectionPool, tmp_path: Path
) -> None:
    actor = await new_actor(fresh_pool)
    grace = 14
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_SHUTDOWN_GRACE": str(grace),
           "CRONLEDGER_LEASE_MARGIN": "60"}
    workers: dict[str, subprocess.Popen] = {}
    async with Sink() as sink:
        jobs: dict[uuid.UUID, str] = {}
        for kind, replies in (("fast", [Reply(delay=8)]),
                              ("slow", [Reply(delay=120), Reply(delay=0)])):
            for i in range(3):
                path = f"/{kind}/{i}"
                sink.reply(path, *replies)
                job = await add_job(fresh_pool, actor, datetime.now(UTC), sink.url(path),
                                    "0 0 1 1 *", name=f"{kind} {i}", timeout_seconds=180)
                jobs[job] = kind
        try:
            workers["w0"], w0_log = _start("w0", env, tmp_path)
            await _wait_for_log(w0_log, "worker w0 started", workers["w0"])
            for job in jobs:
                await trigger_job(fresh_pool, actor, job, datetime.now(UTC))
            await sink.wait_for(6, timeout=60)  # all six requests in flight at w0
            workers["w1"], w1_log = _start("w1", env, tmp_path)
            await _wait_for_log(w1_log, "worker w1 started", workers["w1"])
            before = await _rows(fresh_pool, "SELECT id, job_id, status, worker_id, "
                                             "lease_expires_at FROM runs")
            assert {(r["status"], r["worker_id"]) for r in before} == {("running", "w0")}
            stopping = asyncio.create_task(asyncio.to_thread(stop, workers["w0"]))

            async def slow_redone() -> bool:
                return len(sink.hits) >= 9

            await _until(slow_redone, 90, "the released runs to be sent again")
            w0_code = await stopping

            async def all_recorded() -> bool:
                rows = await _rows(fresh_pool, "SELECT count(*) AS n FROM runs "
                                               "WHERE status <> 'succeeded'")
                return rows[0]["n"] == 0

            await _until(all_recorded, 30, "w1 to record the last results")
        finally:
            codes = await asyncio.gather(*(asyncio.to_thread(stop, w) for w in workers.values()))
    w0_text = w0_log.read_text()
    assert w0_code == 0 and codes[0] == 0 and codes[1] == 0, w0_text[-3000:]
    assert "released 3 unfinished runs" in w0_text
    assert "Traceback" not in w0_text + w1_log.read_text()
    runs = {r["id"]: r for r in await _rows(fresh_pool, "SELECT * FROM runs")}
    lease_before = {r["id"]: r["lease_expires_at"] for r in before}
    for run in runs.values():
        hits = [h for h in sink.hits if h.headers["Idempotency-Key"] == str(run["id"])]
        assert run["status"] == "succeeded", run
        assert {h.headers["X-Cronledger-Attempt"] for h in hits} == {"1"}
        if jobs[run["job_id"]] == "fast":
            # Finished within the grace period and recorded by the stopping worker.
            assert run["worker_id"] == "w0" and len(hits) == 1
        else:
            # Released at the end of the grace period and taken by w1 at once: long before
            # its lease (timeout 180 s + margin 60 s) would have expired.
            assert run["worker_id"] == "w1" and len(hits) == 2
            assert hits[1].at < lease_before[run["id"]]
            events = await _rows(fresh_pool, "SELECT event_type, data FROM events "
                                             "WHERE stream_id = %s ORDER BY stream_version",
                                 run["id"])
            assert [e["event_type"] for e in events] == [
                "run.queued", "run.started", "run.started", "run.succeeded"]
            assert events[2]["data"]["redispatch"] is True
    with psycopg.connect(fresh_dsn) as conn:
        (leftover,) = conn.execute("SELECT count(*) FROM runs WHERE status <> 'succeeded'"
                                   ).fetchone()
    assert leftover == 0
