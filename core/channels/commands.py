"""Channel commands: decide the event, append it and write ``channels``, one transaction.

Each command (except create) locks the channel's row, decides with
:mod:`core.channels.decide` (validation by :mod:`core.channels.definition`), seals the secret
fields (:mod:`core.channels.sealing`) and appends the ``channel.*`` event at the expected
stream version, writing the row with it (:mod:`core.streams`, with :data:`CHANNEL`; the event
carries the redacted view, never a secret).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.channels.decide import (
    ChannelDecision,
    CreateChannel,
    DeleteChannel,
    UpdateChannel,
    decide_create,
    decide_delete,
    decide_update,
    refuse_foreign,
)
from core.channels.definition import new_signing_secret
from core.channels.sealing import Sealer, SealError, channel_aad, seal_channel, unseal_channel
from core.channels.state import ChannelState, evolve
from core.db import Connection, ConnectionPool, transaction
from core.events import Change, Head, append_at, to_json
from core.queries import Q
from core.streams import StreamKind, append, lock


async def _write(conn: Connection, before: ChannelState | None,
                 channel: ChannelState, now: datetime) -> ChannelState:
    """Write ``channels`` (:data:`core.streams.Write`): a deleted channel's row keeps its
    foreign keys and loses its sealed secrets (``channel_delete``)."""
    if channel.deleted_at is not None:
        await conn.execute(Q["channel_delete"], {"id": channel.id, "now": now})
        return channel
    # A taken name violates channels_team_name_key: core.db maps it to Conflict (409).
    await conn.execute(Q["channel_upsert"], {**channel.as_row(),
                                             "config": to_json(channel.config)})
    return channel


CHANNEL = StreamKind("channel", "channel", Q["channel_lock"], ChannelState.from_row, evolve,
                     _write)


def _sealed(sealer: Sealer, actor: Actor, channel_id: uuid.UUID,
            decision: ChannelDecision) -> Callable[[ChannelState], ChannelState]:
    """What the row holds that no event carries: the config (URLs redacted to scheme and
    host) and the secret fields sealed."""
    key_id, blob = seal_channel(sealer, actor.team_id, channel_id, decision.sealed)
    return lambda state: dataclasses.replace(state, config=decision.config, key_id=key_id,
                                             sealed=blob)


async def create_channel(
    pool: ConnectionPool, sealer: Sealer, actor: Actor, fields: dict[str, Any],
    now: datetime,
) -> tuple[uuid.UUID, str | None]:
    """Create a channel from ``fields`` (the body of ``POST /v1/channels``).

    Returns:
        ``(channel_id, signing_secret)``: the secret is returned only when it was generated
        here (a webhook without one), so the caller can show it once.

    Raises:
        InvalidInput: bad fields. Conflict: the name is taken. Unavailable: no secret key.
    """
    decision = decide_create(CreateChannel(fields))
    generated = None
    if decision.definition["kind"] == "webhook" and "signing_secret" not in decision.sealed:
        generated = decision.sealed["signing_secret"] = new_signing_secret()
    channel_id = uuid.uuid4()
    amend = _sealed(sealer, actor, channel_id, decision)
    async with transaction(pool) as conn:
        await append(conn, CHANNEL, actor, channel_id, None, decision.events, now, amend)
    return channel_id, generated


async def update_channel(
    pool: ConnectionPool, sealer: Sealer, actor: Actor, channel_id: uuid.UUID,
    fields: dict[str, Any], now: datetime, expected_version: int | None = None,
) -> None:
    """Partial update: given fields replace the stored ones; ``kind`` cannot change.

    Raises:
        NotFound: no such channel. InvalidInput: bad fields. Conflict: a kind change, a field
        of another kind than the channel's, or the name is taken. ConcurrencyConflict:
        ``expected_version`` is not current.
    """
    async with transaction(pool) as conn:
        before = await lock(conn, CHANNEL, actor, channel_id, expected_version)
        refuse_foreign(before, fields)  # before the secrets are unsealed, as a 409
        decision = decide_update(before, UpdateChannel(
            fields, unseal_channel(sealer, before.as_row())))
        if decision.events:
            await append(conn, CHANNEL, actor, channel_id, before, decision.events, now,
                         _sealed(sealer, actor, channel_id, decision))


async def _cancel_notifications(
    conn: Connection, channel_id: uuid.UUID, now: datetime
) -> int:
    """Cancel the channel's undelivered outbox rows (it is being deleted), each with its
    ``notification.cancelled`` event (:mod:`core.notifications.outbox`); returns how many."""
    cur = await conn.execute(Q["notification_cancel_for_channel"], {
        "channel_id": channel_id, "now": now})
    rows = await cur.fetchall()
    cancelled: list[Change] = [("notification.cancelled", {"reason": "channel deleted"})]
    await append_at(conn, [
        (Head.written("notification", row["id"], row["team_id"], row["version"], cancelled),
         cancelled)
        for row in rows], now, {"actor": "system"})
    return len(rows)


async def delete_channel(
    pool: ConnectionPool, actor: Actor, channel_id: uuid.UUID, now: datetime
) -> int:
    """Delete a channel: no new notifications go to it and its pending ones are cancelled.

    Jobs and monitors that list it keep the id; it is skipped when alerts are queued.

    Returns:
        How many pending notifications were cancelled.

    Raises:
        NotFound: no such channel.
    """
    async with transaction(pool) as conn:
        before = await lock(conn, CHANNEL, actor, channel_id)
        await append(conn, CHANNEL, actor, channel_id, before,
                     decide_delete(before, DeleteChannel()), now)
        return await _cancel_notifications(conn, channel_id, now)


async def reseal_channels(pool: ConnectionPool, sealer: Sealer, current_key_id: str,
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
