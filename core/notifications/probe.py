"""``POST /v1/channels/{id}/test``: send a test message now and report the provider's answer.

The test is sent directly (not through the outbox): the caller waits for the answer, and a
failed test is not retried. It appends a ``channel.tested`` event with the outcome (never the
channel's secrets).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.channels.commands import CHANNEL
from core.channels.queries import get_channel
from core.channels.sealing import Sealer, SealError, unseal_channel
from core.db import ConnectionPool, transaction
from core.errors import NotFound
from core.notifications.delivery import Delivery, DeliveryResult, Target
from core.notifications.lookup import SecretLookup
from core.notifications.messages import test_message
from core.notifications.notifier import team_secret_names
from core.streams import append, lock


async def send_test(
    pool: ConnectionPool, sealer: Sealer, secrets: SecretLookup, delivery: Delivery,
    actor: Actor, channel_id: uuid.UUID, now: datetime,
) -> dict[str, Any]:
    """Send the test message to one of the team's channels.

    Returns:
        ``{"ok", "status", "answer", "error_class", "error", "duration_ms"}``: ``status`` is the
        provider's HTTP status (or SMTP code), ``answer`` its response body (truncated).

    Raises:
        NotFound: no such channel for this team.
    """
    row = await get_channel(pool, actor, channel_id)
    result: DeliveryResult
    try:
        sealed = unseal_channel(sealer, row)
    except SealError as exc:
        result = DeliveryResult(False, error_class="secret",
                                error=f"the channel's secrets cannot be opened: {exc}")
    else:
        async with pool.connection() as conn:
            names = team_secret_names(row["kind"], row["config"])
            values = {name: await secrets(conn, actor.team_id, name) for name in names}
        target = Target(channel_id, actor.team_id, row["name"], row["kind"], row["config"],
                        sealed, values)
        result = await delivery.send(target, test_message(channel_id, row["name"], now),
                                     uuid.uuid4())
    outcome = {"ok": result.ok, "status": result.status, "answer": result.answer,
               "error_class": result.error_class, "error": result.error,
               "duration_ms": result.duration_ms}
    async with transaction(pool) as conn:
        try:
            before = await lock(conn, CHANNEL, actor, channel_id)
        except NotFound:  # deleted meanwhile: nothing to record on it
            return outcome
        await append(conn, CHANNEL, actor, channel_id, before, [
            ("channel.tested", {k: v for k, v in outcome.items() if k != "answer"})], now)
    return outcome
