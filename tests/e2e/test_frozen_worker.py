"""A worker frozen (SIGSTOP) past its lease, for real: when it resumes it does not send what it
had claimed ahead of the slot - another worker has sent that slot meanwhile - and it says so in
its log (docs/operations.md, "Leases, crashes and shutdown")."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.db import ConnectionPool
from tests.helpers import add_job, eventually, new_actor
from tests.processes import cronledger, stop
from tests.sink import Sink


async def _claimed_ahead(pool: ConnectionPool, worker: str) -> datetime | None:
    """The slot of a run ``worker`` holds whose slot has not come yet."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT scheduled_for FROM runs WHERE worker_id = %s AND status = 'running' "
            "AND scheduled_for > now() + interval '0.15 s'", (worker,))
        row = await cur.fetchone()
    return row["scheduled_for"] if row else None


async def test_a_worker_frozen_past_its_lease_does_not_send_its_stale_claims(
        fresh_dsn: str, fresh_pool: ConnectionPool, tmp_path: Path) -> None:
    env = {"DATABASE_URL": fresh_dsn, "CRONLEDGER_LEASE_MARGIN": "1",
           "CRONLEDGER_CLAIM_LOOKAHEAD": "1.5"}
    actor = await new_actor(fresh_pool)
    processes: list[subprocess.Popen] = []
    async with Sink() as sink:
        await add_job(fresh_pool, actor, datetime.now(UTC), sink.url("/slot"),
                      "*/6 * * * * *", timeout_seconds=1)
        frozen = cronledger("worker", env={**env, "CRONLEDGER_WORKER_ID": "frozen"},
                            log=tmp_path / "frozen.log")
        processes.append(frozen)
        try:
            slot = await eventually(lambda: _claimed_ahead(fresh_pool, "frozen"), 60, 0.02,
                                    "a slot claimed ahead by the first worker")
            frozen.send_signal(signal.SIGSTOP)  # frozen before the slot, holding its claim
            other = cronledger("worker", env={**env, "CRONLEDGER_WORKER_ID": "other"},
                               log=tmp_path / "other.log")
            processes.append(other)
            key = slot.isoformat().replace("+00:00", "Z")
            await eventually(lambda: any(h.headers["X-Cronledger-Scheduled-For"] == key
                                         for h in sink.hits), 60, 0.05,
                             "the other worker sending the slot once the lease expired")
            frozen.send_signal(signal.SIGCONT)
            await eventually(lambda: "not sent: its lease" in (tmp_path / "frozen.log")
                             .read_text(), 30, 0.1, "the resumed worker giving up its claim")
            await asyncio.sleep(1.0)  # the window in which a stale send would arrive
            seen = [h for h in sink.hits if h.headers["X-Cronledger-Scheduled-For"] == key]
            assert len(seen) == 1, [(h.at, h.headers["Idempotency-Key"]) for h in seen]
            assert seen[0].at > slot + timedelta(seconds=2)  # after the lease: the other's
        finally:
            for process in processes:
                process.send_signal(signal.SIGCONT)
            await asyncio.gather(*(asyncio.to_thread(stop, p) for p in processes))
