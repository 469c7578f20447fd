"""A channel's definition: validation and normalisation per kind, and the limits.

A channel is ``{"name", "kind", …}`` with the kind's own fields:

============  ====================================================================
kind          fields
============  ====================================================================
``webhook``   ``url``; ``signing_secret`` (16–256 characters; generated when absent)
``slack``     ``url`` (an incoming-webhook URL)
``discord``   ``url`` (a channel webhook URL)
``telegram``  ``chat_id`` (number or ``@channel``), ``token_secret`` (a team secret name)
``email``     ``to`` (one address or a list), optional ``smtp`` {``host``, ``port``,
              ``security`` starttls|tls|none, ``username``, ``password_secret``, ``from``}
============  ====================================================================

:func:`normalize_channel` splits a definition into what may be stored and shown (URLs redacted
to scheme and host) and the secret fields (``url``, ``signing_secret``) that
:mod:`core.channels.sealing` seals. Pure: no database, no clock.
"""

from __future__ import annotations

import re
import secrets
from typing import Any
from urllib.parse import urlsplit

from core.durations import SPACE
from core.errors import FieldErrors, nul_errors
from core.http.urls import url_problem

KINDS = ("webhook", "slack", "discord", "telegram", "email")
KIND_FIELDS: dict[str, tuple[str, ...]] = {
    "webhook": ("url", "signing_secret"),
    "slack": ("url",),
    "discord": ("url",),
    "telegram": ("chat_id", "token_secret"),
    "email": ("to", "smtp"),
}
SECRET_FIELDS = ("url", "signing_secret")  # sealed; never stored or shown in plaintext
SMTP_FIELDS = ("host", "port", "security", "username", "password_secret", "from")
SMTP_DEFAULT_PORTS = {"starttls": 587, "tls": 465, "none": 25}
REDACTED = "[redacted]"
MAX_NAME = 200
MAX_URL = 2048
MAX_RECIPIENTS = 20
MIN_WEBHOOK_SECRET, MAX_WEBHOOK_SECRET = 16, 256
CHAT_ID_PATTERN = r"-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31}"
# A chat id given as a JSON number: a signed 64-bit integer, as Telegram's Bot API says of
# its chat ids ("a signed 64-bit integer ... is safe for storing this identifier").
MIN_CHAT_ID, MAX_CHAT_ID = -(2**63), 2**63 - 1

_SECRET_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")
_CHAT_ID = re.compile(rf"^({CHAT_ID_PATTERN})$")
# Deliberately loose (RFC 5321 allows far more); rejects what is clearly not an address. White
# space spelled out (SPACE) so that the OpenAPI document's pattern reads as this one.
EMAIL_PATTERN = f"^[^@\\x00{SPACE}<>,;\"]{{1,64}}@[A-Za-z0-9.-]{{1,253}}\\.[A-Za-z0-9-]{{1,63}}$"
HOST_PATTERN = r"^[A-Za-z0-9.:\[\]-]{1,253}$"
SMTP_SECURITIES = tuple(SMTP_DEFAULT_PORTS)
MAX_SMTP_USERNAME = 256
_EMAIL = re.compile(EMAIL_PATTERN)
_HOST = re.compile(HOST_PATTERN)


