"""Group commit for pings: the pings arriving while a statement is in flight share the next one.

At low load every ping is sent at once, alone: one round trip. Under load, up to
``max_in_flight`` statements run at a time and the pings that arrive meanwhile wait for a free
slot and then go together, so the commits per second (and PostgreSQL's fsyncs) stay bounded
while pings per second grow - PostgreSQL's own group commit, moved up to where the requests
are. Each ping still takes exactly one statement; it may wait for one in flight to finish.

A monitor appears in at most one in-flight statement of this process, so its pings are applied
in arrival order; its later pings wait for the next statement, where they are folded in order.
(A monitor pinged both by token and by slug URL at the same instant is two keys here: both
statements still lock its row, so each ping is applied once, in the order the locks give.)

During a database outage a statement fails once its pool gives up waiting for a connection
(``CRONLEDGER_DB_WAIT_SECONDS``); the pings queued behind it fail with it, unsent, so none waits
longer than that and none answered with an error is recorded later. A connection that breaks
after the statement was sent leaves its outcome unknown: those pings may have been recorded,
and a client retrying the 503 records them twice (docs/heartbeats.md).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime

import psycopg

from core.monitors.ping import Ping, PingPool, record_pings
from core.notifications.outbox import DEFAULT_MAX_ATTEMPTS
from core.services.outage import unavailable_reason

log = logging.getLogger("cronledger.pings")

MAX_BATCH = 500  # pings per statement: bounds the statement's duration and lock time


@dataclass(slots=True)
class _Pending:
    ping: Ping
    at: datetime
    answer: asyncio.Future[str | None] = field(repr=False)


class PingBatcher:
    """Records pings through :func:`core.monitors.ping.record_pings`, batching concurrent ones.

    Args:
        pool: the autocommit ping pool; ``max_in_flight`` defaults to its size.
        max_batch: most pings in one statement.
        notify_max_attempts: delivery attempts of the alerts pings cause.
    """

    def __init__(self, pool: PingPool, *, max_in_flight: int | None = None,
                 max_batch: int = MAX_BATCH,
                 notify_max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
        self.pool = pool
        self.notify_max_attempts = notify_max_attempts
        self.max_in_flight = max_in_flight or pool.max_size
        self.max_batch = max_batch
        self.pending: list[_Pending] = []
        self.busy: set[str] = set()  # Ping.key of the monitors with a statement in flight
        self.in_flight = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self.scheduled = False

    async def record(self, ping: Ping, at: datetime) -> str | None:
        """Record ``ping`` received at ``at``; returns the monitor's status after it, or
        ``None`` for an unknown token.

        Raises:
            psycopg.Error: the statement carrying this ping failed.
        """
        return await self.submit(ping, at)

    def submit(self, ping: Ping, at: datetime) -> asyncio.Future[str | None]:
        """Queue ``ping`` received at ``at``; the future is :meth:`record`'s answer (for a
        caller that answers from a callback instead of a task per request:
        :mod:`api.ping_protocol`). Must be called in the running event loop."""
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[str | None] = loop.create_future()
        self.pending.append(_Pending(ping, at, answer))
        if not self.scheduled:
            # Launch on the next turn of the loop: requests parsed in this turn go together.
            self.scheduled = True
            loop.call_soon(self._launch)
        return answer

    def _launch(self) -> None:
        self.scheduled = False
        while self.in_flight < self.max_in_flight and self.pending:
            batch: list[_Pending] = []
            waiting: list[_Pending] = []
            tokens: set[str] = set()
            for item in self.pending:
                if item.ping.key in self.busy or len(batch) >= self.max_batch:
                    waiting.append(item)
                else:
                    batch.append(item)
                    tokens.add(item.ping.key)
            if not batch:
                return
            self.pending = waiting
            self.busy |= tokens
            self.in_flight += 1
            task = asyncio.create_task(self._run(batch, tokens))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def _run(self, batch: list[_Pending], tokens: set[str]) -> None:
        try:
            statuses = await self._send(batch)
        except Exception as exc:  # noqa: BLE001 - every waiting request gets the error
            if unavailable_reason(exc) is not None:
                # The database is away: the pings waiting for a free slot would each wait
                # for the pool's timeout again, one batch after the other. They fail now,
                # with this batch, and are dropped: never sent, so a ping answered 503 is
                # not recorded behind its client's back (curl --retry sends it again).
                batch, self.pending = batch + self.pending, []
            for item in batch:
                if not item.answer.done():
                    item.answer.set_exception(exc)
        else:
            for item, status in zip(batch, statuses, strict=True):
                if not item.answer.done():
                    item.answer.set_result(status)
        finally:
            self.in_flight -= 1
            self.busy -= tokens
            self._launch()

    async def _send(self, batch: list[_Pending]) -> list[str | None]:
        pings = [(item.ping, item.at) for item in batch]
        try:
            return await record_pings(self.pool, pings, self.notify_max_attempts)
        except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure) as exc:
            # Batches lock monitors in id order, so this is not expected; retry once anyway.
            log.warning("ping batch of %d retried after %s", len(batch), type(exc).__name__)
            return await record_pings(self.pool, pings, self.notify_max_attempts)
