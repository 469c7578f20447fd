"""The database size per table family and kind of history (``cronledger db-size``)."""

from __future__ import annotations

from core.db import ConnectionPool, one_row
from core.queries import Q

# Table family -> the kind of history it belongs to (core/retention/policy.py), or the kind
# whose horizon bounds its rows (the runs rows and hourly buckets: runs; the outbox:
# deliveries; the ping copies: pings); the others are definitions, projections and read
# models, kept as long as what they describe.
KIND_OF = {"events_pings": "pings", "monitor_ping_bodies": "pings", "events_runs": "runs",
           "run_attempts": "attempt_bodies", "events_deliveries": "deliveries",
           "events_keep": "definitions", "snapshots": "snapshots",
           "runs": "runs (rows)", "job_stats_hourly": "runs (rows)",
           "team_runs_hourly": "runs (rows)", "run_confirmations": "runs (rows)",
           "notifications": "deliveries (rows)", "monitor_pings_kept": "pings (rows)"}


async def sizes(pool: ConnectionPool) -> tuple[list[dict[str, object]], int]:
    """``([{"family", "kind", "bytes", "tables"}, …] largest first, database bytes)``."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["retention_sizes"])
        rows = [{**r, "kind": KIND_OF.get(r["family"], "projections")}
                for r in await cur.fetchall()]
        cur = await conn.execute(Q["retention_database_size"])
        total: int = one_row(await cur.fetchone(), "retention_database_size")["bytes"]
        await conn.rollback()
    return rows, total
