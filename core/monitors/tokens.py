"""Ping tokens: minted, hashed for lookups, and kept sealed so the ping URL can be read again.

A ping is looked up by the SHA-256 of its token (``monitors.ping_token_hash``: one indexed
equality, as API keys are). The token itself is kept in ``monitor_ping_tokens`` sealed with
the server's key ring (:mod:`core.crypto`, AES-256-GCM, the team id and monitor id bound as
associated data: the channel URLs' and team secrets' channel), beside the hash it was minted
with; a row whose hash is no longer the monitor's is a rotated token and is never opened, so a
rotation invalidates the old URL at once. Events carry the hash only.

Who may read it is the callers' rule (write keys and the dashboard's writers; read keys never:
docs/heartbeats.md, *The ping URL*). Without a secret key nothing is kept: the URL is shown
once, and :func:`unreadable_reason` says why. Monitors minted before migration 0024 have no
row: their URL is readable after their next rotation.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from collections.abc import Sequence
from datetime import datetime

from core.crypto import KeyRing, Sealed, SecretUnavailable, token_aad
from core.db import Connection, ConnectionPool
from core.queries import Q
from core.tokens import token_hash

log = logging.getLogger("cronledger.monitors")

TOKEN_BYTES = 32  # docs/heartbeats.md: 32 random bytes, 64 hex characters

NO_KEY = ("this server has no secret key (CRONLEDGER_SECRET_KEY), so the ping URL is shown "
          "once, when it is minted (a token minted now is stored only as a hash; one kept sealed "
          "under a key cannot be opened without it): copy it now, or set the secret key (and "
          "rotate the token if it was minted without one) to make it readable again")
NOT_KEPT = ("this monitor's ping token was minted before ping URLs were kept (or while the "
            "server had no secret key, or under a key no longer configured): rotate the token "
            "to make its ping URL readable again")


def new_token() -> tuple[str, bytes]:
    """A fresh ping token (64 hex characters) and its SHA-256 (what lookups use)."""
    token = secrets.token_hex(TOKEN_BYTES)
    return token, token_hash(token)


def kept(keyring: KeyRing | None) -> bool:
    """Whether tokens minted now are kept (a secret key is configured)."""
    return keyring is not None and keyring.enabled


def unreadable_reason(keyring: KeyRing | None) -> str:
    """Why a monitor's ping URL cannot be shown (:data:`NO_KEY` or :data:`NOT_KEPT`)."""
    return NOT_KEPT if kept(keyring) else NO_KEY


async def keep_token(conn: Connection, keyring: KeyRing | None,
                     team_id: uuid.UUID, monitor_id: uuid.UUID, token: str,
                     now: datetime) -> bool:
    """Keep a newly minted token sealed, in the caller's transaction (replacing the previous
    one); without a secret key, drop the previous one's row and keep nothing.

    Returns:
        Whether the token was kept (its URL readable later).
    """
    if not kept(keyring):
        await conn.execute(Q["monitor_ping_token_delete"], {"monitor_id": monitor_id})
        return False
    assert keyring is not None
    sealed = keyring.seal(token.encode(), token_aad(team_id, monitor_id))
    await conn.execute(Q["monitor_ping_token_upsert"], {
        "monitor_id": monitor_id, "team_id": team_id, "token_hash": token_hash(token),
        "key_id": sealed.key_id, "nonce": sealed.nonce, "ciphertext": sealed.ciphertext,
        "now": now})
    return True


async def read_tokens(pool: ConnectionPool, keyring: KeyRing | None,
                      team_id: uuid.UUID, monitor_ids: Sequence[uuid.UUID]
                      ) -> dict[uuid.UUID, str]:
    """The current ping tokens of the team's ``monitor_ids`` that can be read (absent: none
    kept, or its key is not configured, which is logged once per read, never the value)."""
    if not monitor_ids or keyring is None:
        return {}
    async with pool.connection() as conn:
        cur = await conn.execute(Q["monitor_ping_token_fetch_many"], {
            "ids": list(monitor_ids), "team_id": team_id})
        rows = await cur.fetchall()
    tokens: dict[uuid.UUID, str] = {}
    for row in rows:
        sealed = Sealed(row["key_id"], bytes(row["nonce"]), bytes(row["ciphertext"]))
        try:
            tokens[row["monitor_id"]] = keyring.open(
                sealed, token_aad(row["team_id"], row["monitor_id"])).decode()
        except SecretUnavailable as exc:
            log.warning("the ping token of monitor %s cannot be opened: %s",
                        row["monitor_id"], exc)
    return tokens


async def read_token(pool: ConnectionPool, keyring: KeyRing | None, team_id: uuid.UUID,
                     monitor_id: uuid.UUID) -> str | None:
    """:func:`read_tokens` for one monitor (``None``: not readable)."""
    return (await read_tokens(pool, keyring, team_id, [monitor_id])).get(monitor_id)
