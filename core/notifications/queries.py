"""Notification reads: the team's outbox rows, newest first (failed ones stay visible)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.db import ConnectionPool
from core.errors import NotFound, invalid
from core.queries import Q

STATUSES = ("pending", "sending", "sent", "failed", "cancelled", "suppressed")


async def list_notifications(
    pool: ConnectionPool, actor: Actor, *, limit: int,
    before: tuple[datetime, uuid.UUID] | None, status: str | None = None,
    channel_id: uuid.UUID | None = None,
) -> list[dict[str, Any]]:
    """A page of the team's notifications, newest first, optionally of one status or channel.

    Raises:
        InvalidInput: an unknown ``status``.
    """
    if status is not None and status not in STATUSES:
        raise invalid("status", f"must be one of {', '.join(STATUSES)}")
    async with pool.connection() as conn:
        cur = await conn.execute(Q["notification_list"], {
            "team_id": actor.team_id, "limit": limit, "status": status,
            "channel_id": channel_id,
            "before_created": before[0] if before else None,
            "before_id": before[1] if before else None})
        return await cur.fetchall()


async def get_notification(
    pool: ConnectionPool, actor: Actor, notification_id: uuid.UUID
) -> dict[str, Any]:
    """One of the team's notifications.

    Raises:
        NotFound: no such notification for this team.
    """
    async with pool.connection() as conn:
        cur = await conn.execute(Q["notification_get"], {
            "id": notification_id, "team_id": actor.team_id})
        row = await cur.fetchone()
    if row is None:
        raise NotFound(f"notification {notification_id} not found")
    return row
