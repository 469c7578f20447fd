"""Encryption of channel secrets at rest (URLs, tokens, signing secrets): AES-256-GCM.

The channel and notification code depend only on the :class:`Sealer` protocol. The implementation,
:class:`AesGcmSealer`, uses the server's key ring (:mod:`core.crypto`: ``CRONLEDGER_SECRET_KEY``
or the embedded key file, with rotation), the same keys as team secrets. ``seal`` returns
``(key_id, blob)`` where ``blob`` is the 12-byte nonce followed by the ciphertext and its 16-byte
tag; ``unseal`` reverses it. The associated data binds a sealed value to its team and channel,
so a blob copied to another row does not open. A channel's secret fields are sealed together,
as one JSON object (:func:`seal_channel`, :func:`unseal_channel`).
"""

from __future__ import annotations

import json
import secrets
import uuid
from collections.abc import Sequence
from typing import Any, Protocol

from core.crypto import NONCE_BYTES, KeyRing, Sealed, SecretUnavailable
from core.crypto import parse_keys as _parse_keys

KEY_BYTES = 32


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


def parse_keys(text: str) -> list[bytes]:
    """Decode a ``CRONLEDGER_SECRET_KEY`` value (see :func:`core.crypto.parse_keys`).

    Raises:
        ValueError: a key is not base64 or not 32 bytes (the message never shows the key).
    """
    return _parse_keys(text, "CRONLEDGER_SECRET_KEY")


class AesGcmSealer:
    """:class:`Sealer` over a :class:`core.crypto.KeyRing`: seals with the current key, opens
    with any configured one.

    Args:
        ring: the key ring, or raw 32-byte keys (current first). With no key, sealing raises
            :class:`core.errors.Unavailable` (channels with secrets cannot be created).
    """

    def __init__(self, ring: KeyRing | Sequence[bytes]) -> None:
        self.ring = ring if isinstance(ring, KeyRing) else KeyRing(list(ring))

    @classmethod
    def from_text(cls, text: str) -> AesGcmSealer:
        """The sealer for a ``CRONLEDGER_SECRET_KEY`` value (may be empty)."""
        return cls(parse_keys(text))

    @classmethod
    def random(cls) -> AesGcmSealer:
        """A sealer with a fresh random key (tests)."""
        return cls([secrets.token_bytes(KEY_BYTES)])

    @property
    def current_id(self) -> str | None:
        return self.ring.current_id

    def seal(self, plaintext: bytes, aad: bytes) -> tuple[str, bytes]:
        sealed = self.ring.seal(plaintext, aad)
        return sealed.key_id, sealed.nonce + sealed.ciphertext

    def unseal(self, key_id: str, blob: bytes, aad: bytes) -> bytes:
        blob = bytes(blob)
        try:
            return self.ring.open(Sealed(key_id, blob[:NONCE_BYTES], blob[NONCE_BYTES:]), aad)
        except SecretUnavailable as exc:
            raise SealError(str(exc)) from None


def channel_aad(team_id: bytes, channel_id: bytes) -> bytes:
    """Associated data of a channel's sealed secrets: they only open for that team and row."""
    return b"cronledger/channel/v1\0" + team_id + channel_id


def seal_channel(sealer: Sealer, team_id: uuid.UUID, channel_id: uuid.UUID,
                 values: dict[str, str]) -> tuple[str | None, bytes | None]:
    """Seal a channel's secret fields (``{"url", "signing_secret"}``, as JSON) for its row.

    Returns:
        ``(key_id, blob)`` for the ``key_id`` and ``sealed`` columns; ``(None, None)`` when
        ``values`` is empty.

    Raises:
        Unavailable: no key is configured (HTTP 503).
    """
    if not values:
        return None, None
    return sealer.seal(json.dumps(values).encode(), channel_aad(team_id.bytes, channel_id.bytes))


def unseal_channel(sealer: Sealer, row: dict[str, Any]) -> dict[str, str]:
    """The plaintext secret fields of a channel row (``{}`` when it has none).

    Raises:
        SealError: the key is not configured or the value does not authenticate.
    """
    if row.get("sealed") is None:
        return {}
    aad = channel_aad(row["team_id"].bytes, row["id"].bytes)
    secrets: dict[str, str] = json.loads(sealer.unseal(row["key_id"], bytes(row["sealed"]), aad))
    return secrets
