"""Channel commands: decide the event, append it and write ``channels``, one transaction.

Each command (except create) locks the channel's row, validates the request with
:mod:`core.channels.definition`, seals the secret fields (:mod:`core.channels.sealing`), writes
the row with its new ``version`` and appends the ``channel.*`` event at the expected stream
version (the event carries the redacted view, never a secret).
"""

from __future__ import annotations

import dataclasses
import uuid
from datetime import datetime
from typing import Any

import psycopg
from psycopg_pool import AsyncConnectionPool

from core.actor import Actor
from core.channels.definition import (
    KIND_FIELDS,
    REDACTED,
    SECRET_FIELDS,
    new_signing_secret,
    normalize_channel,
)
from core.channels.sealing import Sealer, SealError, channel_aad, seal_channel, unseal_channel
from core.channels.state import ChannelState
from core.db import team_row, transaction
from core.errors import ConcurrencyConflict, Conflict, FieldError
from core.events import append_events, stream_events, to_json
from core.queries import Q


def _config(public: dict[str, Any]) -> dict[str, Any]:
    """The ``config`` column: the public fields without ``name`` and ``kind``."""
    return {k: v for k, v in public.items() if k not in ("name", "kind")}


async def _lock(conn: psycopg.AsyncConnection, actor: Actor,
                channel_id: uuid.UUID) -> ChannelState:
    return ChannelState.from_row(
        await team_row(conn, Q["channel_lock"], "channel", channel_id, actor.team_id))


async def _write(conn: psycopg.AsyncConnection, channel: ChannelState) -> None:
    # A taken name violates channels_team_name_key: core.db maps it to Conflict (409).
    await conn.execute(Q["channel_upsert"], {**channel.as_row(),
                                             "config": to_json(channel.config)})


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
    key_id, blob = seal_channel(sealer, actor.team_id, channel_id, sealed)
    channel = ChannelState(id=channel_id, team_id=actor.team_id, name=public["name"],
                           kind=public["kind"], config=_config(public), key_id=key_id,
                           sealed=blob, version=1, created_at=now, updated_at=now)
    async with transaction(pool) as conn:
        await _write(conn, channel)
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
        NotFound: no such channel. InvalidInput: bad fields. Conflict: a kind change, a field
        of another kind than the channel's, or the name is taken. ConcurrencyConflict:
        ``expected_version`` is not current.
    """
    async with transaction(pool) as conn:
        before = await _lock(conn, actor, channel_id)
        if expected_version is not None and expected_version != before.version:
            raise ConcurrencyConflict(f"channel {channel_id} is at version "
                                      f"{before.version}, not {expected_version}")
        # What the stored channel's kind forbids is a conflict with its state (409), not a
        # bad body: the same body is right for a channel of another kind.
        if fields.get("kind", before.kind) != before.kind:
            raise Conflict("kind: cannot change; create a new channel instead",
                           [FieldError("kind", "cannot change")])
        foreign = sorted(k for k, v in fields.items() if v is not None
                         and k not in ("name", "kind", *KIND_FIELDS[before.kind]))
        if foreign:
            raise Conflict(f"{', '.join(foreign)}: not a field of {before.kind} channels",
                           [FieldError(k, f"is not a field of {before.kind} channels")
                            for k in foreign])
        current = {**before.config, **unseal_channel(sealer, before.as_row()),
                   "name": before.name, "kind": before.kind}
        public, sealed = normalize_channel({**current, **fields})
        changes = {k: v for k, v in public.items()
                   if before.config.get(k, getattr(before, k, None)) != v}
        changes.update({k: REDACTED for k in SECRET_FIELDS if k in fields})
        if not changes:
            return
        key_id, blob = seal_channel(sealer, actor.team_id, channel_id, sealed)
        await _write(conn, dataclasses.replace(
            before, name=public["name"], config=_config(public), key_id=key_id, sealed=blob,
            version=before.version + 1, updated_at=now))
        await append_events(conn, stream_events(
            "channel", channel_id, actor.team_id, before.version, now,
            [("channel.updated", {"changes": changes})], actor.metadata()))


async def _cancel_notifications(
    conn: psycopg.AsyncConnection, channel_id: uuid.UUID, now: datetime
) -> int:
    """Cancel the channel's undelivered outbox rows (it is being deleted), each with its
    ``notification.cancelled`` event (:mod:`core.notifications.outbox`); returns how many."""
    cur = await conn.execute(Q["notification_cancel_for_channel"], {
        "channel_id": channel_id, "now": now})
    rows = await cur.fetchall()
    await append_events(conn, [
        event
        for row in rows
        for event in stream_events("notification", row["id"], row["team_id"],
                                   row["version"] - 1, now,
                                   [("notification.cancelled", {"reason": "channel deleted"})],
                                   {"actor": "system"})
    ])
    return len(rows)


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
    async with transaction(pool) as conn:
        before = await _lock(conn, actor, channel_id)
        await conn.execute(Q["channel_delete"], {"id": channel_id, "now": now})
        await append_events(conn, stream_events(
            "channel", channel_id, actor.team_id, before.version, now,
            [("channel.deleted", {})], actor.metadata()))
        return await _cancel_notifications(conn, channel_id, now)


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
