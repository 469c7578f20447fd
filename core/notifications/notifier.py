"""The notifier: claims outbox rows, delivers them, records ``notification.sent``/``.failed``.

Shape of the worker (River's maintenance services): :meth:`Notifier.run_once` claims batches with
``FOR UPDATE SKIP LOCKED`` under a lease, sends outside any transaction, and records the results in
one transaction with a compare-and-set on the lease token; the base's ``run``
(:mod:`core.services.base`) repeats it and otherwise sleeps until :meth:`Notifier.next_deadline`
(the next pending row or lease expiry), woken early by ``NOTIFY cronledger_notifications``.

Delivery is at least once: a notifier killed between claim and record leaves the row
``sending`` with a lease; when the lease expires another notifier claims it again (same
notification id, so webhook receivers can deduplicate on ``Idempotency-Key`` and mail readers
on ``Message-ID``). Failed attempts are retried with exponential backoff and full jitter
(``CRONLEDGER_NOTIFY_RETRY_DELAY`` doubling up to ``CRONLEDGER_NOTIFY_MAX_RETRY_DELAY``,
``Retry-After`` honoured on 429/503) until ``max_attempts``; then the row stays ``failed``,
visible in ``GET /v1/notifications?status=failed``. Permanent errors (see
:mod:`core.notifications.delivery`) fail at once.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import psycopg

from core.backoff import retry_delay
from core.channels.sealing import Sealer, SealError, unseal_channel
from core.clock import Clock, Instant, read_now
from core.config import Settings
from core.db import Connection, ConnectionPool, transaction
from core.events import Head, append_at
from core.notifications.delivery import Delivery, DeliveryResult, Target
from core.notifications.lookup import SecretLookup
from core.notifications.outbox import NOTIFY_CHANNEL
from core.queries import Q
from core.reasons import reason_of
from core.rows import field_values
from core.services.base import Service

log = logging.getLogger("cronledger.notifier")


@dataclass
class Claimed:
    """One claimed outbox row: what to send, where, and the lease that proves ownership."""

    id: uuid.UUID
    team_id: uuid.UUID
    attempt: int
    max_attempts: int
    lease_token: uuid.UUID
    message: dict[str, Any]
    target: Target | None  # None: the row cannot be sent (see ``problem``)
    problem: DeliveryResult | None = None
    cancelled: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimRow:
    """A row of ``notification_claim`` (core/sql/notifications.sql), read once where the claim
    returns it (:meth:`from_row`): the outbox row under its new lease and its channel
    (``channel_name``, ``kind``, ``config``, the sealed secrets ``key_id`` and ``sealed``,
    ``deleted_at``: ``None`` unless the channel was deleted)."""

    id: uuid.UUID
    team_id: uuid.UUID
    channel_id: uuid.UUID
    attempt: int
    max_attempts: int
    lease_token: uuid.UUID
    message: dict[str, Any]
    channel_name: str
    kind: str
    config: dict[str, Any]
    key_id: str | None
    sealed: bytes | None
    deleted_at: datetime | None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ClaimRow:
        """The claimed row in one ``notification_claim`` row (its other columns ignored)."""
        return cls(**field_values(cls, row))

    def claimed(self, problem: DeliveryResult | None = None) -> Claimed:
        """Its :class:`Claimed`, without a target yet."""
        return Claimed(self.id, self.team_id, self.attempt, self.max_attempts,
                       self.lease_token, self.message, None, problem)

    def sealed_row(self) -> dict[str, Any]:
        """What :func:`core.channels.sealing.unseal_channel` reads of the channel."""
        return {"id": self.channel_id, "team_id": self.team_id, "key_id": self.key_id,
                "sealed": self.sealed}


@dataclass(frozen=True, slots=True, kw_only=True)
class Finished:
    """A row of ``notification_finish_many`` (core/sql/notifications.sql): an outcome
    recorded under its lease, the row's new stream ``version``."""

    id: uuid.UUID
    team_id: uuid.UUID
    version: int

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Finished:
        """The recorded outcome in one ``notification_finish_many`` row."""
        return cls(id=row["id"], team_id=row["team_id"], version=row["version"])


