"""The release service: when a maintenance window closes, the one alert it held goes out.

While an ``alerts`` window is in effect, the alerts of what it covers are written as
``suppressed`` outbox rows (:func:`core.notifications.outbox.enqueue`). At each closing of a
window (its end, the end of a recurring occurrence, or an early end), :func:`release_due`
finds the monitors it covers that are still ``down`` and whose latest alert is one it held,
and that no other window still covers, and queues exactly one ``down`` alert for each
(:func:`core.notifications.outbox.enqueue_monitor_alert`). A monitor that came back up
inside the window gets nothing; job alerts held by a window are not replayed (a later
failure alerts as usual). ``released_until`` on the window records the closings handled, in
the same transaction, so a restart or a second process does not send it twice (the window row
is locked ``SKIP LOCKED``).

A :class:`core.services.base.Service`: woken by ``NOTIFY cronledger_maintenance`` (any window
change) and asleep until the next closing (:meth:`MaintenanceRelease.next_deadline`).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from core.clock import Clock, Instant, read_now, rfc3339
from core.db import ConnectionPool, transaction
from core.maintenance.commands import NOTIFY_CHANNEL
from core.maintenance.queries import held_alerts, live_windows, subject_tags
from core.maintenance.state import WindowState
from core.maintenance.windows import closings, covers, in_maintenance_until, next_closing
from core.notifications.outbox import DEFAULT_MAX_ATTEMPTS, enqueue_monitor_alert
from core.queries import Q
from core.services.base import Service

log = logging.getLogger("cronledger.maintenance")
BATCH = 1000
FAR = datetime(9999, 1, 1, tzinfo=UTC)  # "every closing to come", for next_deadline


def _start(window: WindowState) -> datetime:
    return window.released_until or window.created_at


async def release_due(pool: ConnectionPool, now: Instant, *,
                      max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> int:
    """Handle every closing up to ``now`` (UTC, or the clock read once connected); returns
    how many alerts were released."""
    released = 0
    async with transaction(pool) as conn:
        now = read_now(now)
        cur = await conn.execute(Q["maintenance_unreleased"], {"now": now, "limit": BATCH})
        for row in await cur.fetchall():
            window = WindowState.from_row(row)
            if not closings(window, _start(window), now):
                if window.schedule is None:  # ended before it began: nothing ever to release
                    await conn.execute(Q["maintenance_mark_released"], {
                        "id": window.id, "until": now})
                continue
            held = await (await conn.execute(Q["maintenance_held_monitors"], {
                "team_id": window.team_id})).fetchall()
            tags = await subject_tags(conn, "monitor", [m["id"] for m in held])
            still = await live_windows(conn, [window.team_id], now, "alerts")
            for m in held:
                mine = tags.get(m["id"], ())
                if not covers(window, "monitor", m["id"], mine) or not m["channels"]:
                    continue
                if in_maintenance_until(still, "monitor", m["id"], now, suppress="alerts",
                                        tags=mine) is not None:
                    continue  # another window holds it still: released at that one's close
                last = {"at": rfc3339(m["last_ping_at"])} if m["last_ping_at"] else None
                await enqueue_monitor_alert(
                    conn, team_id=m["team_id"], monitor_id=m["id"], monitor_name=m["name"],
                    channel_ids=m["channels"], event="down", since=m["down_since"] or now,
                    last_ping=last, now=now, realert_every=m["realert_every"],
                    max_attempts=max_attempts, hold=held_alerts)
                released += 1
            await conn.execute(Q["maintenance_mark_released"], {"id": window.id, "until": now})
    if released:
        log.info("maintenance windows closed: released %d held alert(s)", released)
    return released


class MaintenanceRelease(Service):
    """The release service of one process (part of ``serve`` and ``worker``).

    Args:
        pool: database pool.
        dsn: for the LISTEN connection (``None``: no LISTEN).
        clock: the injected clock.
        notify_max_attempts: delivery attempts of the alerts it queues.
    """

    name = "maintenance"
    channel = NOTIFY_CHANNEL

    def __init__(self, pool: ConnectionPool, dsn: str | None, clock: Clock, *,
                 notify_max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
        super().__init__(clock, dsn)
        self.pool = pool
        self.max_attempts = notify_max_attempts

    async def run_once(self, now: datetime | None = None) -> int:
        """One pass: :func:`release_due` at ``now`` (default: the clock's)."""
        return await release_due(self.pool, now or self.clock, max_attempts=self.max_attempts)

    async def next_deadline(self) -> datetime | None:
        """The earliest closing not handled yet (UTC), ``None`` when none is to come."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(Q["maintenance_unreleased"], {"now": FAR, "limit": BATCH})
            rows = await cur.fetchall()
        windows = [WindowState.from_row(row) for row in rows]
        found = [at for w in windows if (at := next_closing(w, _start(w))) is not None]
        return min(found, default=None)
