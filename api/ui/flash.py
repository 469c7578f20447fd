"""Flash notices: what a form's POST has to say, carried across its redirect (POST → 303 → GET),
so that no page of the dashboard is a POST's answer a reload would send again.

A notice is a short text (``"Monitor “backup” saved."``) and, at most once, a value shown once
and never again (a new API key, a ping URL, a webhook signing secret). It travels in the cookie
``cronledger_flash``, sealed with AES-256-GCM under a key derived from the session id
(HMAC-SHA256 of a fixed label keyed by it, like the CSRF token, :mod:`core.sessions`): nothing
is stored on the server, the value is never in plaintext outside the page that shows it, and a
cookie sealed for another session does not open. The next page rendered for the session
(:func:`api.ui.render.page`) shows the notice and deletes the cookie; the cookie also expires
after :data:`FLASH_SECONDS`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from litestar import Request, Response
from litestar.datastructures import Cookie

from api.ui.auth import Viewer, is_https, redirect

FLASH_COOKIE = "cronledger_flash"
FLASH_SECONDS = 120  # a notice not shown within this time is dropped
MAX_COOKIE = 3000  # characters of a presented cookie looked at
NONCE_BYTES = 12


@dataclass(frozen=True)
class Flash:
    """A notice for the next page.

    Attributes:
        text: what happened, as text (autoescaped by the template).
        secret: a value shown once (``None``: none), in a copyable field.
        secret_label: what ``secret`` is (``"Ping URL"``, ``"API key"``).
        level: ``"ok"`` or ``"error"`` (the notice's colour and role).
    """

    text: str
    secret: str | None = None
    secret_label: str = ""
    level: str = "ok"


def _key(session_id: str) -> bytes:
    return hmac.new(session_id.encode(), b"cronledger flash", hashlib.sha256).digest()


def seal(session_id: str, flash: Flash) -> str:
    """The cookie value of ``flash`` for the session (URL-safe base64 of nonce + ciphertext)."""
    nonce = secrets.token_bytes(NONCE_BYTES)
    plain = json.dumps({"t": flash.text, "s": flash.secret, "l": flash.secret_label,
                        "v": flash.level}).encode()
    sealed = AESGCM(_key(session_id)).encrypt(nonce, plain, b"flash")
    return base64.urlsafe_b64encode(nonce + sealed).decode().rstrip("=")


def unseal(session_id: str, value: str) -> Flash | None:
    """The notice of a cookie value, or ``None`` when it is not one sealed for this session."""
    if not value or len(value) > MAX_COOKIE:
        return None
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
        plain = AESGCM(_key(session_id)).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], b"flash")
        data = json.loads(plain)
        return Flash(text=str(data["t"]), secret=data["s"], secret_label=str(data["l"]),
                     level="error" if data["v"] == "error" else "ok")
    except (ValueError, binascii.Error, InvalidTag, KeyError, TypeError):
        return None


def flash_cookie(request: Request[Any, Any, Any], value: str) -> Cookie:
    """The flash cookie carrying ``value`` (``""``: delete it)."""
    return Cookie(key=FLASH_COOKIE, value=value, path="/", httponly=True, samesite="lax",
                  secure=is_https(request), max_age=FLASH_SECONDS if value else 0)


def redirect_with(request: Request[Any, Any, Any], viewer: Viewer, path: str, text: str, *,
                  secret: str | None = None, secret_label: str = "",
                  level: str = "ok") -> Response[Any]:
    """A 303 to ``path`` whose page will show ``text`` (and ``secret``, once)."""
    flash = Flash(text, secret, secret_label, level)
    return redirect(path, cookies=[flash_cookie(request, seal(viewer.session_id, flash))])


def take(request: Request[Any, Any, Any], viewer: Viewer | None) -> tuple[Flash | None,
                                                                          list[Cookie]]:
    """The notice waiting for this page, and the cookie that deletes it (``[]`` without)."""
    value = request.cookies.get(FLASH_COOKIE)
    if not value:
        return None, []
    flash = unseal(viewer.session_id, value) if viewer is not None else None
    return flash, [flash_cookie(request, "")]