def team_secret_names(kind: str, config: dict[str, Any]) -> list[str]:
    """The team secrets a channel needs at send time (bot token, SMTP password)."""
    if kind == "telegram":
        return [config["token_secret"]]
    smtp = config.get("smtp") or {}
    return [smtp["password_secret"]] if kind == "email" and smtp.get("password_secret") else []


class Notifier(Service):
    """Delivers the outbox for one process; a :class:`core.services.base.Service` (loop, wake-up,
    stop and error policy in the base). A batch in flight at stop is finished, not abandoned
    (sends are bounded by ``CRONLEDGER_NOTIFY_TIMEOUT``).

    Args:
        pool: database pool.
        dsn: for the dedicated LISTEN connection (``None``: no LISTEN, poll only).
        settings: retry policy, timeouts, batch size, worker id.
        delivery: renders and sends.
        sealer: opens channel secrets.
        secrets: looks up team secrets (bot tokens, SMTP passwords).
        clock: the injected clock.
        rng: jitter source for retry delays.
    """

    name = "notifier"
    channel = NOTIFY_CHANNEL

    def __init__(self, pool: ConnectionPool, dsn: str | None, settings: Settings,
                 delivery: Delivery, sealer: Sealer, secrets: SecretLookup, clock: Clock,
                 rng: random.Random | None = None) -> None:
        super().__init__(clock, dsn)
        self.pool, self.settings = pool, settings
        self.delivery, self.sealer, self.secrets = delivery, sealer, secrets
        self.rng = rng or random.Random()
        self.limit = asyncio.Semaphore(min(settings.max_concurrency, 50))

    @property
    def retry_policy(self) -> dict[str, Any]:
        s = self.settings
        return {"backoff": "exponential", "delay_seconds": s.notify_retry_delay_seconds,
                "max_delay_seconds": s.notify_max_retry_delay_seconds}

    # -- claim ----------------------------------------------------------------------------------
    async def _target(self, conn: Connection, row: ClaimRow) -> Claimed:
        """:meth:`_build_target`, isolated per row: a row that raises while its target is built
        (a poison channel configuration) fails permanently with error class ``internal``."""
        try:
            return await self._build_target(conn, row)
        except psycopg.Error:
            raise  # the claim transaction is gone: the whole batch is retried
        except Exception as exc:  # noqa: BLE001 - one bad row must not block the outbox
            log.error("notification %s: its channel cannot be used: %r", row.id, exc)
            return row.claimed(DeliveryResult(
                False, error_class="internal", permanent=True,
                error=f"the notification cannot be built: {reason_of(exc)}"))

    async def _build_target(self, conn: Connection,
                            row: ClaimRow) -> Claimed:
        claimed = row.claimed()
        if row.deleted_at is not None:
            claimed.cancelled = True
            return claimed
        try:
            sealed = unseal_channel(self.sealer, row.sealed_row())
        except SealError as exc:
            claimed.problem = DeliveryResult(False, error_class="secret", permanent=True,
                                             error=f"the channel's secrets cannot be opened: "
                                                   f"{exc}")
            return claimed
        team_secrets: dict[str, str | None] = {}
        for name in team_secret_names(row.kind, row.config):
            try:
                team_secrets[name] = await self.secrets(conn, row.team_id, name)
            except Exception as exc:  # noqa: BLE001 - a store failure fails this row only
                claimed.problem = DeliveryResult(False, error_class="secret", error=(
                    f"the team secret {name!r} cannot be read: {exc}"))
                return claimed
        claimed.target = Target(row.channel_id, row.team_id, row.channel_name, row.kind,
                                row.config, sealed, team_secrets)
        return claimed

    async def claim(self, now: Instant, limit: int) -> list[Claimed]:
        """Claim up to ``limit`` deliverable rows under a lease (one short transaction).

        ``now`` is the claim instant (UTC), or the clock to read it from once the connection is
        obtained (:func:`core.clock.read_now`), so a wait for the pool never shortens the lease.

        The lease lasts the send timeout plus ``CRONLEDGER_LEASE_MARGIN`` (as for runs).
        """
        lease = self.settings.notify_timeout_seconds + self.settings.lease_margin_seconds
        async with transaction(self.pool) as conn:
            now = read_now(now)
            cur = await conn.execute(Q["notification_claim"], {
                "now": now, "limit": limit, "lease_seconds": lease,
                "worker_id": self.settings.worker_id})
            return [await self._target(conn, ClaimRow.from_row(row))
                    for row in await cur.fetchall()]

    # -- send -----------------------------------------------------------------------------------
    async def _deliver(self, claimed: Claimed) -> DeliveryResult | None:
        if claimed.cancelled:
            return None
        if claimed.target is None:
            assert claimed.problem is not None
            return claimed.problem
        async with self.limit:
            try:
                return await self.delivery.send(claimed.target, claimed.message, claimed.id)
            except Exception as exc:  # noqa: BLE001 - one row must not lose the batch's results
                log.error("notification %s: sending raised %r", claimed.id, exc)
                return DeliveryResult(False, error_class="internal", permanent=True,
                                      error=f"the notification cannot be sent: "
                                            f"{reason_of(exc)}")

    # -- record ---------------------------------------------------------------------------------
    def _outcome(self, claimed: Claimed, result: DeliveryResult | None,
                 now: datetime) -> tuple[str, datetime | None]:
        if result is None:
            return "cancelled", None
        if result.ok:
            return "sent", None
        if result.permanent or claimed.attempt >= claimed.max_attempts:
            return "failed", None
        delay = retry_delay(self.retry_policy, claimed.attempt, result.status,
                            result.retry_after, now, self.rng)
        return "pending", now + timedelta(seconds=delay)

    @staticmethod
    def _event(claimed: Claimed, result: DeliveryResult | None, status: str,
               available_at: datetime | None) -> tuple[str, dict[str, Any]]:
        if result is None:
            return "notification.cancelled", {"reason": "channel deleted"}
        data: dict[str, Any] = {"attempt": claimed.attempt, "response_status": result.status,
                                "duration_ms": result.duration_ms}
        if status == "sent":
            return "notification.sent", data
        return "notification.failed", {
            **data, "error_class": result.error_class, "error": result.error,
            "final": status == "failed", "retry_at": available_at}

    async def record(self, done: list[tuple[Claimed, DeliveryResult | None]],
                     now: Instant) -> int:
        """Record delivery outcomes in one transaction; returns how many leases still held.

        ``now`` (UTC, or the clock, read once the connection is obtained) dates the events and
        the retries."""
        if not done:
            return 0
        async with transaction(self.pool) as conn:
            now = read_now(now)
            outcomes = [self._outcome(c, r, now) for c, r in done]
            cur = await conn.execute(Q["notification_finish_many"], {
                "now": now,
                "ids": [c.id for c, _ in done],
                "lease_tokens": [c.lease_token for c, _ in done],
                "statuses": [status for status, _ in outcomes],
                "available_at": [at for _, at in outcomes],
                "error_class": [r.error_class if r else None for _, r in done],
                "error": [(r.error if r else "the channel was deleted") for _, r in done],
                "response_status": [r.status if r else None for _, r in done],
                "answer": [r.answer if r else None for _, r in done],
            })
            accepted = {f.id: f for f in map(Finished.from_row, await cur.fetchall())}
            await append_at(conn, [
                (Head.written("notification", claimed.id, row.team_id, row.version,
                              changes), changes)
                for (claimed, result), (status, at) in zip(done, outcomes, strict=True)
                if (row := accepted.get(claimed.id)) is not None
                for changes in [[self._event(claimed, result, status, at)]]],
                now, {"actor": f"notifier:{self.settings.worker_id}"})
        return len(accepted)

    # -- loop -----------------------------------------------------------------------------------
    async def run_once(self, now: datetime | None = None) -> int:
        """Claim, send and record until a batch comes back short; returns rows handled."""
        total = 0
        batch = self.settings.claim_batch
        while not self.stopping.is_set():
            claimed = await self.claim(now or self.clock, batch)
            results = await asyncio.gather(*(self._deliver(c) for c in claimed))
            await self.record(list(zip(claimed, results, strict=True)), self.clock)
            total += len(claimed)
            if len(claimed) < batch:
                return total
            now = None
        return total

    async def next_deadline(self) -> datetime | None:
        """The earliest pending row or lease expiry (UTC), if any."""
        async with self.pool.connection() as conn:
            cur = await conn.execute(Q["notification_next_wakeup"])
            row = await cur.fetchone()
        return row["wake_at"] if row else None
