"""A status page's public key: minted, hashed for lookups, kept sealed so the owner can read
the URL again.

A visitor's URL is looked up by the SHA-256 of its key (``status_pages.key_hash``, one
indexed equality, as ping tokens are: :mod:`core.monitors.tokens`). The key itself is kept in
the page's row sealed with the server's key ring (AES-256-GCM, team and page bound as
associated data, :func:`core.crypto.status_page_aad`); events carry the hash only. Without a
secret key nothing is kept and the URL is shown once, when it is minted
(:data:`NOT_READABLE`).
"""

from __future__ import annotations

import logging
import secrets
import uuid
from typing import Any

from core.crypto import KeyRing, Sealed, SecretUnavailable, status_page_aad
from core.tokens import token_hash

log = logging.getLogger("cronledger.statuspages")

KEY_BYTES = 16  # 128 random bits, 32 hexadecimal characters
NOT_READABLE = ("this server has no secret key (CRONLEDGER_SECRET_KEY), or the page's key was "
                "sealed under a key no longer configured, so its public URL was shown once, "
                "when it was minted: set the secret key and rotate the page's key "
                "(PATCH with \"rotate_key\": true) to make it readable again")


def new_key() -> tuple[str, bytes]:
    """A fresh public key (32 hex characters) and its SHA-256."""
    key = secrets.token_hex(KEY_BYTES)
    return key, token_hash(key)


def seal_key(keyring: KeyRing | None, team_id: uuid.UUID, page_id: uuid.UUID,
             key: str) -> dict[str, Any]:
    """The ``key_id``/``nonce``/``ciphertext`` columns of ``key`` (all ``None`` without a
    secret key: nothing is kept)."""
    if keyring is None or not keyring.enabled:
        return {"key_id": None, "nonce": None, "ciphertext": None}
    sealed = keyring.seal(key.encode(), status_page_aad(team_id, page_id))
    return {"key_id": sealed.key_id, "nonce": sealed.nonce, "ciphertext": sealed.ciphertext}


def open_key(keyring: KeyRing | None, row: dict[str, Any]) -> str | None:
    """The public key kept in a ``status_pages`` row (``None``: none kept, or its key is not
    configured, which is logged, never the value)."""
    if keyring is None or row.get("ciphertext") is None:
        return None
    sealed = Sealed(row["key_id"], bytes(row["nonce"]), bytes(row["ciphertext"]))
    try:
        return keyring.open(sealed, status_page_aad(row["team_id"], row["id"])).decode()
    except SecretUnavailable as exc:
        log.warning("the public key of status page %s cannot be opened: %s", row["id"], exc)
        return None
