"""Team secrets: write-only encrypted values referenced as ``${secrets.NAME}`` (docs/api.md).

- Values are sealed with the key ring (:mod:`core.crypto`, AES-256-GCM, team id and name bound
  as associated data) and only ever decrypted by the executor just before sending.
- The ``secrets`` table is the only copy of the values. Each change appends an event on the
  secret's own stream (``secret.set`` / ``secret.deleted``) that carries the name only, so the
  audit trail never holds a value or a ciphertext.
- Job signing secrets live in ``job_signing_secrets`` (one per job, written by the job commands
  through :func:`set_signing_secret`).
- Claims attach the sealed values a job needs to its dispatch (:func:`fetch_sealed`: one query
  per claim batch, and only when a claimed job references a secret or signs), so sending needs
  no database round trip.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.crypto import KeyRing, Sealed, SecretUnavailable, secret_aad, signing_aad, token_aad
from core.db import Connection, ConnectionPool, one_row, transaction
from core.errors import NotFound, invalid
from core.events import Change, Head, append_at
from core.queries import Q

NAME_PATTERN = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}"
NAME = re.compile(rf"^{NAME_PATTERN}$")
NAME_WORDS = ("must be 1 to 100 characters of A-Z, a-z, 0-9, _, . and -, starting with a "
              "letter, a digit or _")
"""What :data:`NAME_PATTERN` means (a body's name and the path's, api/errors.py)."""
PLACEHOLDER = re.compile(r"\$\{secrets\.(" + NAME_PATTERN + r")\}")
MARKER = "${secrets."
MAX_VALUE_BYTES = 64 * 1024
MIN_SIGNING_SECRET = 16
MAX_SIGNING_SECRET = 1024
ROTATE_BATCH = 500


# -- placeholders -------------------------------------------------------------------------------
def request_texts(request: Mapping[str, Any]) -> list[str]:
    """The parts of a job's request where placeholders may appear: URL, header values, body."""
    headers = request.get("headers") or {}
    return [request.get("url") or "", *headers.values(), request.get("body") or ""]


def placeholder_names(request: Mapping[str, Any]) -> list[str]:
    """The secret names a request references, sorted and unique (``[]`` for most jobs)."""
    names: set[str] = set()
    for text in request_texts(request):
        if MARKER in text:
            names.update(PLACEHOLDER.findall(text))
    return sorted(names)


def has_malformed_placeholder(text: str) -> bool:
    """True when ``${secrets.`` starts something that is not a valid placeholder."""
    return MARKER in PLACEHOLDER.sub("", text)


def substitute(text: str, values: Mapping[str, str]) -> str:
    """Replace every placeholder in ``text`` by its value (all names must be in ``values``)."""
    if MARKER not in text:
        return text
    return PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def check_name(name: str) -> str:
    """Validate a secret name.

    Raises:
        InvalidInput: not 1 to 100 of ``A-Z a-z 0-9 _ . -``, starting with a letter, digit or ``_``.
    """
    if not NAME.fullmatch(name):
        raise invalid("name", NAME_WORDS)
    return name


def check_value(value: Any) -> bytes:
    """Validate a secret value and return its UTF-8 bytes (the value is never echoed).

    Raises:
        InvalidInput: not a non-empty string of at most 64 KiB.
    """
    if not isinstance(value, str) or not value:
        raise invalid("value", "must be a non-empty string")
    raw = value.encode()
    if len(raw) > MAX_VALUE_BYTES:
        raise invalid("value", f"must be at most {MAX_VALUE_BYTES} bytes")
    return raw


# -- the secrets API ----------------------------------------------------------------------------
async def put_secret(
    pool: ConnectionPool, keyring: KeyRing, actor: Actor, name: str, value: Any,
    now: datetime,
) -> tuple[dict[str, Any], bool]:
    """Create or replace a team secret.

    Returns:
        ``(record, created)``: the stored record (``name``, ``created_at``, ``updated_at``; never
        the value) and whether the name was new.

    Raises:
        InvalidInput: bad name or value.
        Unavailable: no secret key is configured.
    """
    check_name(name)
    sealed = keyring.seal(check_value(value), secret_aad(actor.team_id.bytes, name))
    async with transaction(pool) as conn:
        cur = await conn.execute(Q["secret_upsert"], {
            "id": uuid.uuid4(), "team_id": actor.team_id, "name": name, "key_id": sealed.key_id,
            "nonce": sealed.nonce, "ciphertext": sealed.ciphertext, "now": now})
        row = one_row(await cur.fetchone(), "secret_upsert")
        created = row["version"] == 1
        changes: list[Change] = [("secret.set", {"name": name, "created": created})]
        await append_at(conn, [(Head.written("secret", row["id"], actor.team_id, row["version"],
                                             changes), changes)], now, actor.metadata())
    return row, created


