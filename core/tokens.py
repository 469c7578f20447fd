"""The one hash of a secret token (API keys, session cookies, confirmation and ping tokens).

A leaf module (imports nothing of cronledger). Tokens are random and long, so a plain SHA-256
is enough; the database stores only this digest, never the token.
"""

from __future__ import annotations

import hashlib


def token_hash(token: str) -> bytes:
    """The 32-byte SHA-256 digest of ``token`` (UTF-8), as stored in ``*_hash`` columns."""
    return hashlib.sha256(token.encode()).digest()
