"""The owner's team-scoped reads of status pages (rows of ``status_pages``)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from core.db import ConnectionPool, fetch_team_page, fetch_team_row
from core.queries import Q


async def _live(pool: ConnectionPool, team_id: uuid.UUID,
                rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with ``components`` and ``names`` of live jobs and monitors only: one deleted
    since it was chosen drops out of the page as it does from the public page
    (``status_page_components``). One statement (``status_page_subjects``), none without
    ids."""
    ids = list({*(c for r in rows for c in r["components"]),
                *(uuid.UUID(k) for r in rows for k in r["names"])})
    if not ids:
        return rows
    async with pool.connection() as conn:
        cur = await conn.execute(Q["status_page_subjects"], {"team_id": team_id, "ids": ids})
        live = {row["id"] for row in await cur.fetchall()}
    return [{**r, "components": [c for c in r["components"] if c in live],
             "names": {k: v for k, v in r["names"].items() if uuid.UUID(k) in live}}
            for r in rows]


async def get_page(pool: ConnectionPool, team_id: uuid.UUID,
                   page_id: uuid.UUID) -> dict[str, Any]:
    """The ``status_pages`` row, its deleted components left out (:func:`_live`).
    Raises: NotFound."""
    row = await fetch_team_row(pool, Q["status_page_get"], "status page", page_id, team_id)
    return (await _live(pool, team_id, [row]))[0]


async def list_pages(pool: ConnectionPool, team_id: uuid.UUID, *, limit: int,
                     after: tuple[datetime, uuid.UUID] | None) -> list[dict[str, Any]]:
    """A keyset page of the team's status pages, oldest first, their deleted components left
    out (:func:`_live`)."""
    rows = await fetch_team_page(pool, Q["status_page_list"], team_id, limit=limit,
                                 after=after)
    return await _live(pool, team_id, rows)


async def get_note(pool: ConnectionPool, team_id: uuid.UUID,
                   alert_id: uuid.UUID) -> str | None:
    """The note written on an alert's incident (``None``: none;
    :func:`core.statuspages.commands.set_note`)."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["alert_note_get"], {"id": alert_id, "team_id": team_id})
        row = await cur.fetchone()
    return row["note"] if row and row["note"] else None


async def candidates(pool: ConnectionPool, team_id: uuid.UUID, chosen: list[uuid.UUID],
                     limit: int) -> list[dict[str, Any]]:
    """The team's live jobs and monitors a page may show: rows ``{"kind": "job" | "monitor",
    "id", "name"}``, those of ``chosen`` first, then by name, at most ``limit`` (the
    dashboard's component picker)."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["status_page_candidates"],
                                 {"team_id": team_id, "ids": chosen, "limit": limit})
        return list(await cur.fetchall())
