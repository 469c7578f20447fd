"""A monitor's recent pings for its page's time line (core/monitors/queries.py, ping_marks):
latest first, only those since the bound, a ping in a daily leaf created after the read was
first planned included (the read's plan is kept in the server process:
migrations/versions/2026_12_02_0036_ping_marks_function.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.db import open_pool
from core.monitors.ping import PingPool
from core.monitors.queries import ping_marks
from core.retention.maintenance import ensure_partitions
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor, ping

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


async def test_marks_since_the_bound_in_a_leaf_made_after_the_plan(
        fresh_dsn: str, ping_pool: PingPool) -> None:
    # One connection: every read below runs in the server process that kept the first plan.
    pool = await open_pool(fresh_dsn, min_size=1, max_size=1)
    try:
        actor = await new_actor(pool)
        await ensure_partitions(pool, T0, 1)
        monitor, token = await add_monitor(pool, actor, T0 - timedelta(days=1))
        other, other_token = await add_monitor(pool, actor, T0 - timedelta(days=1))
        for hours, kind in ((0, "success"), (1, "fail"), (2, "success")):
            assert await ping(ping_pool, token, T0 + timedelta(hours=hours), kind) is not None
        assert await ping(ping_pool, other_token, T0 + timedelta(hours=3)) is not None
        first = await ping_marks(pool, actor, monitor, since=T0 + timedelta(minutes=30),
                                 limit=10)
        assert [(m["received_at"], m["kind"]) for m in first] == [
            (T0 + timedelta(hours=2), "success"), (T0 + timedelta(hours=1), "fail")]

        later = T0 + timedelta(days=5)  # a day whose leaf the first plan did not know
        await ensure_partitions(pool, later, 0)
        assert await ping(ping_pool, token, later, "fail", exit_status=3) is not None
        marks = await ping_marks(pool, actor, monitor, since=T0, limit=10)
        assert [m["received_at"] for m in marks] == [
            later, T0 + timedelta(hours=2), T0 + timedelta(hours=1), T0]
        assert marks[0]["kind"] == "fail" and marks[0]["exit_status"] == 3
        assert len(await ping_marks(pool, actor, monitor, since=T0, limit=2)) == 2
        assert await ping_marks(pool, actor, monitor, since=later + timedelta(seconds=1),
                                limit=10) == []
        stranger = await new_actor(pool)
        assert await ping_marks(pool, stranger, monitor, since=T0, limit=10) == []
        assert [m["received_at"] for m in await ping_marks(pool, actor, other, since=T0,
                                                           limit=10)] == [
            T0 + timedelta(hours=3)]
    finally:
        await pool.close()