def redact_url(url: str) -> str:
    """``https://hooks.slack.com/services/T/B/x`` -> ``https://hooks.slack.com/[redacted]``."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}/{REDACTED}"


def _check_url(url: Any, errors: FieldErrors) -> bool:
    """Add the problems of a channel URL to ``errors``; ``True`` when it is usable."""
    if not isinstance(url, str) or not url:
        errors.add("url", "is required: an absolute http:// or https:// URL")
        return False
    if len(url) > MAX_URL:
        errors.add("url", f"must be at most {MAX_URL} characters")
        return False
    problem = url_problem(url)
    if problem is None and any(c.isspace() or ord(c) < 32 for c in url):
        problem = "must not contain spaces or control characters"
    if problem:
        errors.add("url", problem)
    return problem is None


def _check_secret_name(value: Any, field: str, errors: FieldErrors) -> None:
    if not isinstance(value, str) or not _SECRET_NAME.fullmatch(value):
        errors.add(field, "must name a team secret: letters, digits, '_', '.', '-' (1-100)")


def _normalize_recipients(value: Any, errors: FieldErrors) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_RECIPIENTS:
        errors.add("to", f"is required: an address or a list of 1 to {MAX_RECIPIENTS}")
        return []
    for i, item in enumerate(items):
        if not isinstance(item, str) or not _EMAIL.fullmatch(item):
            errors.add(f"to.{i}", "is not an e-mail address")
    return list(dict.fromkeys(i for i in items if isinstance(i, str)))


def _normalize_smtp(value: Any, errors: FieldErrors) -> dict[str, Any] | None:
    """An e-mail channel's ``smtp`` object with its defaults filled (``security``
    ``starttls``, the security's port), or ``None`` when absent; its problems go to
    ``errors`` under ``smtp.<field>``."""
    if value is None:
        return None
    if not isinstance(value, dict):
        errors.add("smtp", "must be an object")
        return None
    for key in sorted(set(value) - set(SMTP_FIELDS)):
        errors.add(f"smtp.{key}", "is not a known field")
    out: dict[str, Any] = {k: value.get(k) for k in SMTP_FIELDS}
    if not isinstance(out["host"], str) or not _HOST.fullmatch(out["host"]):
        errors.add("smtp.host", "is required: a host name or address")
    out["security"] = _smtp_security(out["security"], errors)
    out["port"] = _smtp_port(out["port"], out["security"], errors)
    _check_smtp_login(out, errors)
    return out


def _smtp_security(security: Any, errors: FieldErrors) -> str:
    """``smtp.security``: one of :data:`SMTP_SECURITIES`, ``starttls`` when absent (or wrong,
    so that the port's default still reads)."""
    if security in (None, ""):
        return "starttls"
    if security not in SMTP_SECURITIES:
        errors.add("smtp.security", f"must be one of {', '.join(SMTP_SECURITIES)}")
        return "starttls"
    return str(security)


def _smtp_port(port: Any, security: str, errors: FieldErrors) -> Any:
    """``smtp.port``: 1 to 65535, the security's default when absent."""
    if port is None:
        port = SMTP_DEFAULT_PORTS[security]
    if isinstance(port, float) and port.is_integer():  # 587.0 is an integer, as JSON Schema
        port = int(port)
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        errors.add("smtp.port", "must be an integer between 1 and 65535")
    return port


def _check_smtp_login(smtp: dict[str, Any], errors: FieldErrors) -> None:
    """``smtp.username``, ``smtp.password_secret`` (a team secret's name) and ``smtp.from``,
    each optional."""
    username = smtp["username"]
    if username is not None and (not isinstance(username, str)
                                 or not 1 <= len(username) <= MAX_SMTP_USERNAME):
        errors.add("smtp.username", f"must be a string of 1 to {MAX_SMTP_USERNAME} characters")
    if smtp["password_secret"] is not None:
        _check_secret_name(smtp["password_secret"], "smtp.password_secret", errors)
    sender = smtp["from"]
    if sender is not None and (not isinstance(sender, str) or not _EMAIL.fullmatch(sender)):
        errors.add("smtp.from", "is not an e-mail address")


def normalize_channel(fields: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Validate a complete channel definition.

    Args:
        fields: ``name``, ``kind`` and the kind's fields (a ``None`` value counts as absent).

    Returns:
        ``(public, sealed)``: the fields that may be stored and shown (URLs redacted), and the
        secret fields to seal (``url``, ``signing_secret``).

    Raises:
        InvalidInput: listing every problem with its field.
    """
    errors = FieldErrors()
    errors.items += nul_errors(fields)  # sealed secrets too, as a job's signing secret
    errors.raise_if_any()
    fields = {k: v for k, v in fields.items() if v is not None}
    name: Any = fields.get("name")
    kind: Any = fields.get("kind")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        errors.add("name", f"is required: 1 to {MAX_NAME} characters")
    if kind not in KINDS:
        errors.add("kind", f"must be one of {', '.join(KINDS)}")
        errors.raise_if_any()
    allowed = KIND_FIELDS[kind]
    for key in sorted(set(fields) - {"name", "kind", *allowed}):
        errors.add(key, f"is not a field of {kind} channels")
    public: dict[str, Any] = {"name": name, "kind": kind}
    sealed: dict[str, str] = {}
    if "url" in allowed and _check_url(fields.get("url"), errors):
        sealed["url"] = fields["url"]
        public["url"] = redact_url(fields["url"])
    if kind == "webhook":
        _webhook(fields, public, sealed, errors)
    elif kind == "telegram":
        _telegram(fields, public, errors)
    elif kind == "email":
        public["to"] = _normalize_recipients(fields.get("to"), errors)
        public["smtp"] = _normalize_smtp(fields.get("smtp"), errors)
    errors.raise_if_any()
    return public, sealed


def _webhook(fields: dict[str, Any], public: dict[str, Any], sealed: dict[str, str],
             errors: FieldErrors) -> None:
    """A webhook's ``signing_secret``: sealed when given, always shown redacted."""
    signing = fields.get("signing_secret")
    if signing is not None and (not isinstance(signing, str)
                                or not MIN_WEBHOOK_SECRET <= len(signing)
                                <= MAX_WEBHOOK_SECRET):
        errors.add("signing_secret", f"must be a string of {MIN_WEBHOOK_SECRET} to "
                                     f"{MAX_WEBHOOK_SECRET} characters")
    elif signing is not None:
        sealed["signing_secret"] = signing
    public["signing_secret"] = REDACTED


def _telegram(fields: dict[str, Any], public: dict[str, Any], errors: FieldErrors) -> None:
    """A Telegram channel's ``chat_id`` (a number, within a signed 64-bit integer's range, or
    digits or ``@channelusername`` as text; kept as text) and
    ``token_secret`` (the name of a team secret)."""
    chat = fields.get("chat_id")
    if isinstance(chat, float) and chat.is_integer():  # an integer, as JSON Schema reads it
        chat = int(chat)
    if isinstance(chat, int) and not isinstance(chat, bool):
        chat = str(chat) if MIN_CHAT_ID <= chat <= MAX_CHAT_ID else None
    if not isinstance(chat, str) or not _CHAT_ID.fullmatch(chat):
        errors.add("chat_id", "is required: a numeric chat id or @channelusername")
    public["chat_id"] = chat
    _check_secret_name(fields.get("token_secret"), "token_secret", errors)
    public["token_secret"] = fields.get("token_secret")


def new_signing_secret() -> str:
    """A random webhook signing secret (``whsec_`` and 256 random bits, URL-safe base64)."""
    return "whsec_" + secrets.token_urlsafe(32)
