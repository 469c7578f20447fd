"""A monitor's pings with their bodies (core/monitors/queries.py, list_pings; the API's
/v1/monitors/{id}/pings and the dashboard's last 30): latest first, keyset on the stream version,
each body from its own day's leaf, the copies kept past retention merged in, a ping in a daily
leaf created after the read was first planned included (the read's plan is kept in the server
process: migrations/versions/2026_12_02_0039_ping_list_event_filter_functions.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from core.db import open_pool
from core.errors import NotFound
from core.monitors.ping import PingPool
from core.monitors.queries import list_pings
from core.queries import Q
from core.retention.maintenance import ensure_partitions
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor, ping

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


async def test_pings_with_bodies_kept_copies_and_a_leaf_made_after_the_plan(
        fresh_dsn: str, ping_pool: PingPool) -> None:
    # One connection: every read below runs in the server process that kept the first plan.
    pool = await open_pool(fresh_dsn, min_size=1, max_size=1)
    try:
        actor = await new_actor(pool)
        await ensure_partitions(pool, T0, 2)
        monitor, token = await add_monitor(pool, actor, T0 - timedelta(days=1))
        other, other_token = await add_monitor(pool, actor, T0 - timedelta(days=1))
        for day, kind, body in ((0, "success", b"day 0"), (1, "fail", None),
                                (2, "success", b"day 2")):
            fields = {"body": body, "body_size": len(body)} if body else {}
            assert await ping(ping_pool, token, T0 + timedelta(days=day), kind,
                              **fields) is not None
        assert await ping(ping_pool, other_token, T0, body=b"other", body_size=5) is not None
        first = await list_pings(pool, actor, monitor, limit=10, before_version=None)
        assert [(p["received_at"], p["kind"], p["body"]) for p in first] == [
            (T0 + timedelta(days=2), "success", "day 2"), (T0 + timedelta(days=1), "fail", None),
            (T0, "success", "day 0")]
        versions = [p["version"] for p in first]
        assert versions == sorted(versions, reverse=True)

        later = T0 + timedelta(days=9)  # a day whose leaf the first plan did not know
        await ensure_partitions(pool, later, 0)
        assert await ping(ping_pool, token, later, "fail", body=b"late", body_size=4,
                          exit_status=3)
        newest = await list_pings(pool, actor, monitor, limit=2, before_version=None)
        assert [(p["received_at"], p["body"], p["exit_status"]) for p in newest] == [
            (later, "late", 3), (T0 + timedelta(days=2), "day 2", None)]
        page = await list_pings(pool, actor, monitor, limit=2,
                                before_version=newest[-1]["version"])
        assert [p["received_at"] for p in page] == [T0 + timedelta(days=1), T0]

        # a copy kept past its leaf's retention (core/retention/prune.py) is merged in order
        async with pool.connection() as conn:
            await conn.execute(
                "INSERT INTO monitor_pings_kept (monitor_id, team_id, stream_version, "
                "occurred_at, data, body) VALUES (%s, %s, 1, %s, %s, %s)",
                (monitor, actor.team_id, T0 - timedelta(days=40),
                 json.dumps({"kind": "start", "method": "GET", "body_size": 4}), b"kept"))
        everything = await list_pings(pool, actor, monitor, limit=10, before_version=None)
        assert [(p["kind"], p["body"]) for p in everything] == [
            ("fail", "late"), ("success", "day 2"), ("fail", None), ("success", "day 0"),
            ("start", "kept")]
        oldest = await list_pings(pool, actor, monitor, limit=10,
                                  before_version=everything[-2]["version"])
        assert [p["body"] for p in oldest] == ["kept"]

        async with pool.connection() as conn:  # the read is the function, whose plan is kept
            await conn.execute("SET LOCAL track_functions = 'pl'")
            await conn.execute(Q["monitor_ping_list"], {
                "monitor_id": monitor, "team_id": actor.team_id, "before_version": None,
                "limit": 5})
            cur = await conn.execute("SELECT calls FROM pg_stat_xact_user_functions "
                                     "WHERE funcname = 'monitor_ping_list'")
            assert await cur.fetchone() == {"calls": 1}

        theirs = await list_pings(pool, actor, other, limit=10, before_version=None)
        assert [p["body"] for p in theirs] == ["other"]
        stranger = await new_actor(pool)
        try:
            await list_pings(pool, stranger, monitor, limit=10, before_version=None)
        except NotFound:
            pass
        else:
            raise AssertionError("another team's monitor was read")
    finally:
        await pool.close()
