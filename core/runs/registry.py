"""The worker registry: which worker processes are live, so that a claim takes its fair share
of what is due instead of the whole slot (docs/architecture.md, "A run").

Each running :class:`core.runs.worker.Worker` upserts its row of ``workers`` (its
``worker_id``) when it starts and every :data:`BEAT_SECONDS` after (:class:`Registration`),
and deletes it when it stops. A row seen within the last :data:`LIVE_SECONDS` counts as a live
worker. ``job_claim_due`` (``core/sql/runs.sql``) then takes at most
``ceil(due / live workers)`` rows, this worker included even when its own row is missing or
stale: workers that wake together for a big slot each claim part of it and send part of it,
in parallel, instead of one claiming the whole slot while the others find nothing.

Nobody waits long for a share: a worker that claimed its share and finds rows still due (a
worker that was killed but is still counted, one that woke late) claims a share of what is
left again within ``RECLAIM_POLL`` (0.1 s, :meth:`core.runs.worker.Worker.next_deadline`), at
once when the slot has come, so a slot is claimed in about log2(rows) rounds by a worker alone.
The heartbeat table of procrastinate's workers (``procrastinate_workers``) is the model.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

import psycopg

from core.clock import Clock
from core.db import Connection, ConnectionPool, one_row
from core.queries import Q
from core.services.quiet import QuietWindows
from core.services.tasks import cancel_and_wait

log = logging.getLogger("cronledger.worker")

BEAT_SECONDS = 10.0  # seconds between a worker's upserts of its row
LIVE_SECONDS = 30.0  # a row seen within this many seconds is a live worker
FORGET_SECONDS = 86400.0  # rows not seen for this long are deleted by the next beat
WAIT_SECONDS = 2.0  # at most this long spent on one beat, or on deleting the row at stop
# seconds before the next beat after one failed: ``/readyz`` reads the rows, so after an outage
# longer than LIVE_SECONDS it must not wait a whole BEAT_SECONDS to see the worker back
RETRY_SECONDS = 1.0


def live_after(now: datetime) -> datetime:
    """The instant (UTC) after which a row must have been seen to count as live at ``now``."""
    return now - timedelta(seconds=LIVE_SECONDS)


async def beat(pool: ConnectionPool, worker_id: str, now: datetime) -> None:
    """Upsert ``worker_id``'s row, seen at ``now`` (UTC); delete rows forgotten since."""
    async with pool.connection() as conn:
        await conn.execute(Q["worker_beat"], {
            "worker_id": worker_id, "now": now,
            "forget_before": now - timedelta(seconds=FORGET_SECONDS)})


async def leave(pool: ConnectionPool, worker_id: str) -> None:
    """Delete ``worker_id``'s row: the other workers stop counting it at once."""
    async with pool.connection() as conn:
        await conn.execute(Q["worker_leave"], {"worker_id": worker_id})


