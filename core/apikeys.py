"""Teams and API keys. Keys are random 256-bit tokens stored only as SHA-256 hashes.

A fast hash is enough here (unlike passwords): the key has 256 bits of entropy, so it cannot be
guessed from its hash, and authentication stays one indexed lookup.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.db import (
    ConnectionPool,
    fetch_team_page,
    one_row,
    transaction,
)
from core.errors import NotFound, invalid
from core.queries import Q
from core.tokens import token_hash

KEY_PREFIX = "clk_"
SCOPES = ("read", "write")
DEFAULT_SCOPE = "write"  # of a new key
MAX_KEY_NAME = 200


async def create_api_key(
    pool: ConnectionPool, team: str | uuid.UUID, scope: str = DEFAULT_SCOPE, name: str = ""
) -> tuple[str, dict[str, Any]]:
    """Create a key for ``team`` (a team name, created if missing, or a team id).

    Returns:
        ``(key, record)``: the plaintext key, shown once, and its stored record (no hash).

    Raises:
        InvalidInput: unknown scope, a name over 200 characters, or a team name that is empty
            or over 100 characters.
    """
    if scope not in SCOPES:
        raise invalid("scope", f"must be one of {', '.join(SCOPES)}")
    if len(name) > MAX_KEY_NAME or "\x00" in name:
        raise invalid("name", f"must be at most {MAX_KEY_NAME} characters, without NUL")
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    async with transaction(pool) as conn:
        if isinstance(team, uuid.UUID):
            team_id = team
        else:
            if not 1 <= len(team) <= 100 or "\x00" in team:
                raise invalid("team", "must be 1 to 100 characters, without NUL")
            cur = await conn.execute(Q["team_ensure"], {"name": team})
            team_id = one_row(await cur.fetchone(), "team_ensure")["id"]
        cur = await conn.execute(Q["api_key_insert"], {
            "team_id": team_id, "name": name, "prefix": key[:8], "key_hash": token_hash(key),
            "scope": scope})
        record = one_row(await cur.fetchone(), "api_key_insert")
    return key, record


async def authenticate(pool: ConnectionPool, key: str) -> Actor | None:
    """The :class:`Actor` for a presented key, or ``None`` when it is unknown or revoked."""
    if not key.startswith(KEY_PREFIX) or len(key) > 200:
        return None
    async with pool.connection() as conn:
        cur = await conn.execute(Q["api_key_authenticate"], {"key_hash": token_hash(key)})
        row = await cur.fetchone()
    if row is None:
        return None
    return Actor(team_id=row["team_id"], key_id=row["id"], scope=row["scope"])


async def list_api_keys(pool: ConnectionPool, actor: Actor, *, limit: int = 50,
                        after: tuple[datetime, uuid.UUID] | None = None) -> list[dict[str, Any]]:
    """A page of the team's active keys, oldest first: ``id``, ``name``, ``prefix``, ``scope``,
    ``created_at`` (never the key or its hash); at most ``limit`` rows after the keyset
    ``after`` = ``(created_at, id)`` of the previous page's last row."""
    return await fetch_team_page(pool, Q["api_key_list"], actor.team_id, limit=limit,
                                 after=after)


async def list_all_api_keys(pool: ConnectionPool,
                            team: str | None = None) -> list[dict[str, Any]]:
    """Every key of every team (or of the team named ``team``), revoked ones included, for the
    operator's CLI: ``id``, ``team`` (its name), ``name``, ``prefix``, ``scope``,
    ``created_at``, ``revoked_at`` (``None`` when active). Never the key or its hash."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["api_key_admin_list"], {"team": team})
        return await cur.fetchall()


async def find_api_key(pool: ConnectionPool, key_id: uuid.UUID) -> dict[str, Any] | None:
    """``{"id", "team_id", "revoked_at"}`` of any team's key, or ``None`` when there is none."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["api_key_find"], {"id": key_id})
        return await cur.fetchone()


async def revoke_api_key(
    pool: ConnectionPool, actor: Actor, key_id: uuid.UUID, now: datetime
) -> None:
    """Revoke one of the team's keys.

    Raises:
        NotFound: no such active key for this team.
    """
    async with transaction(pool) as conn:
        cur = await conn.execute(Q["api_key_revoke"], {
            "id": key_id, "team_id": actor.team_id, "now": now})
        if await cur.fetchone() is None:
            raise NotFound(f"API key {key_id} not found")
