"""Dashboard sessions and one-time sign-in links (docs/dashboard-code.md).

A session is opened with an API key (the sign-in form) or a one-time sign-in link
(``cronledger serve``'s first-run link) and acts with that key's team and scope. The session
id and the link token are random 256-bit tokens; only their SHA-256 is stored (as API keys,
:mod:`core.apikeys`), so a copy of the database signs nobody in. A session ends when it
expires (:data:`SESSION_SECONDS` after sign-in), when it is signed out, or when its key is
revoked. The CSRF token of a session's forms is derived from the session id
(:func:`csrf_token`): only the holder of the cookie can know it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from core.actor import Actor
from core.apikeys import authenticate, create_api_key
from core.db import Connection, ConnectionPool, transaction
from core.queries import Q
from core.tokens import token_hash

SESSION_SECONDS = 12 * 3600  # a session's lifetime from sign-in
SIGNIN_LINK_SECONDS = 24 * 3600  # a one-time sign-in link's lifetime
SIGNIN_KEY_NAME = "dashboard sign-in link"  # the key a sign-in link signs in with
MAX_TOKEN = 200  # characters of a presented session id or link token looked at


def csrf_token(session_id: str) -> str:
    """The CSRF token of the session's forms: HMAC-SHA256 of a fixed label keyed by the
    session id, as hex (the synchronizer-token pattern without a stored token)."""
    return hmac.new(session_id.encode(), b"cronledger csrf", hashlib.sha256).hexdigest()


def csrf_matches(session_id: str, presented: str | None) -> bool:
    """Whether ``presented`` is the session's CSRF token (constant-time comparison)."""
    return bool(presented) and hmac.compare_digest(csrf_token(session_id), presented or "")


async def _open(conn: Connection, key_id: uuid.UUID, now: datetime) -> str:
    session_id = secrets.token_urlsafe(32)
    await conn.execute(Q["session_prune"], {"now": now})
    await conn.execute(Q["session_insert"], {
        "id_hash": token_hash(session_id), "key_id": key_id, "now": now,
        "expires_at": now + timedelta(seconds=SESSION_SECONDS)})
    return session_id


async def sign_in(pool: ConnectionPool, api_key: str, now: datetime) -> str | None:
    """Open a session for a valid API key; ``None`` for an unknown or revoked key.

    Returns:
        The new session id (the cookie's value), shown only this once.
    """
    actor = await authenticate(pool, api_key.strip())
    if actor is None or actor.key_id is None:  # an API key's actor always has its key id
        return None
    async with transaction(pool) as conn:
        return await _open(conn, actor.key_id, now)


async def session_actor(pool: ConnectionPool, session_id: str | None,
                        now: datetime) -> Actor | None:
    """The :class:`Actor` of a live session (its key's team and scope), or ``None`` when the
    session is unknown, expired or its key revoked."""
    if not session_id or len(session_id) > MAX_TOKEN:
        return None
    async with pool.connection() as conn:
        cur = await conn.execute(Q["session_find"], {"id_hash": token_hash(session_id), "now": now})
        row = await cur.fetchone()
    if row is None:
        return None
    return Actor(team_id=row["team_id"], key_id=row["key_id"], scope=row["scope"])


@dataclass(frozen=True)
class HeldSession:
    """A live session a browser holds (it may hold several, one per team it signed in to).

    Attributes:
        session_id: the session id (a cookie's value; never shown).
        actor: its key's team and scope.
        team_name: the team's name (what the dashboard shows).
        key_name: the key's name, ``None`` for an unnamed key.
    """

    session_id: str
    actor: Actor
    team_name: str
    key_name: str | None


async def held_sessions(pool: ConnectionPool, session_ids: list[str],
                        now: datetime) -> list[HeldSession]:
    """The live ones of ``session_ids`` (unknown, expired, signed-out sessions and those of a
    revoked key left out), in the order given, in one query."""
    wanted = [sid for sid in session_ids if sid and len(sid) <= MAX_TOKEN]
    if not wanted:
        return []
    async with pool.connection() as conn:
        cur = await conn.execute(Q["session_find_held"], {
            "id_hashes": [token_hash(sid) for sid in wanted], "now": now})
        rows = {bytes(row["id_hash"]): row for row in await cur.fetchall()}
    held = []
    for sid in wanted:
        row = rows.get(token_hash(sid))
        if row is not None:
            held.append(HeldSession(sid, Actor(team_id=row["team_id"], key_id=row["key_id"],
                                               scope=row["scope"]),
                                    row["team_name"], row["key_name"]))
    return held


async def sign_out(pool: ConnectionPool, session_id: str) -> None:
    """End a session (nothing happens for an unknown one)."""
    async with pool.connection() as conn:
        await conn.execute(Q["session_delete"], {"id_hash": token_hash(session_id[:MAX_TOKEN])})


async def issue_signin_link(pool: ConnectionPool, team: str, now: datetime) -> str:
    """A one-time sign-in token for ``team`` (created if missing), valid
    :data:`SIGNIN_LINK_SECONDS`; it signs in with the team's write key named
    :data:`SIGNIN_KEY_NAME` (created the first time; its plaintext is never shown).

    Returns:
        The token, shown only this once.
    """
    async with pool.connection() as conn:
        cur = await conn.execute(Q["signin_key_find"], {"team": team, "name": SIGNIN_KEY_NAME})
        row = await cur.fetchone()
    if row is None:
        _, record = await create_api_key(pool, team, "write", SIGNIN_KEY_NAME)
        key_id = record["id"]
    else:
        key_id = row["id"]
    token = secrets.token_urlsafe(32)
    async with transaction(pool) as conn:
        await conn.execute(Q["signin_token_insert"], {
            "token_hash": token_hash(token), "key_id": key_id, "now": now,
            "expires_at": now + timedelta(seconds=SIGNIN_LINK_SECONDS)})
    return token


async def redeem_signin_link(pool: ConnectionPool, token: str,
                             now: datetime) -> str | None:
    """Use a sign-in token once: a new session id, or ``None`` when the token is unknown,
    used, expired or its key revoked."""
    if not token or len(token) > MAX_TOKEN:
        return None
    async with transaction(pool) as conn:
        cur = await conn.execute(Q["signin_token_redeem"], {"token_hash": token_hash(token),
                                                           "now": now})
        row = await cur.fetchone()
        if row is None:
            return None
        return await _open(conn, row["key_id"], now)