async def live_workers(pool: ConnectionPool, now: datetime) -> list[str]:
    """The ids of the workers live at ``now`` (UTC), sorted."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["worker_list_live"], {"live_after": live_after(now)})
        return [row["worker_id"] for row in await cur.fetchall()]


async def workers_problem(conn: Connection, now: datetime
                          ) -> tuple[int, str | None]:
    """How many workers are live at ``now`` (UTC), and why jobs are not firing when the
    registry says so: workers are registered but none was seen within :data:`LIVE_SECONDS`
    (they cannot reach the database, or were killed). No row at all (no worker ever started,
    or every one stopped cleanly) is no problem here: an ``api`` process may run before its
    workers. Read by ``/readyz`` (docs/operations.md, "Supervision and health checks").
    """
    cur = await conn.execute(Q["worker_reach"], {"live_after": live_after(now)})
    row = one_row(await cur.fetchone(), "worker_reach")  # an aggregate: one row
    live: int = row["live"]
    registered: int = row["registered"]
    last_seen: datetime | None = row["last_seen"]  # None: no worker registered
    if registered and not live and last_seen is not None:  # registered: last_seen is set
        age = (now - last_seen).total_seconds()
        return 0, (f"workers cannot reach the database: none of the {registered} registered "
                   f"workers has written its heartbeat for {age:.0f} s (more than "
                   f"{LIVE_SECONDS:.0f} s), so jobs are not firing")
    return live, None


async def release_orphans(pool: ConnectionPool, worker_id: str,
                          held: Sequence[uuid.UUID], now: datetime) -> list[uuid.UUID]:
    """End now the leases of runs leased to a worker that does not hold them: ``worker_id``'s
    runs whose lease token is not in ``held`` (the tokens of the attempts it has in memory),
    and the runs of workers not live at ``now`` (UTC) by the registry. ``run_claim_ready``
    then dispatches them again at once, same run id, same ``Idempotency-Key``.

    The caller must not claim while this runs (a run claimed and not yet in ``held`` would be
    released): the worker calls it between its claims (docs/operations.md, "High
    availability").

    Returns:
        The ids of the runs released.
    """
    async with pool.connection() as conn:
        cur = await conn.execute(Q["run_release_orphans"], {
            "now": now, "worker_id": worker_id, "held": list(held),
            "live_after": live_after(now)})
        rows = await cur.fetchall()
        if rows:
            await conn.execute(Q["event_notify_wakeup"], {"reason": "released"})
        await conn.commit()
    released = [row["id"] for row in rows]
    if released:
        gone = sorted({row["worker_id"] for row in rows} - {worker_id})
        log.warning("released %d runs leased to workers that do not hold them (%d of this "
                    "worker %s, the rest of gone workers: %s); they are sent again with the "
                    "same Idempotency-Key", len(released),
                    sum(row["worker_id"] == worker_id for row in rows), worker_id,
                    ", ".join(gone) or "none")
    return released


class Registration:
    """A worker's row in the registry while it runs: :meth:`start` beats once and keeps beating
    every :data:`BEAT_SECONDS` in a task; :meth:`stop` ends the task and deletes the row.

    A beat that fails or takes more than :data:`WAIT_SECONDS` (the database unreachable: the
    worker's own loop logs the outage) is skipped; any other error is logged with its
    traceback. Either way the next beat comes :data:`RETRY_SECONDS` later (after a written one,
    :data:`BEAT_SECONDS`): the registry is an optimisation of the claim, never a reason to stop
    one. Until a beat succeeds the other
    workers do not count this one (they claim more). A beat due during a burst of sends the
    worker announced in ``quiet`` waits for its end: a fraction of a second, nothing against
    :data:`LIVE_SECONDS`.
    """

    def __init__(self, pool: ConnectionPool, worker_id: str, clock: Clock,
                 quiet: QuietWindows | None = None,
                 on_beat: Callable[[], None] | None = None) -> None:
        self.pool, self.worker_id, self.clock = pool, worker_id, clock
        self.quiet = quiet or QuietWindows()
        self.on_beat = on_beat  # after each beat written (the worker looks for orphans)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        written = await self._beat()
        self._task = asyncio.create_task(self._run(written),
                                         name="cronledger-worker-registration")

    async def stop(self) -> None:
        """End the beats and delete the row, waiting at most :data:`WAIT_SECONDS` for the
        database (unreachable: the row goes stale after :data:`LIVE_SECONDS` instead)."""
        if self._task is not None:
            await cancel_and_wait(self._task, WAIT_SECONDS)
            self._task = None
        with contextlib.suppress(psycopg.Error, OSError, TimeoutError):
            async with asyncio.timeout(WAIT_SECONDS):
                await leave(self.pool, self.worker_id)

    async def _run(self, written: bool) -> None:
        """Beat until cancelled; ``written``: whether the beat just before was written."""
        while True:
            await asyncio.sleep(BEAT_SECONDS if written else RETRY_SECONDS)
            await self.quiet.wait()
            written = await self._beat()

    async def _beat(self) -> bool:
        """One beat; whether the row was written."""
        try:
            async with asyncio.timeout(WAIT_SECONDS):
                await beat(self.pool, self.worker_id, self.clock.now())
        except (psycopg.Error, OSError, TimeoutError) as exc:
            log.debug("worker %s: heartbeat not written: %s", self.worker_id, exc)
            return False
        except Exception:  # noqa: BLE001 - a failed beat must not end the registration
            log.exception("worker %s: heartbeat failed", self.worker_id)
            return False
        if self.on_beat is not None:
            self.on_beat()
        return True
