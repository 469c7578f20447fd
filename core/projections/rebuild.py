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
"""

from __future__ import annotations

from datetime import datetime

from psycopg_pool import AsyncConnectionPool

from core.db import transaction
from core.projections import jobs, monitor_rows, runs
from core.projections.projector import CHECKPOINT, project_batch
from core.queries import Q

BATCH = 20_000


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
        counts = {"jobs": await jobs.rebuild(conn), "runs": await runs.rebuild(conn),
                  "monitors": await monitor_rows.rebuild(conn, now)}
        await conn.execute(Q["rebuild_restore_carried"])
        await conn.execute(Q["rebuild_truncate_read_models"])
        projected = 0
        while (applied := await project_batch(conn, now, BATCH)) is not None:
            projected += applied
            if applied < BATCH:
                break
        counts["events_projected"] = projected
    return counts
