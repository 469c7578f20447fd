"""Notification channels of a team: validation, create/update/delete, reads.

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

URLs and signing secrets are sealed (:mod:`core.notifications.sealing`) in the ``sealed``
column; ``config`` keeps only what may be shown, with URLs redacted to scheme and host. The
``channel`` stream's events carry that redacted view, never the secrets.
"""

from __future__ import annotations

import json
import re
import secrets
import uuid
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg_pool import AsyncConnectionPool

from core.actor import Actor
from core.db import fetch_team_page, fetch_team_row, team_row, transaction
from core.errors import ConcurrencyConflict, FieldError, FieldErrors, InvalidInput
from core.events import append_events, stream_events, to_json
from core.notifications.sealing import Sealer, SealError, channel_aad
from core.queries import Q
from core.urls import url_problem

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

_SECRET_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")
_CHAT_ID = re.compile(rf"^({CHAT_ID_PATTERN})$")
# Deliberately loose (RFC 5321 allows far more); rejects what is clearly not an address.
_EMAIL = re.compile(r"^[^@\s<>,;\"]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z0-9-]{1,63}$")
_HOST = re.compile(r"^[A-Za-z0-9.:\[\]-]{1,253}$")


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
    if not isinstance(value, str) or not _SECRET_NAME.match(value):
        errors.add(field, "must name a team secret: letters, digits, '_', '.', '-' (1-100)")


def _normalize_recipients(value: Any, errors: FieldErrors) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_RECIPIENTS:
        errors.add("to", f"is required: an address or a list of 1 to {MAX_RECIPIENTS}")
        return []
    for i, item in enumerate(items):
        if not isinstance(item, str) or not _EMAIL.match(item):
            errors.add(f"to.{i}", "is not an e-mail address")
    return list(dict.fromkeys(items))


def _normalize_smtp(value: Any, errors: FieldErrors) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        errors.add("smtp", "must be an object")
        return None
    for key in sorted(set(value) - set(SMTP_FIELDS)):
        errors.add(f"smtp.{key}", "is not a known field")
    out = {k: value.get(k) for k in SMTP_FIELDS}
    if not isinstance(out["host"], str) or not _HOST.match(out["host"]):
        errors.add("smtp.host", "is required: a host name or address")
    out["security"] = out["security"] or "starttls"
    if out["security"] not in SMTP_DEFAULT_PORTS:
        errors.add("smtp.security", "must be one of starttls, tls, none")
        out["security"] = "starttls"
    port = out["port"] if out["port"] is not None else SMTP_DEFAULT_PORTS[out["security"]]
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        errors.add("smtp.port", "must be an integer between 1 and 65535")
    out["port"] = port
    if out["username"] is not None and (not isinstance(out["username"], str)
                                        or not 1 <= len(out["username"]) <= 256):
        errors.add("smtp.username", "must be a string of 1 to 256 characters")
    if out["password_secret"] is not None:
        _check_secret_name(out["password_secret"], "smtp.password_secret", errors)
    if out["from"] is not None and (not isinstance(out["from"], str)
                                    or not _EMAIL.match(out["from"])):
        errors.add("smtp.from", "is not an e-mail address")
    return out


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
    fields = {k: v for k, v in fields.items() if v is not None}
    name, kind = fields.get("name"), fields.get("kind")
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
        signing = fields.get("signing_secret")
        if signing is not None and (not isinstance(signing, str)
                                    or not MIN_WEBHOOK_SECRET <= len(signing)
                                    <= MAX_WEBHOOK_SECRET):
            errors.add("signing_secret", f"must be a string of {MIN_WEBHOOK_SECRET} to "
                                         f"{MAX_WEBHOOK_SECRET} characters")
        elif signing is not None:
            sealed["signing_secret"] = signing
        public["signing_secret"] = REDACTED
    elif kind == "telegram":
        chat = fields.get("chat_id")
        chat = str(chat) if isinstance(chat, int) and not isinstance(chat, bool) else chat
        if not isinstance(chat, str) or not _CHAT_ID.match(chat):
            errors.add("chat_id", "is required: a numeric chat id or @channelusername")
        public["chat_id"] = chat
        _check_secret_name(fields.get("token_secret"), "token_secret", errors)
        public["token_secret"] = fields.get("token_secret")
    elif kind == "email":
        public["to"] = _normalize_recipients(fields.get("to"), errors)
        public["smtp"] = _normalize_smtp(fields.get("smtp"), errors)
    errors.raise_if_any()
    return public, sealed


