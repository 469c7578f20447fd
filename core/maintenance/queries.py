"""Team-scoped reads of maintenance windows, and the questions the rest of the code asks them:
which windows may be in effect for some teams (:func:`live_windows`), until when subjects are
in maintenance (:func:`maintenance_until`), the tags of subjects (:func:`subject_tags`), and
which alerts a window holds (:func:`held_alerts`, docs/ledger.md: the one place where an alert
is held).

The outbox (:func:`core.notifications.outbox.enqueue`) is handed :func:`held_alerts` by the
command that queues an alert, so that notifications do not depend on maintenance; the rows of
held alerts are written ``suppressed`` (never sent, event ``notification.suppressed``), and
:mod:`core.maintenance.release` sends the one alert a closing window owes a monitor still down.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from core.db import Connection, ConnectionPool, fetch_team_page, fetch_team_row
from core.maintenance.state import WindowState
from core.maintenance.windows import in_effect, until_among
from core.notifications.outbox import Alert
from core.queries import Q


async def get_window(pool: ConnectionPool, team_id: uuid.UUID,
                     window_id: uuid.UUID) -> dict[str, Any]:
    """The ``maintenance_windows`` row. Raises: NotFound."""
    return await fetch_team_row(pool, Q["maintenance_get"], "maintenance window", window_id,
                                team_id)


async def list_windows(pool: ConnectionPool, team_id: uuid.UUID, *, limit: int,
                       after: tuple[datetime, uuid.UUID] | None) -> list[dict[str, Any]]:
    """A keyset page of the team's windows, oldest first (ended ones included)."""
    return await fetch_team_page(pool, Q["maintenance_list"], team_id, limit=limit, after=after)


async def live_windows(conn: Connection, team_ids: Iterable[uuid.UUID],
                       now: datetime, suppress: str | None = None) -> list[WindowState]:
    """The windows of ``team_ids`` that may be in effect at or after ``now`` (suppressing
    ``suppress`` only, when given)."""
    ids = list(dict.fromkeys(team_ids))
    if not ids:
        return []
    cur = await conn.execute(Q["maintenance_live_for_teams"], {
        "team_ids": ids, "now": now, "suppress": suppress})
    return [WindowState.from_row(row) for row in await cur.fetchall()]


async def subject_tags(conn: Connection, subject_type: str,
                       ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, tuple[str, ...]]:
    """The tags of the given jobs or monitors (``subject_type`` ``job`` | ``monitor``): the one
    place windows read them (docs/ledger.md)."""
    if not ids:
        return {}
    statement = Q["maintenance_job_tags"] if subject_type == "job" else \
        Q["maintenance_monitor_tags"]
    cur = await conn.execute(statement, {"ids": list(ids)})
    return {row["id"]: tuple(row["tags"]) for row in await cur.fetchall()}


async def maintenance_until(conn: Connection, team_id: uuid.UUID,
                            subject_type: str, ids: Sequence[uuid.UUID], now: datetime,
                            suppress: str | None = None) -> dict[uuid.UUID, datetime | None]:
    """For each of ``ids`` (jobs or monitors of ``team_id``): the instant its maintenance ends
    (UTC), or ``None`` when no window is in effect for it at ``now``."""
    # Each window's occurrence once, not once per subject: a recurring window walks its
    # fires over its duration (up to 7 days) to find it.
    current = in_effect(await live_windows(conn, [team_id], now, suppress), now)
    if not current:
        return dict.fromkeys(ids)
    tags = await subject_tags(conn, subject_type, ids)
    return {i: until_among(current, subject_type, i, tags.get(i, ())) for i in ids}


async def fetch_maintenance_until(pool: ConnectionPool, team_id: uuid.UUID,
                                  subject_type: str, ids: Sequence[uuid.UUID],
                                  now: datetime) -> dict[uuid.UUID, datetime | None]:
    """:func:`maintenance_until` on a connection of ``pool``: for jobs any window, for monitors
    the ``alerts`` ones (a ``runs`` window does nothing to a monitor)."""
    async with pool.connection() as conn:
        return await maintenance_until(conn, team_id, subject_type, ids, now,
                                       None if subject_type == "job" else "alerts")


async def held_alerts(conn: Connection, alerts: Sequence[Alert],
                      now: datetime) -> dict[uuid.UUID, datetime]:
    """The job and monitor subjects of ``alerts`` that a ``suppress: "alerts"`` maintenance
    window holds at ``now``, with the end of their maintenance (UTC). Reads the live windows
    and the subjects' tags in the caller's transaction."""
    subjects = [a for a in alerts if a.subject_type in ("job", "monitor")]
    if not subjects:
        return {}
    # Each window's occurrence at now once, not once per subject.
    current = in_effect(await live_windows(conn, [a.team_id for a in subjects], now, "alerts"),
                        now)
    if not current:
        return {}
    held: dict[uuid.UUID, datetime] = {}
    for kind in ("job", "monitor"):
        ids = [a.subject_id for a in subjects if a.subject_type == kind]
        tags = await subject_tags(conn, kind, ids) if ids else {}
        for a in subjects:
            if a.subject_type != kind:
                continue
            until = until_among([(w, end) for w, end in current if w.team_id == a.team_id],
                                kind, a.subject_id, tags.get(a.subject_id, ()))
            if until is not None:
                held[a.subject_id] = until
    return held
