"""Alert reads: the team's alerts, newest first, of one job or monitor or all, one alert, and
the names of what they are about.

The rows are written by the outbox with the alert's notifications
(:func:`core.notifications.outbox.enqueue`, migration 0028).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.db import ConnectionPool
from core.errors import NotFound
from core.queries import Q


@dataclass(frozen=True)
class Subject:
    """The job or monitor an alert is about: its ``name`` and whether it was ``deleted``."""

    name: str
    deleted: bool


async def list_alerts(pool: ConnectionPool, actor: Actor, *, limit: int,
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


async def get_alert(pool: ConnectionPool, actor: Actor, alert_id: uuid.UUID
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


async def subject_names(pool: ConnectionPool, actor: Actor,
                        alerts: list[dict[str, Any]]) -> dict[tuple[str, uuid.UUID], Subject]:
    """What some alerts (rows of :func:`list_alerts`) are about, by name: ``{(subject_type,
    subject_id): Subject}`` (a deleted job or monitor keeps its name, ``deleted`` true; one
    of another team, or gone, is left out)."""
    keys = list(dict.fromkeys((a["subject_type"], a["subject_id"]) for a in alerts))
    if not keys:
        return {}
    async with pool.connection() as conn:
        cur = await conn.execute(Q["alert_subject_names"], {
            "team_id": actor.team_id, "types": [k[0] for k in keys], "ids": [k[1] for k in keys]})
        rows = await cur.fetchall()
    return {(r["subject_type"], r["subject_id"]): Subject(r["name"], bool(r["deleted"]))
            for r in rows if r["name"] is not None}
