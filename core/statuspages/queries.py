"""The owner's team-scoped reads of status pages (rows of ``status_pages``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from psycopg_pool import AsyncConnectionPool

from core.db import fetch_team_page, fetch_team_row
from core.queries import Q


async def get_page(pool: AsyncConnectionPool, team_id: uuid.UUID,
                   page_id: uuid.UUID) -> dict[str, Any]:
    """The ``status_pages`` row. Raises: NotFound."""
    return await fetch_team_row(pool, Q["status_page_get"], "status page", page_id, team_id)


async def list_pages(pool: AsyncConnectionPool, team_id: uuid.UUID, *, limit: int,
                     after: tuple[datetime, uuid.UUID] | None) -> list[dict[str, Any]]:
    """A keyset page of the team's status pages, oldest first."""
    return await fetch_team_page(pool, Q["status_page_list"], team_id, limit=limit, after=after)


async def get_note(pool: AsyncConnectionPool, team_id: uuid.UUID,
                   alert_id: uuid.UUID) -> str | None:
    """The note written on an alert's incident (``None``: none;
    :func:`core.statuspages.commands.set_note`)."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["alert_note_get"], {"id": alert_id, "team_id": team_id})
        row = await cur.fetchone()
    return row["note"] if row and row["note"] else None


async def candidates(pool: AsyncConnectionPool, team_id: uuid.UUID, chosen: list[uuid.UUID],
                     limit: int) -> list[dict[str, Any]]:
    """The team's live jobs and monitors a page may show: rows ``{"kind": "job" | "monitor",
    "id", "name"}``, those of ``chosen`` first, then by name, at most ``limit`` (the
    dashboard's component picker)."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["status_page_candidates"],
                                 {"team_id": team_id, "ids": chosen, "limit": limit})
        return list(await cur.fetchall())
