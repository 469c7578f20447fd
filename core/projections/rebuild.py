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

The result equals what the live system built (tested row for row); a failure rolls it all back.
An event that a projection cannot apply (a poison payload) is skipped, logged and recorded in
``projection_skipped`` (name ``rebuild:jobs``/``rebuild:runs``/``rebuild:monitors`` for the
inline ones, ``reporting`` for the read models, like the live projector) instead of failing the
rebuild (docs/operations.md, "Poison items").
"""

from __future__ import annotations

import logging
from datetime import datetime

from psycopg_pool import AsyncConnectionPool

from core.db import transaction
from core.projections import jobs, monitor_rows, runs
from core.projections.common import Skipped, record_skipped
from core.projections.projector import CHECKPOINT, project_batch
from core.queries import Q

BATCH = 20_000
log = logging.getLogger("cronledger.rebuild")


async def rebuild(pool: AsyncConnectionPool, now: datetime) -> dict[str, int]:
    """Rebuild every projection from the event log, in one transaction.

    Returns:
        ``{"jobs": n, "runs": n, "monitors": n, "events_projected": n}``.
    """
    async with transaction(pool) as conn:
        await conn.execute(Q["projection_checkpoint_reset"], {"name": CHECKPOINT, "now": now})
        await conn.execute(Q["rebuild_lock_inline"])
        await conn.execute(Q["rebuild_save_carried"])
        await conn.execute(Q["rebuild_truncate_inline"])
        skipped: dict[str, Skipped] = {"jobs": [], "runs": [], "monitors": []}
        counts = {"jobs": await jobs.rebuild(conn, skipped["jobs"]),
                  "runs": await runs.rebuild(conn, skipped["runs"]),
                  "monitors": await monitor_rows.rebuild(conn, now, skipped["monitors"])}
        for table, items in skipped.items():
            for position, reason in items:
                log.error("rebuild of %s: skipping event %d: %s", table, position, reason)
                await record_skipped(conn, f"rebuild:{table}", position, reason, now)
        await conn.execute(Q["rebuild_restore_carried"])
        await conn.execute(Q["rebuild_truncate_read_models"])
        projected = 0
        while (applied := await project_batch(conn, now, BATCH)) is not None:
            projected += applied
            if applied < BATCH:
                break
        counts["events_projected"] = projected
    return counts
