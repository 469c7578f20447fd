"""The asynchronous projector: applies the event log to the read models, batch by batch.

docs/architecture.md, "An event". A batch, in one transaction:

1. locks the checkpoint row ``FOR UPDATE SKIP LOCKED`` (another process projecting: skip);
2. reads the next events in ``(tx_id, global_position)`` order, only those whose ``tx_id`` is
   below ``pg_snapshot_xmin(pg_current_snapshot())``. Every transaction below that horizon has
   ended, so nothing can still commit behind the checkpoint: an event appended by a transaction
   that commits after later events were projected is applied when its transaction ends, never
   skipped. The cost is that one long-running transaction holds the projection back;
3. applies them to every read model of :data:`MODELS`;
4. advances the checkpoint, forward only.

Poison events (docs/operations.md, "Poison items"): when applying a batch raises anything but a
lost connection, the
batch is applied again one event at a time, each in a savepoint; an event that still raises is
skipped, recorded in ``projection_skipped`` (checkpoint name, position, ``tx_id``, type,
stream, reason) and logged once, and the batch goes on. A rebuild replays the log through the
same function, so it skips the same events and "rebuild equals live" still holds
(docs/operations.md, "Poison items").

Wake-up: the projector LISTENs on ``cronledger_wakeup`` (job changes, triggers, retries) and
otherwise polls every ``CRONLEDGER_PROJECTOR_INTERVAL`` seconds while idle. There is
deliberately no NOTIFY trigger on ``events``: PostgreSQL serialises the commits of notifying
transactions behind one cluster-wide lock held through the commit's WAL flush, which would cap
the event append rate (pings, runs) at one fsync at a time. A dashboard that trails by at most
the poll interval is the better trade.

After each applied batch the projector NOTIFYs ``cronledger_projected`` (one NOTIFY per batch,
at its commit), which the dashboard's live regions wait on (api/ui/live.py). A poll that finds
nothing to apply refreshes the checkpoint's ``updated_at`` (at most every
:data:`CHECKED_SECONDS`): ``updated_at`` is when the read models were last known current, not
when the last event arrived, so an idle instance does not look stale.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

import psycopg

from core.clock import Clock
from core.db import Connection, ConnectionPool, transaction
from core.projections import job_health, job_stats, monitors
from core.projections.common import fetch_all, record_skipped
from core.queries import Q
from core.reasons import reason_of
from core.services.base import Service
from core.services.quiet import QuietWindows

log = logging.getLogger("cronledger.projector")

CHECKPOINT = "reporting"
WAKEUP_CHANNEL = "cronledger_wakeup"
PROJECTED_CHANNEL = "cronledger_projected"  # NOTIFYed once per applied batch (live dashboard)
CHECKED_SECONDS = 10.0  # while idle, the checkpoint's updated_at is refreshed this often

ReadModel = Callable[[Connection, Sequence[dict[str, Any]]], Awaitable[None]]
MODELS: tuple[ReadModel, ...] = (job_stats.apply, job_health.apply, monitors.apply)
TABLES: tuple[str, ...] = (*job_stats.TABLES, *job_health.TABLES, *monitors.TABLES)


class CheckpointMoved(RuntimeError):
    """The checkpoint was not behind the batch: the batch is rolled back."""


async def project_batch(conn: Connection, now: datetime, limit: int) -> int | None:
    """Apply the next batch of at most ``limit`` events, in the caller's transaction.

    With nothing to apply, the checkpoint's ``updated_at`` becomes ``now`` (at most every
    :data:`CHECKED_SECONDS`); after a batch, ``NOTIFY cronledger_projected`` (at commit).

    Returns:
        The number of events applied, or ``None`` when another process holds the checkpoint.

    Raises:
        CheckpointMoved: the checkpoint did not move forward (never expected under the lock).
    """
    cur = await conn.execute(Q["projection_checkpoint_lock"], {"name": CHECKPOINT})
    checkpoint = await cur.fetchone()
    if checkpoint is None:
        return None
    events = await fetch_all(conn, Q["projection_events_after"], {
        "tx_id": checkpoint["tx_id"], "position": checkpoint["global_position"], "limit": limit})
    if not events:
        await conn.execute(Q["projection_checkpoint_checked"], {
            "name": CHECKPOINT, "now": now, "every": CHECKED_SECONDS})
        return 0
    await _apply_isolated(conn, events, now)
    last = events[-1]
    cur = await conn.execute(Q["projection_checkpoint_advance"], {
        "name": CHECKPOINT, "tx_id": last["tx_id"], "position": last["global_position"],
        "count": len(events), "now": now})
    if await cur.fetchone() is None:
        raise CheckpointMoved(f"checkpoint {CHECKPOINT!r} is not behind {last['tx_id']}/"
                              f"{last['global_position']}")
    await conn.execute(Q["projection_notify"])
    return len(events)


_CONNECTION_ERRORS = (psycopg.OperationalError, psycopg.InterfaceError)


async def _apply_models(conn: Connection, events: Sequence[dict[str, Any]]) -> None:
    async with conn.transaction():  # a savepoint: a failure leaves the batch's transaction usable
        for apply in MODELS:
            await apply(conn, events)


async def _apply_isolated(conn: Connection, events: Sequence[dict[str, Any]],
                          now: datetime) -> list[int]:
    """Apply ``events`` to every read model; isolate and skip the ones that cannot apply.

    Returns:
        The global positions of the events skipped (recorded in ``projection_skipped``).

    Raises:
        psycopg.OperationalError, psycopg.InterfaceError: the connection failed (the batch is
            rolled back and retried, nothing is skipped).
    """
    try:
        await _apply_models(conn, events)
        return []
    except _CONNECTION_ERRORS:
        raise
    except Exception:  # noqa: BLE001 - find the poison event(s) below, one at a time
        log.warning("projector: a batch of %d events failed; applying them one by one",
                    len(events))
    skipped = []
    for event in events:
        try:
            await _apply_models(conn, [event])
        except _CONNECTION_ERRORS:
            raise
        except Exception as exc:  # noqa: BLE001 - a poison event must not stop projections
            reason = reason_of(exc)
            log.error("projector: skipping event %s (%s of %s %s): %s",
                      event["global_position"], event["event_type"], event["stream_type"],
                      event["stream_id"], reason)
            await record_skipped(conn, CHECKPOINT, event["global_position"], reason, now)
            skipped.append(event["global_position"])
    return skipped


class Projector(Service):
    """Keeps the asynchronous read models up to date (a background service of serve/worker); a
    :class:`core.services.base.Service` (loop, wake-up, stop and error policy in the base). A
    batch in progress at stop finishes (it is one transaction).

    Args:
        pool: database pool.
        dsn: used for the dedicated LISTEN connection.
        clock: the injected clock (checkpoint ``updated_at``).
        batch_size: events per transaction.
        interval: seconds between polls while idle (a NOTIFY wakes it earlier).
        quiet: the worker's send bursts in this process; no batch starts close to one.
    """

    name = "projector"
    channel = WAKEUP_CHANNEL

    def __init__(self, pool: ConnectionPool, dsn: str, clock: Clock, *,
                 batch_size: int = 20_000, interval: float = 1.0,
                 quiet: QuietWindows | None = None) -> None:
        super().__init__(clock, dsn)
        self.pool = pool
        self.batch_size, self.interval = batch_size, interval
        self.unexpected_retry_seconds = interval  # a failed batch is retried at the next poll
        self.quiet = quiet or QuietWindows()

    async def run_once(self, now: datetime | None = None) -> int:
        """Apply batches until one comes back short (or another process holds the checkpoint).

        Args:
            now: the checkpoint's ``updated_at`` (UTC; default the clock's, read per batch).

        Returns:
            The number of events applied.
        """
        total = 0
        while not self.stopping.is_set():
            await self.quiet.wait()
            async with transaction(self.pool) as conn:
                applied = await project_batch(conn, now or self.clock.now(), self.batch_size)
            total += applied or 0
            if applied is None or applied < self.batch_size:
                break
        return total

    async def next_deadline(self) -> datetime | None:
        """The next poll, ``interval`` seconds from now (events send no NOTIFY, see above)."""
        return self.clock.now() + timedelta(seconds=self.interval)
