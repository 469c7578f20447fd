"""A new API connection plans ``event_list_team`` ahead (core/events.py:warm_event_plans, the
API pool's ``configure`` in api/app.py): it leaves the connection idle and its locks released,
and a warm-up that cannot have its lock (a leaf of the log being created or dropped holds
one) gives up within its bound without breaking the pool."""

from __future__ import annotations

import time
import uuid

import psycopg
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row

from core.db import open_pool
from core.events import list_team_events, warm_event_plans


async def test_a_warm_up_leaves_the_connection_idle_and_unlocked(fresh_dsn: str) -> None:
    async with await psycopg.AsyncConnection.connect(fresh_dsn, row_factory=dict_row) as conn:
        assert await warm_event_plans(conn)
        assert conn.info.transaction_status == TransactionStatus.IDLE
        cur = await conn.execute(
            "SELECT count(*) AS n FROM pg_locks WHERE pid = pg_backend_pid() "
            "AND locktype = 'relation' AND relation::regclass::text LIKE 'events%%'")
        row = await cur.fetchone()
        assert row is not None and row["n"] == 0
        await conn.rollback()


async def test_a_warm_up_that_cannot_lock_gives_up_and_the_pool_serves(fresh_dsn: str) -> None:
    async with await psycopg.AsyncConnection.connect(fresh_dsn) as holder:
        await holder.execute("LOCK TABLE events IN ACCESS EXCLUSIVE MODE")  # as DDL on a leaf
        async with await psycopg.AsyncConnection.connect(fresh_dsn,
                                                         row_factory=dict_row) as conn:
            started = time.monotonic()
            assert not await warm_event_plans(conn)
            assert time.monotonic() - started < 2  # its lock_timeout is 100 ms
            assert conn.info.transaction_status == TransactionStatus.IDLE
        pool = await open_pool(fresh_dsn, min_size=1, max_size=2, configure=warm_event_plans)
        try:
            async with pool.connection() as conn:
                cur = await conn.execute("SELECT 1 AS one")
                assert await cur.fetchone() == {"one": 1}
            await holder.rollback()  # the lock released: the log reads again
            assert await list_team_events(pool, uuid.UUID(int=0)) == []
        finally:
            await pool.close()
