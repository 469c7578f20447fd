"""A team's keys for the healthchecks drop-in (docs/healthchecks.md): the ping key and the
badge key.

- The **ping key** names the team in ``/ping/<ping-key>/<slug>``: 22 URL-safe random
  characters (128 bits, ``secrets.token_urlsafe(16)``, never 64 hex characters, so a slug URL
  cannot be taken for a token URL), stored only as its SHA-256 and shown once, when created or
  rotated. A team has none until ``POST /v1/team/ping-key``.
- The **badge key** names the team in ``/badge/<badge-key>/...`` and ``/metrics/team/<badge-key>``:
  read-only and meant to be public (it is pasted into README files, as healthchecks' is), so
  it is stored as is and shown on ``GET /v1/team``; every team has one from its creation
  (migration 0009), ``POST /v1/team/badge-key`` replaces it.

Both changes are events of the team's ``team`` stream (``team.ping_key_rotated`` ``{}``,
``team.badge_key_rotated`` ``{}``: neither key is in the log).
"""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.db import ConnectionPool, transaction
from core.errors import NotFound
from core.events import Head, append_at
from core.queries import Q
from core.tokens import token_hash as ping_key_hash  # a ping key is a token like any other

PING_KEY_PATTERN = "[A-Za-z0-9_-]{22,64}"
PING_KEY_BYTES = 16  # 22 URL-safe characters
BADGE_KEY_PATTERN = "[A-Za-z0-9_-]{16,64}"


def new_ping_key() -> str:
    """A fresh ping key."""
    return secrets.token_urlsafe(PING_KEY_BYTES)


async def get_team(pool: ConnectionPool, actor: Actor) -> dict[str, Any]:
    """``{id, name, created_at, has_ping_key, badge_key}`` of the actor's team.

    Raises:
        NotFound: the team no longer exists.
    """
    async with pool.connection() as conn:
        cur = await conn.execute(Q["team_get"], {"team_id": actor.team_id})
        row = await cur.fetchone()
    if row is None:
        raise NotFound("team not found")
    return dict(row)


async def _change(pool: ConnectionPool, actor: Actor, event: str, query: str,
                  params: dict[str, Any], now: datetime) -> None:
    async with transaction(pool) as conn:
        cur = await conn.execute(Q["team_lock"], {"team_id": actor.team_id})
        row = await cur.fetchone()
        if row is None:
            raise NotFound("team not found")
        await conn.execute(query, {"team_id": actor.team_id, **params})
        await append_at(conn, [(Head("team", actor.team_id, actor.team_id, row["version"]),
                                [(event, {})])], now, actor.metadata())


async def rotate_ping_key(pool: ConnectionPool, actor: Actor, now: datetime) -> str:
    """Create or replace the team's ping key; the old one stops working at once.

    Returns:
        The new key (shown once: only its hash is stored).
    """
    key = new_ping_key()
    await _change(pool, actor, "team.ping_key_rotated", Q["team_ping_key_set"],
                  {"ping_key_hash": ping_key_hash(key)}, now)
    return key


async def rotate_badge_key(pool: ConnectionPool, actor: Actor, now: datetime) -> str:
    """Replace the team's badge key; badge and metrics URLs with the old one answer 404."""
    key = secrets.token_urlsafe(PING_KEY_BYTES)
    await _change(pool, actor, "team.badge_key_rotated", Q["team_badge_key_set"],
                  {"badge_key": key}, now)
    return key


async def team_by_ping_key(pool: ConnectionPool, key: str) -> uuid.UUID | None:
    """The team whose ping key is ``key``, or ``None``."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["team_by_ping_key"], {"ping_key_hash": ping_key_hash(key)})
        row = await cur.fetchone()
    return None if row is None else row["id"]


async def team_by_badge_key(pool: ConnectionPool, key: str) -> uuid.UUID | None:
    """The team whose badge key is ``key``, or ``None``."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["team_by_badge_key"], {"badge_key": key})
        row = await cur.fetchone()
    return None if row is None else row["id"]


async def get_team_name(pool: ConnectionPool, team_id: uuid.UUID) -> str:
    """The team's name (the label of its ``*`` badge)."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["team_get"], {"team_id": team_id})
        row = await cur.fetchone()
    return "" if row is None else row["name"]
