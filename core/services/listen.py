"""LISTEN on a dedicated autocommit connection and turn each NOTIFY into a wake-up event.

Every background service (scheduler, checker, projector, notifier) sleeps until its next due
instant and is woken early by NOTIFY; this is the one loop they share.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence

import psycopg
from psycopg import sql

from core.queries import Q
from core.services.tasks import cancel_and_wait

RECONNECT_SECONDS = 0.25  # short: NOTIFYs are lost while nobody listens (docs/operations.md)


def listen_statement(channel: str) -> sql.Composed:
    """``LISTEN "<channel>"``: the ``service_listen`` template of ``core/sql/services.sql`` with
    the channel quoted as an identifier (LISTEN takes no bind parameter)."""
    return sql.SQL(Q["service_listen"]).format(channel=sql.Identifier(channel))


async def listen(dsn: str, channel: str, wake: asyncio.Event, name: str,
                 on_listening: Callable[[], None] | None = None) -> None:
    """Set ``wake`` on every NOTIFY on ``channel``, forever (cancel the task to stop).

    The event is also set right after each (re)connection: notifications sent while no
    connection was listening are lost, so the service must look again. A lost connection is
    retried every :data:`RECONNECT_SECONDS`.

    Args:
        dsn: libpq DSN (the connection is not taken from a pool: it stays open).
        channel: the NOTIFY channel, an identifier defined by this code base.
        wake: the service's wake-up event.
        name: the service's name, for the log.
        on_listening: called after each successful LISTEN.
    """
    def woken(_: str | None) -> None:
        wake.set()

    await listen_channels(dsn, (channel,), woken, name, on_listening)


async def listen_channels(dsn: str, channels: Sequence[str],
                          on_notify: Callable[[str | None], None], name: str,
                          on_listening: Callable[[], None] | None = None,
                          on_lost: Callable[[], None] | None = None) -> None:
    """Call ``on_notify(channel)`` on every NOTIFY on any of ``channels`` (one connection),
    forever (cancel the task to stop).

    ``on_notify(None)`` is called right after each (re)connection: notifications sent while no
    connection was listening are lost, so the caller must look again. ``on_lost`` is called
    when the connection fails (before the retries, every :data:`RECONNECT_SECONDS`).
    """
    log = logging.getLogger(f"cronledger.{name}")
    failures = 0
    while True:
        try:
            conn = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
            async with conn:
                # one round trip: every channel listens before anything is reported
                await conn.execute(sql.SQL("; ").join(listen_statement(c) for c in channels))
                failures = 0
                if on_listening is not None:
                    on_listening()
                on_notify(None)
                async for notify in conn.notifies():
                    on_notify(notify.channel)
        except (psycopg.Error, OSError) as exc:
            if failures == 0 and on_lost is not None:
                on_lost()
            if failures % 40 == 0:  # once, then every ~10 s of an outage
                log.warning("%s LISTEN connection lost, reconnecting every %.2f s: %s",
                            name, RECONNECT_SECONDS, exc)
            failures += 1
            await asyncio.sleep(RECONNECT_SECONDS)


@contextlib.asynccontextmanager
async def listening(dsn: str | None, channel: str | None, wake: asyncio.Event, name: str,
                    on_listening: Callable[[], None] | None = None) -> AsyncIterator[None]:
    """Run :func:`listen` in a task for the duration of the block (a service's ``run``).

    On exit the task is cancelled and waited for at most a second: a LISTEN connection never
    holds up a shutdown. With ``dsn`` ``None`` (tests driving a service by hand) or ``channel``
    ``None`` (a polling service) nothing listens.
    """
    if dsn is None or channel is None:
        yield
        return
    task = asyncio.create_task(listen(dsn, channel, wake, name, on_listening),
                               name=f"cronledger-{name}-listen")
    try:
        yield
    finally:
        await cancel_and_wait(task, 1.0)
