"""The database size per table family and kind of history (``cronledger db-size``)."""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from core.queries import Q

# Table family -> the kind of history it belongs to (core/retention/policy.py); the others are
# definitions, projections and read models, kept as long as what they describe.
KIND_OF = {"events_pings": "pings", "monitor_ping_bodies": "pings", "events_runs": "runs",
           "run_attempts": "attempt_bodies", "events_deliveries": "deliveries",
           "events_keep": "definitions", "snapshots": "snapshots"}


async def sizes(pool: AsyncConnectionPool) -> tuple[list[dict[str, object]], int]:
    """``([{"family", "kind", "bytes", "tables"}, …] largest first, database bytes)``."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["retention_sizes"])
        rows = [{**r, "kind": KIND_OF.get(r["family"], "projections")}
                for r in await cur.fetchall()]
        cur = await conn.execute(Q["retention_database_size"])
        total = (await cur.fetchone())["bytes"]
        await conn.rollback()
    return rows, total
