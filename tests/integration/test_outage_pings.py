"""Pings queued in the batcher during a database outage (docs/heartbeats.md): they fail with the
statement ahead of them, within the pool's wait, and are never sent - so a ping answered 503
is not recorded later, and a client's retry does not count it twice."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime

from core.db import ConnectionPool
from core.monitors.batcher import PingBatcher
from core.monitors.ping import Ping, open_ping_pool
from core.services.outage import unavailable_reason
from tests.dbproxy import DbProxy
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor

WAIT = 1.5  # seconds: CRONLEDGER_DB_WAIT_SECONDS' default, the ping pool's timeout


async def _pinged(pool: ConnectionPool, monitor_id: uuid.UUID) -> int:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM events WHERE stream_id = %s AND "
                                 "event_type = 'monitor.pinged'", (monitor_id,))
        return (await cur.fetchone())["n"]


async def _timed_record(batcher: PingBatcher, ping: Ping, at: datetime
                        ) -> tuple[BaseException | str | None, float]:
    started = time.monotonic()
    try:
        result: BaseException | str | None = await batcher.record(ping, at)
    except Exception as exc:  # noqa: BLE001 - the outcome is what is checked
        result = exc
    return result, time.monotonic() - started


async def test_queued_pings_fail_within_the_wait_and_are_never_sent(
        fresh_pool: ConnectionPool, fresh_dsn: str) -> None:
    now = datetime.now(UTC)
    actor = await new_actor(fresh_pool)
    monitors = [await add_monitor(fresh_pool, actor, now, name=f"m{i}") for i in range(3)]
    with DbProxy(fresh_dsn) as proxy:
        pool = await open_ping_pool(proxy.dsn, size=1, timeout=WAIT, reconnect_timeout=1.0)
        try:
            batcher = PingBatcher(pool)
            assert await batcher.record(Ping(token=monitors[0][1], kind="success",
                                             method="GET"), now) == "up"
            proxy.blackhole()
            # The pool's connection was cut: the next statement finds out, at once.
            broken, _ = await _timed_record(batcher, Ping(token=monitors[2][1], kind="success",
                                                          method="GET"), now)
            assert isinstance(broken, Exception) and unavailable_reason(broken), broken
            # One statement in flight, the other pings queued behind it (one per monitor and
            # three for the same one, which can never share a statement).
            pings = [Ping(token=token, kind="success", method="GET") for _, token in monitors]
            pings += [Ping(token=monitors[1][1], kind="log", method="POST")] * 3
            first = asyncio.create_task(_timed_record(batcher, pings[0], now))
            async with asyncio.timeout(1):  # the first statement is launched alone
                while not batcher.in_flight:
                    await asyncio.sleep(0)
            queued = [asyncio.create_task(_timed_record(batcher, ping, now))
                      for ping in pings[1:]]
            async with asyncio.timeout(1):  # the others are queued behind it
                while len(batcher.pending) < len(queued):
                    await asyncio.sleep(0)
            results = await asyncio.gather(first, *queued)
            for result, elapsed in results:
                assert isinstance(result, BaseException), result
                assert unavailable_reason(result) is not None, result
                assert elapsed < WAIT + 0.4, elapsed
            assert not batcher.pending and batcher.in_flight == 0
            proxy.forward()
            async with asyncio.timeout(5):  # the pool reconnects on demand
                while True:
                    try:
                        status = await batcher.record(pings[1], now)
                        break
                    except Exception as exc:  # noqa: BLE001
                        assert unavailable_reason(exc) is not None, exc
            assert status == "up"
        finally:
            await pool.close()
    # Nothing answered with an error was written: the first monitor has its ping from before
    # the outage, the second the one sent after it, the third none.
    assert [await _pinged(fresh_pool, monitor_id) for monitor_id, _ in monitors] == [1, 1, 0]
