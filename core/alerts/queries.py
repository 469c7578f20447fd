"""Alert reads: the team's alerts, newest first, of one job or monitor or all, and one alert.

The rows are written by the outbox with the alert's notifications
(:func:`core.notifications.outbox.enqueue`, migration 0028).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from psycopg_pool import AsyncConnectionPool

from core.actor import Actor
from core.errors import NotFound
from core.queries import Q


async def list_alerts(pool: AsyncConnectionPool, actor: Actor, *, limit: int,
                      before: tuple[datetime, uuid.UUID] | None,
                      monitor: uuid.UUID | None = None, job: uuid.UUID | None = None
                      ) -> list[dict[str, Any]]:
    """A page of the team's alerts, newest first (``(created_at, id)`` keyset), optionally of
    one monitor and/or one job (both given: the alerts of either): rows ``{"id",
    "subject_type", "subject_id", "event", "title", "rule", "held_until", "created_at",
    "notifications"}``."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["alert_list"], {
            "team_id": actor.team_id, "limit": limit, "monitor": monitor, "job": job,
            "before_created": before[0] if before else None,
            "before_id": before[1] if before else None})
        return await cur.fetchall()


async def get_alert(pool: AsyncConnectionPool, actor: Actor, alert_id: uuid.UUID
                    ) -> dict[str, Any]:
    """One of the team's alerts (the row of :func:`list_alerts`).

    Raises:
        NotFound: no such alert for this team.
    """
    async with pool.connection() as conn:
        cur = await conn.execute(Q["alert_get"], {"id": alert_id, "team_id": actor.team_id})
        row = await cur.fetchone()
    if row is None:
        raise NotFound(f"alert {alert_id} not found")
    return row
