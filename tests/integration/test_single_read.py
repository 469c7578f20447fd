"""core/db.py:single_read: one read-only statement in autocommit (no BEGIN or COMMIT of its
own to wait for), and the connection back in the pool as it came, whatever happened inside."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.pq import TransactionStatus

from core.db import open_pool, single_read


async def test_a_single_read_opens_no_transaction_and_returns_the_connection_as_it_was(
        shared_dsn: str) -> None:
    pool = await open_pool(shared_dsn, min_size=1, max_size=1)  # always the same connection
    try:
        async with single_read(pool) as conn:
            cur = await conn.execute("SELECT 1 AS one")
            assert await cur.fetchone() == {"one": 1}
            assert conn.info.transaction_status == TransactionStatus.IDLE  # no BEGIN sent
        with pytest.raises(psycopg.errors.UndefinedTable):
            async with single_read(pool) as conn:
                await conn.execute("SELECT * FROM no_such_table")
        async with single_read(pool) as conn:
            await conn.execute("BEGIN")  # by hand: rolled back on the way out
            await conn.execute("SELECT 1")
        async with pool.connection() as conn:
            assert not conn.autocommit
            await conn.execute("SELECT 1")
            assert conn.info.transaction_status == TransactionStatus.INTRANS
    finally:
        await pool.close()