async def list_secrets(
    pool: ConnectionPool, actor: Actor, *, limit: int, after: str | None
) -> list[dict[str, Any]]:
    """A page of the team's secret names and dates, by name, after the keyset ``after``."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["secret_list"], {
            "team_id": actor.team_id, "limit": limit, "after": after})
        return await cur.fetchall()


async def delete_secret(pool: ConnectionPool, actor: Actor, name: str, now: datetime) -> None:
    """Delete a team secret; jobs that still reference it fail with error class ``secret``.

    Raises:
        NotFound: no such secret for this team.
    """
    async with transaction(pool) as conn:
        cur = await conn.execute(Q["secret_delete"], {"team_id": actor.team_id, "name": name})
        row = await cur.fetchone()
        if row is None:
            raise NotFound(f"secret {name} not found")
        await append_at(conn, [(Head("secret", row["id"], actor.team_id, row["version"]),
                                [("secret.deleted", {"name": name})])], now, actor.metadata())


# -- job signing secrets ------------------------------------------------------------------------
def check_signing_secret(value: Any) -> str | None:
    """The problem with a proposed signing secret, or ``None`` when it is acceptable."""
    if not isinstance(value, str):
        return "must be a string"
    if not MIN_SIGNING_SECRET <= len(value) <= MAX_SIGNING_SECRET:
        return f"must be {MIN_SIGNING_SECRET} to {MAX_SIGNING_SECRET} characters"
    return None


async def set_signing_secret(
    conn: Connection, keyring: KeyRing, team_id: uuid.UUID, job_id: uuid.UUID,
    value: str | None, now: datetime,
) -> None:
    """Store (or with ``None`` remove) a job's signing secret, in the caller's transaction.

    Raises:
        Unavailable: a value is given and no secret key is configured.
    """
    if value is None:
        await conn.execute(Q["job_signing_secret_delete"], {"job_id": job_id})
        return
    sealed = keyring.seal(value.encode(), signing_aad(team_id.bytes, job_id.bytes))
    await conn.execute(Q["job_signing_secret_upsert"], {
        "job_id": job_id, "team_id": team_id, "key_id": sealed.key_id, "nonce": sealed.nonce,
        "ciphertext": sealed.ciphertext, "now": now})


# -- claims -------------------------------------------------------------------------------------
def _sealed(row: Mapping[str, Any]) -> Sealed:
    return Sealed(row["key_id"], bytes(row["nonce"]), bytes(row["ciphertext"]))


async def fetch_sealed(
    conn: Connection, wanted: Iterable[tuple[uuid.UUID, str]],
    signing_jobs: Iterable[uuid.UUID],
) -> tuple[dict[tuple[uuid.UUID, str], Sealed], dict[uuid.UUID, Sealed]]:
    """The sealed secrets ``(team_id, name)`` and signing secrets (by job id) that exist.

    Missing ones are simply absent: the executor then fails that attempt with class ``secret``.
    """
    pairs = sorted(set(wanted))
    jobs = sorted(set(signing_jobs))
    secrets: dict[tuple[uuid.UUID, str], Sealed] = {}
    signing: dict[uuid.UUID, Sealed] = {}
    if pairs:
        cur = await conn.execute(Q["secret_fetch_sealed"], {
            "team_ids": [p[0] for p in pairs], "names": [p[1] for p in pairs]})
        secrets = {(r["team_id"], r["name"]): _sealed(r) for r in await cur.fetchall()}
    if jobs:
        cur = await conn.execute(Q["job_signing_secret_fetch_many"], {"job_ids": jobs})
        signing = {r["job_id"]: _sealed(r) for r in await cur.fetchall()}
    return secrets, signing


# -- rotation -----------------------------------------------------------------------------------
async def _reseal_table(
    pool: ConnectionPool, keyring: KeyRing, select: str, update: str, key: str,
    aad: Any,
) -> tuple[int, int]:
    """Re-encrypt, in batches of :data:`ROTATE_BATCH`, every row of one table whose key is
    not the current one (``select`` and ``update`` are the table's statements); returns
    ``(resealed, unreadable)``."""
    done = failed = 0
    after = uuid.UUID(int=0)
    while True:
        async with transaction(pool) as conn:
            cur = await conn.execute(select, {
                "current": keyring.current_id, "after": after, "limit": ROTATE_BATCH})
            rows = await cur.fetchall()
            if not rows:
                return done, failed
            after = rows[-1][key]
            resealed = []
            for row in rows:
                try:
                    plain = keyring.open(_sealed(row), aad(row))
                except SecretUnavailable:
                    failed += 1
                    continue
                resealed.append((row[key], keyring.seal(plain, aad(row))))
            if resealed:
                await conn.execute(update, {
                    "ids": [i for i, _ in resealed],
                    "key_ids": [s.key_id for _, s in resealed],
                    "nonces": [s.nonce for _, s in resealed],
                    "ciphertexts": [s.ciphertext for _, s in resealed]})
            done += len(resealed)


async def rotate_key(pool: ConnectionPool, keyring: KeyRing) -> dict[str, Any]:
    """Re-encrypt every secret, signing secret and kept ping token under the current key.

    Safe while the system runs: each batch locks its rows; a concurrent ``PUT`` writes under the
    current key anyway. Values whose key is not configured are counted, not changed.

    Returns:
        ``{"secrets", "signing_secrets", "ping_tokens", "unreadable",
        "key_usage": {key_id: rows}}``.

    Raises:
        Unavailable: no secret key is configured.
    """
    if not keyring.enabled:
        keyring.seal(b"", b"")  # raises Unavailable with the standard message
    secrets_done, secrets_failed = await _reseal_table(
        pool, keyring, Q["secret_rotate_batch"], Q["secret_reseal_many"], "id",
        lambda r: secret_aad(r["team_id"].bytes, r["name"]))
    signing_done, signing_failed = await _reseal_table(
        pool, keyring, Q["job_signing_secret_rotate_batch"], Q["job_signing_secret_reseal_many"],
        "job_id", lambda r: signing_aad(r["team_id"].bytes, r["job_id"].bytes))
    tokens_done, tokens_failed = await _reseal_table(
        pool, keyring, Q["monitor_ping_token_rotate_batch"], Q["monitor_ping_token_reseal_many"],
        "monitor_id", lambda r: token_aad(r["team_id"], r["monitor_id"]))
    async with pool.connection() as conn:
        cur = await conn.execute(Q["secret_key_usage"])
        usage = {r["key_id"]: r["n"] for r in await cur.fetchall()}
    return {"secrets": secrets_done, "signing_secrets": signing_done,
            "ping_tokens": tokens_done,
            "unreadable": secrets_failed + signing_failed + tokens_failed, "key_usage": usage}
