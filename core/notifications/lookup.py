"""Team secrets as the notifier sees them: a lookup by name, injected.

Telegram bot tokens and SMTP passwords are named team secrets (``token_secret``,
``smtp.password_secret``). The secrets store (``PUT /v1/secrets/{name}``) is its own module; the
notifier depends only on :class:`SecretLookup`, so any store that can open a team's secret by
name plugs in.
"""

from __future__ import annotations

import uuid
from typing import Protocol

from core.crypto import KeyRing, secret_aad
from core.db import Connection
from core.secrets import fetch_sealed


class SecretLookup(Protocol):
    """``await lookup(conn, team_id, name)`` -> the secret's plaintext, or ``None`` if the team
    has no secret of that name. Called inside the notifier's claim transaction."""

    async def __call__(
        self, conn: Connection, team_id: uuid.UUID, name: str
    ) -> str | None: ...


class KeyRingSecrets:
    """The real :class:`SecretLookup`: the team's secret from the secrets store
    (``PUT /v1/secrets/{name}``), opened with the server's key ring.

    Raises (when called):
        SecretUnavailable: the secret exists but cannot be opened (its key is not configured,
            or it does not authenticate).
    """

    def __init__(self, ring: KeyRing) -> None:
        self.ring = ring

    async def __call__(
        self, conn: Connection, team_id: uuid.UUID, name: str
    ) -> str | None:
        found, _ = await fetch_sealed(conn, [(team_id, name)], [])
        sealed = found.get((team_id, name))
        if sealed is None:
            return None
        return self.ring.open(sealed, secret_aad(team_id.bytes, name)).decode()
