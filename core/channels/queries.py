"""Channel reads: one channel, a page of channels, the API's view of a row, and the check of
the channel ids that jobs and monitors list."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.db import Connection, ConnectionPool, fetch_team_page, fetch_team_row
from core.errors import FieldError, InvalidInput
from core.queries import Q


async def get_channel(
    pool: ConnectionPool, actor: Actor, channel_id: uuid.UUID
) -> dict[str, Any]:
    """One live channel row (sealed columns included; callers show :func:`channel_view`).

    Raises:
        NotFound: no such channel for this team, or it was deleted.
    """
    return await fetch_team_row(pool, Q["channel_get"], "channel", channel_id, actor.team_id)


async def list_channels(
    pool: ConnectionPool, actor: Actor, *, limit: int,
    after: tuple[datetime, uuid.UUID] | None,
) -> list[dict[str, Any]]:
    """A page of the team's live channels in creation order, after the keyset ``after``."""
    return await fetch_team_page(pool, Q["channel_list"], actor.team_id, limit=limit, after=after)


async def channel_names(pool: ConnectionPool, actor: Actor, channel_ids: list[uuid.UUID]
                        ) -> dict[uuid.UUID, dict[str, Any]]:
    """``{id: {"id", "name", "kind", "live"}}`` of those of ``channel_ids`` that are (or were:
    ``live`` false once deleted) the team's channels; another team's ids are left out."""
    if not channel_ids:
        return {}
    async with pool.connection() as conn:
        cur = await conn.execute(Q["channel_names"], {"team_id": actor.team_id,
                                                      "ids": channel_ids})
        return {row["id"]: row for row in await cur.fetchall()}


async def channels_by_name(pool: ConnectionPool, actor: Actor, names: list[str]
                           ) -> dict[str, uuid.UUID]:
    """``{name: id}`` of those of ``names`` that are live channels of the team."""
    if not names:
        return {}
    async with pool.connection() as conn:
        cur = await conn.execute(Q["channel_by_names"], {"team_id": actor.team_id,
                                                         "names": names})
        return {row["name"]: row["id"] for row in await cur.fetchall()}


def channel_view(row: dict[str, Any]) -> dict[str, Any]:
    """The shape shown by the API: id, name, kind, the redacted config, dates, version."""
    return {"id": row["id"], "name": row["name"], "kind": row["kind"], **row["config"],
            "version": row["version"], "created_at": row["created_at"],
            "updated_at": row["updated_at"]}


async def missing_channels(
    conn: Connection, team_id: uuid.UUID, channel_ids: list[uuid.UUID]
) -> list[uuid.UUID]:
    """Those of ``channel_ids`` that are not live channels of ``team_id``."""
    if not channel_ids:
        return []
    cur = await conn.execute(Q["channel_existing"], {"team_id": team_id, "ids": channel_ids})
    found = {row["id"] for row in await cur.fetchall()}
    return [c for c in channel_ids if c not in found]


async def check_new_channels(
    conn: Connection, team_id: uuid.UUID, channels: list[uuid.UUID],
    already: list[uuid.UUID],
) -> None:
    """Channels newly listed on a job or monitor must be live channels of its team. Ids kept
    from before are not checked again, so deleting a channel never makes its subscribers
    uneditable.

    Raises:
        InvalidInput: naming each unknown or foreign channel id (422).
    """
    added = [c for c in channels if c not in already]
    missing = set(await missing_channels(conn, team_id, added))
    if missing:
        errors = [FieldError(f"channels.{i}", f"no channel {c} in this team")
                  for i, c in enumerate(channels) if c in missing]
        raise InvalidInput("; ".join(f"{e.field}: {e.message}" for e in errors), errors)