def new_signing_secret() -> str:
    """A random webhook signing secret (``whsec_`` and 256 random bits, URL-safe base64)."""
    return "whsec_" + secrets.token_urlsafe(32)


def _config(public: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in public.items() if k not in ("name", "kind")}


def _seal(sealer: Sealer, team_id: uuid.UUID, channel_id: uuid.UUID,
          values: dict[str, str]) -> tuple[str | None, bytes | None]:
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
    return json.loads(sealer.unseal(row["key_id"], bytes(row["sealed"]), aad))


async def _lock(conn: psycopg.AsyncConnection, actor: Actor,
                channel_id: uuid.UUID) -> dict[str, Any]:
    return await team_row(conn, Q["channel_lock"], "channel", channel_id, actor.team_id)


async def _write(conn: psycopg.AsyncConnection, row: dict[str, Any]) -> None:
    # A taken name violates channels_team_name_key: core.db maps it to Conflict (409).
    await conn.execute(Q["channel_upsert"], {**row, "config": to_json(row["config"])})


async def create_channel(
    pool: AsyncConnectionPool, sealer: Sealer, actor: Actor, fields: dict[str, Any],
    now: datetime,
) -> tuple[uuid.UUID, str | None]:
    """Create a channel from ``fields`` (the body of ``POST /v1/channels``).

    Returns:
        ``(channel_id, signing_secret)``: the secret is returned only when it was generated
        here (a webhook without one), so the caller can show it once.

    Raises:
        InvalidInput: bad fields. Conflict: the name is taken. Unavailable: no secret key.
    """
    public, sealed = normalize_channel(fields)
    generated = None
    if public["kind"] == "webhook" and "signing_secret" not in sealed:
        generated = sealed["signing_secret"] = new_signing_secret()
    channel_id = uuid.uuid4()
    key_id, blob = _seal(sealer, actor.team_id, channel_id, sealed)
    row = {"id": channel_id, "team_id": actor.team_id, "name": public["name"],
           "kind": public["kind"], "config": _config(public), "key_id": key_id,
           "sealed": blob, "version": 1, "created_at": now, "updated_at": now}
    async with transaction(pool) as conn:
        await _write(conn, row)
        await append_events(conn, stream_events(
            "channel", channel_id, actor.team_id, 0, now,
            [("channel.created", {"name": public["name"], "kind": public["kind"],
                                  "config": _config(public)})], actor.metadata()))
    return channel_id, generated


async def update_channel(
    pool: AsyncConnectionPool, sealer: Sealer, actor: Actor, channel_id: uuid.UUID,
    fields: dict[str, Any], now: datetime, expected_version: int | None = None,
) -> None:
    """Partial update: given fields replace the stored ones; ``kind`` cannot change.

    Raises:
        NotFound: no such channel. InvalidInput: bad fields or a kind change.
        ConcurrencyConflict: ``expected_version`` is not current. Conflict: the name is taken.
    """
    async with transaction(pool) as conn:
        before = await _lock(conn, actor, channel_id)
        if expected_version is not None and expected_version != before["version"]:
            raise ConcurrencyConflict(f"channel {channel_id} is at version "
                                      f"{before['version']}, not {expected_version}")
        if fields.get("kind", before["kind"]) != before["kind"]:
            raise InvalidInput("kind: cannot change; create a new channel instead",
                               [FieldError("kind", "cannot change")])
        current = {**before["config"], **unseal_channel(sealer, before),
                   "name": before["name"], "kind": before["kind"]}
        public, sealed = normalize_channel({**current, **fields})
        changes = {k: v for k, v in public.items() if before["config"].get(k, before.get(k)) != v}
        changes.update({k: REDACTED for k in SECRET_FIELDS if k in fields})
        if not changes:
            return
        key_id, blob = _seal(sealer, actor.team_id, channel_id, sealed)
        version = before["version"] + 1
        await _write(conn, {**before, "name": public["name"], "config": _config(public),
                            "key_id": key_id, "sealed": blob, "version": version,
                            "updated_at": now})
        await append_events(conn, stream_events(
            "channel", channel_id, actor.team_id, before["version"], now,
            [("channel.updated", {"changes": changes})], actor.metadata()))


