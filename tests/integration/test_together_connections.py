"""A page's reads at once (api/ui/together.py) are each on a pooled connection of their own:
two reads of one call hold two server sessions at the same time, never two statements on one
connection (psycopg would queue them behind each other, and they would share a transaction).
Every read given to ``together`` takes the pool and asks it for its connection (api/ui/pages:
jobs.py, monitors.py, overview.py)."""

from __future__ import annotations

import asyncio

from api.ui.together import AT_ONCE, together
from core.db import ConnectionPool


async def test_reads_at_once_hold_sessions_of_their_own(pool: ConnectionPool) -> None:
    all_in = asyncio.Barrier(AT_ONCE)

    async def read() -> int:
        async with pool.connection() as conn:
            cur = await conn.execute("SELECT pg_backend_pid() AS pid")
            row = await cur.fetchone()
            assert row is not None
            await all_in.wait()  # every read holds its connection at this point
            return int(row["pid"])
    # ran one at a time (or on one connection), the barrier would never open
    async with asyncio.timeout(10):
        pids = await together(*(read() for _ in range(AT_ONCE)))
    assert len(set(pids)) == AT_ONCE == 2
