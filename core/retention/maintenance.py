"""The retention service (in ``serve`` and ``worker``): creates the daily partitions ahead,
prunes what is past its horizon, and ``ANALYZE``s the tables it changed (docs/operations.md,
"Retention").

Many processes may run it: a pass holds the ``retention_lock`` row ``FOR UPDATE SKIP LOCKED``
for its transaction (never a session advisory lock, which a transaction pooler would leak), so
one process does the work and the others skip. A :class:`core.services.base.Service` (loop,
stop and error policy in the base); it polls every ``CRONLEDGER_RETENTION_INTERVAL`` seconds.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from psycopg import sql

from core.clock import Clock
from core.config import Settings
from core.db import ConnectionPool
from core.queries import Q
from core.retention.partitions import create_ahead
from core.retention.prune import PruneResult, prune
from core.services.base import Service

log = logging.getLogger("cronledger.retention")


async def ensure_partitions(pool: ConnectionPool, now: datetime, ahead_days: int, *,
                            lock_timeout: str = "50ms") -> list[str] | None:
    """Create the daily leaves from yesterday to ``ahead_days`` after ``now`` and ANALYZE them.

    Returns:
        The leaves created, or ``None`` when another process holds the maintenance lock.
    """
    async with pool.connection() as conn:
        async with conn.transaction():
            cur = await conn.execute(Q["retention_lock_take"])
            if await cur.fetchone() is None:
                return None
            await conn.execute(Q["retention_lock_timeout"], {"timeout": lock_timeout})
            created = await create_ahead(conn, now, ahead_days)
        if created:
            # An empty leaf that was never analyzed is planned as if it held pages of rows.
            async with conn.transaction():
                for name in created:
                    await conn.execute(sql.SQL(Q["retention_analyze"]).format(
                        table=sql.Identifier(name)))
            log.info("retention: created partitions %s", ", ".join(created))
    return created


class Maintenance(Service):
    """Partitions ahead and pruning, one pass every ``settings.retention_interval_seconds``.

    Args:
        pool: database pool.
        settings: retention, partitions ahead and the interval.
        clock: the injected clock (what "now" is for partitions and horizons).
    """

    name = "retention"
    channel = None

    def __init__(self, pool: ConnectionPool, settings: Settings, clock: Clock) -> None:
        super().__init__(clock, None)
        self.pool, self.settings = pool, settings
        self.unexpected_retry_seconds = 60.0
        self.max_idle_sleep = settings.retention_interval_seconds

    async def run_once(self, now: datetime | None = None) -> PruneResult | None:
        """One pass at ``now`` (UTC, default the clock's): create ahead, then prune.

        Returns:
            What the prune did, or ``None`` when another process holds the lock or the prune
            was deferred.
        """
        now = now or self.clock.now()
        await ensure_partitions(self.pool, now, self.settings.partitions_ahead_days)
        return await prune(self.pool, self.settings, now)

    async def next_deadline(self) -> datetime | None:
        """The next pass, ``retention_interval_seconds`` from now."""
        return self.clock.now() + timedelta(seconds=self.settings.retention_interval_seconds)