async def delete_channel(
    pool: AsyncConnectionPool, actor: Actor, channel_id: uuid.UUID, now: datetime
) -> int:
    """Delete a channel: no new notifications go to it and its pending ones are cancelled.

    Jobs and monitors that list it keep the id; it is skipped when alerts are queued.

    Returns:
        How many pending notifications were cancelled.

    Raises:
        NotFound: no such channel.
    """
    from core.notifications.outbox import cancel_for_channel

    async with transaction(pool) as conn:
        before = await _lock(conn, actor, channel_id)
        await conn.execute(Q["channel_delete"], {"id": channel_id, "now": now})
        await append_events(conn, stream_events(
            "channel", channel_id, actor.team_id, before["version"], now,
            [("channel.deleted", {})], actor.metadata()))
        return await cancel_for_channel(conn, channel_id, now)


async def get_channel(
    pool: AsyncConnectionPool, actor: Actor, channel_id: uuid.UUID
) -> dict[str, Any]:
    """One live channel row (sealed columns included; callers show :func:`channel_view`).

    Raises:
        NotFound: no such channel for this team, or it was deleted.
    """
    return await fetch_team_row(pool, Q["channel_get"], "channel", channel_id, actor.team_id)


async def list_channels(
    pool: AsyncConnectionPool, actor: Actor, *, limit: int,
    after: tuple[datetime, uuid.UUID] | None,
) -> list[dict[str, Any]]:
    """A page of the team's live channels in creation order, after the keyset ``after``."""
    return await fetch_team_page(pool, Q["channel_list"], actor.team_id, limit=limit, after=after)


def channel_view(row: dict[str, Any]) -> dict[str, Any]:
    """The shape shown by the API: id, name, kind, the redacted config, dates, version."""
    return {"id": row["id"], "name": row["name"], "kind": row["kind"], **row["config"],
            "version": row["version"], "created_at": row["created_at"],
            "updated_at": row["updated_at"]}


async def missing_channels(
    conn: psycopg.AsyncConnection, team_id: uuid.UUID, channel_ids: list[uuid.UUID]
) -> list[uuid.UUID]:
    """Those of ``channel_ids`` that are not live channels of ``team_id``."""
    if not channel_ids:
        return []
    cur = await conn.execute(Q["channel_existing"], {"team_id": team_id, "ids": channel_ids})
    found = {row["id"] for row in await cur.fetchall()}
    return [c for c in channel_ids if c not in found]


async def check_new_channels(
    conn: psycopg.AsyncConnection, team_id: uuid.UUID, channels: list[uuid.UUID],
    already: list[uuid.UUID],
) -> None:
    """Channels newly listed on a job or monitor must be live channels of its team. Ids kept
    from before are not checked again, so deleting a channel never makes its subscribers
    uneditable.

    Raises:
        InvalidInput: naming each unknown or foreign channel id (422).
    """
    added = [c for c in channels if c not in already]
    missing = set(await missing_channels(conn, team_id, added))
    if missing:
        errors = [FieldError(f"channels.{i}", f"no channel {c} in this team")
                  for i, c in enumerate(channels) if c in missing]
        raise InvalidInput("; ".join(f"{e.field}: {e.message}" for e in errors), errors)


async def reseal_channels(pool: AsyncConnectionPool, sealer: Sealer, current_key_id: str,
                          batch: int = 500) -> tuple[int, int]:
    """Re-encrypt every channel's secrets under the current key (``secrets rotate-key``).

    Returns:
        ``(resealed, unreadable)``: channels whose key is not configured are counted and left
        as they are.
    """
    done = failed = 0
    after = uuid.UUID(int=0)
    while True:
        async with transaction(pool) as conn:
            cur = await conn.execute(Q["channel_rotate_batch"], {
                "current": current_key_id, "after": after, "limit": batch})
            rows = await cur.fetchall()
            if not rows:
                return done, failed
            after = rows[-1]["id"]
            resealed = []
            for row in rows:
                aad = channel_aad(row["team_id"].bytes, row["id"].bytes)
                try:
                    plain = sealer.unseal(row["key_id"], row["sealed"], aad)
                except SealError:
                    failed += 1
                    continue
                resealed.append((row["id"], *sealer.seal(plain, aad)))
            if resealed:
                await conn.execute(Q["channel_reseal_many"], {
                    "ids": [r[0] for r in resealed], "key_ids": [r[1] for r in resealed],
                    "sealed": [r[2] for r in resealed]})
            done += len(resealed)
