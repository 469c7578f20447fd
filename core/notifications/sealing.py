"""Encryption of channel secrets at rest (URLs, tokens, signing secrets): AES-256-GCM.

The notification code depends only on the :class:`Sealer` protocol, so the team-secrets key
ring (``core/crypto.py``, with rotation) can replace :class:`AesGcmSealer` without changing
callers: ``seal`` returns ``(key_id, blob)`` where ``blob`` is the 12-byte nonce followed by the
ciphertext and its 16-byte tag; ``unseal`` reverses it. The associated data binds a sealed value
to its team and channel, so a blob copied to another row does not open.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import secrets
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from core.errors import Unavailable

NONCE_BYTES = 12
KEY_BYTES = 32
_SEPARATORS = re.compile(r"[\s,]+")


class SealError(Exception):
    """A sealed value cannot be opened: unknown key id, or it does not authenticate."""


class Sealer(Protocol):
    """Encrypts small values bound to associated data."""

    def seal(self, plaintext: bytes, aad: bytes) -> tuple[str, bytes]:
        """Encrypt; returns ``(key_id, blob)``.

        Raises:
            Unavailable: no key is configured (HTTP 503).
        """
        ...

    def unseal(self, key_id: str, blob: bytes, aad: bytes) -> bytes:
        """Decrypt a value sealed with ``aad``.

        Raises:
            SealError: the key is not configured, or the blob or ``aad`` do not match.
        """
        ...


def key_id(key: bytes) -> str:
    """A key's fingerprint stored beside each sealed value (16 hex characters)."""
    return hashlib.sha256(b"cronledger-key-id\0" + key).hexdigest()[:16]


def parse_keys(text: str) -> list[bytes]:
    """Decode ``CRONLEDGER_SECRET_KEY``: base64 32-byte keys separated by commas or spaces,
    the current key first.

    Raises:
        ValueError: a key is not base64 or not 32 bytes (the message never shows the key).
    """
    keys = []
    for position, item in enumerate(filter(None, _SEPARATORS.split(text.strip())), start=1):
        try:
            raw = base64.b64decode(item + "=" * (-len(item) % 4), altchars=b"-_", validate=True)
        except (binascii.Error, ValueError):
            raw = b""
        if len(raw) != KEY_BYTES:
            raise ValueError(f"CRONLEDGER_SECRET_KEY: key #{position} is not a base64-encoded "
                             "32-byte key")
        keys.append(raw)
    return keys


class AesGcmSealer:
    """:class:`Sealer` over one or more AES-256 keys: seals with the first, opens with any.

    Args:
        keys: raw 32-byte keys, current first. Empty: sealing raises
            :class:`core.errors.Unavailable` (channels with secrets cannot be created).
    """

    def __init__(self, keys: list[bytes]) -> None:
        self._ciphers = {key_id(k): AESGCM(k) for k in keys}
        self.current_id = key_id(keys[0]) if keys else None

    @classmethod
    def from_text(cls, text: str) -> AesGcmSealer:
        """The sealer for a ``CRONLEDGER_SECRET_KEY`` value (may be empty)."""
        return cls(parse_keys(text))

    @classmethod
    def random(cls) -> AesGcmSealer:
        """A sealer with a fresh random key (tests)."""
        return cls([secrets.token_bytes(KEY_BYTES)])

    def seal(self, plaintext: bytes, aad: bytes) -> tuple[str, bytes]:
        if self.current_id is None:
            raise Unavailable("channel secrets cannot be stored: set CRONLEDGER_SECRET_KEY "
                              "(see docs/notifications.md)")
        nonce = secrets.token_bytes(NONCE_BYTES)
        return self.current_id, nonce + self._ciphers[self.current_id].encrypt(
            nonce, plaintext, aad)

    def unseal(self, key_id: str, blob: bytes, aad: bytes) -> bytes:
        cipher = self._ciphers.get(key_id)
        if cipher is None:
            raise SealError(f"it was encrypted with key {key_id}, which is not configured")
        blob = bytes(blob)
        try:
            return cipher.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], aad)
        except InvalidTag:
            raise SealError("it does not authenticate (tampered with or moved)") from None


def channel_aad(team_id: bytes, channel_id: bytes) -> bytes:
    """Associated data of a channel's sealed secrets: they only open for that team and row."""
    return b"cronledger/channel/v1\0" + team_id + channel_id
