"""``cronledger projections rebuild``: truncate every projection and replay the log.

One transaction, in this order:

1. reset the projector checkpoint (waits for a running projector batch and keeps the other
   projectors out until commit);
2. lock ``jobs``, ``due_jobs``, ``runs``, ``run_attempts``, ``monitors`` and
   ``monitor_ping_bodies`` (the scheduler, the recorder, pings and commands wait; every event
   of those streams committed before is visible afterwards);
3. carry over what the log does not hold: ``run_attempts`` (request and response of each
   attempt), the lease of running runs, and ping bodies;
4. truncate the inline projections and replay the job, run and monitor streams
   (:mod:`core.projections.jobs`, :mod:`core.projections.runs`,
   :mod:`core.projections.monitor_rows`), then restore the carried rows;
5. truncate the asynchronous read models and apply the log to them from the beginning, up to
   the projector's horizon (events of still-running transactions are left to the projector).

After a prune (docs/operations.md, "Retention") the log no longer holds the whole history, so
the rebuild starts from the latest prune snapshot (``retention_snapshots``, copies in schema
``cronledger_snapshots``, :mod:`core.retention.prune`): ``runs`` rows and ``monitors`` states
start from their copies and only the events after the snapshot's transaction snapshot are
replayed onto them (job streams are kept whole; ``due_jobs`` starts from its copy; the copy of
``runs`` holds the rows created before the snapshot's ``runs_before``, the runs created since,
whose events are all in the log, are folded from them); the read
models start from their copies at the snapshot's checkpoint and the projector's batches replay
the kept tail after it.

The result equals what the live system built (tested row for row, also after several prunes in
tests/integration/test_retention.py); a failure rolls it all back.
An event that a projection cannot apply (a poison payload) is skipped, logged and recorded in
``projection_skipped`` (name ``rebuild:jobs``/``rebuild:runs``/``rebuild:monitors`` for the
inline ones, ``reporting`` for the read models, like the live projector) instead of failing the
rebuild (docs/operations.md, "Poison items").
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from psycopg import sql

from core.db import Connection, ConnectionPool, transaction
from core.projections import jobs, monitor_rows, runs
from core.projections.common import Skipped, record_skipped
from core.projections.projector import CHECKPOINT, TABLES, project_batch
from core.queries import Q
from core.retention.prune import snapshot_copy

BATCH = 20_000
log = logging.getLogger("cronledger.rebuild")


async def rebuild(pool: ConnectionPool, now: datetime) -> dict[str, int]:
    """Rebuild every projection from the event log, in one transaction.

    Returns:
        ``{"jobs": n, "runs": n, "monitors": n, "events_projected": n}``.
    """
    async with transaction(pool) as conn:
        await conn.execute(Q["projection_checkpoint_reset"], {"name": CHECKPOINT, "now": now})
        await conn.execute(Q["rebuild_lock_inline"])
        cur = await conn.execute(Q["retention_snapshot_latest"])
        snap = await cur.fetchone()
        await conn.execute(Q["rebuild_save_carried"])
        await conn.execute(Q["rebuild_truncate_inline"])
        skipped: dict[str, Skipped] = {"jobs": [], "runs": [], "monitors": []}
        if snap is None:
            counts = {"jobs": await jobs.rebuild(conn, skipped["jobs"]),
                      "runs": await runs.rebuild(conn, skipped["runs"]),
                      "monitors": await monitor_rows.rebuild(conn, now, skipped["monitors"])}
        else:
            counts = await _inline_from_snapshot(conn, snap, now, skipped)
        for table, items in skipped.items():
            for position, reason in items:
                log.error("rebuild of %s: skipping event %d: %s", table, position, reason)
                await record_skipped(conn, f"rebuild:{table}", position, reason, now)
        await conn.execute(Q["rebuild_restore_carried"])
        await conn.execute(Q["rebuild_truncate_read_models"])
        if snap is not None:
            await _read_models_from_snapshot(conn, snap)
        projected = 0
        while (applied := await project_batch(conn, now, BATCH)) is not None:
            projected += applied
            if applied < BATCH:
                break
        counts["events_projected"] = projected
    return counts


async def _rows(conn: Connection, snap: dict[str, Any], table: str
                ) -> list[dict[str, Any]]:
    cur = await conn.execute(sql.SQL(Q["rebuild_snapshot_rows"]).format(
        copy=snapshot_copy(snap["id"], table)))
    return await cur.fetchall()


async def _inline_from_snapshot(conn: Connection, snap: dict[str, Any],
                                now: datetime, skipped: dict[str, Skipped]) -> dict[str, int]:
    """The inline projections from the prune snapshot ``snap`` and the events after it."""
    tx_snapshot = snap["tx_snapshot"]
    due = {r["job_id"]: r["due_at"] for r in await _rows(conn, snap, "due_jobs")}
    counts = {"jobs": await jobs.rebuild(conn, skipped["jobs"], due, tx_snapshot)}
    base = {row["id"]: row for row in await _rows(conn, snap, "runs")}
    counts["runs"] = await runs.rebuild(conn, skipped["runs"], base, tx_snapshot,
                                        snap["runs_before"])
    states = {r["id"]: r for r in await _rows(conn, snap, "monitors")}
    counts["monitors"] = await monitor_rows.rebuild(conn, now, skipped["monitors"], states,
                                                    tx_snapshot)
    return counts


async def _read_models_from_snapshot(conn: Connection, snap: dict[str, Any]
                                     ) -> None:
    """The read models from their copies, the checkpoint at the snapshot's."""
    for table in TABLES:
        copy = snapshot_copy(snap["id"], table)
        cur = await conn.execute(sql.SQL(Q["rebuild_snapshot_columns"]).format(
            copy=copy))
        columns = sql.SQL(", ").join(sql.Identifier(c.name) for c in cur.description or ())
        await conn.execute(sql.SQL(Q["rebuild_snapshot_restore"]).format(
            table=sql.Identifier(table), copy=copy, columns=columns))
    await conn.execute(Q["rebuild_checkpoint_from_snapshot"], {
        "name": CHECKPOINT, "tx_id": snap["checkpoint_tx_id"],
        "position": snap["checkpoint_position"], "applied": snap["checkpoint_events_applied"]})
