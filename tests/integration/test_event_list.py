"""The team's events newest first (core/events.py, list_team_events; the overview and the audit
log): ordered by log position, not by time, so an event appended late with an older time (a
caught-up missed slot) is among the newest, in whatever daily leaf its time puts it, a leaf
created after the read was first planned included (the read's plans are kept in the server
process: migrations/versions/2026_12_02_0035_event_list_function.py, and with a filter
2026_12_02_0039_ping_list_event_filter_functions.py: one plan for any value of a filter)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from core.db import open_pool
from core.events import NewEvent, append_events, list_team_events
from core.queries import Q
from core.retention.maintenance import ensure_partitions
from tests.helpers import new_actor

T0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
OLD = datetime(2026, 7, 1, 9, 30, tzinfo=UTC)  # no leaf of its day until the test makes one


def _run_event(team: uuid.UUID, event_type: str, at: datetime, actor: str) -> NewEvent:
    return NewEvent("run", uuid.uuid4(), 1, event_type, team, at,
                    {"job_id": str(uuid.uuid4()), "scheduled_for": at.isoformat()},
                    {"actor": actor})


async def test_late_event_with_an_older_time_is_newest(fresh_dsn: str) -> None:
    # One connection: every call below runs in the server process that kept the first plan.
    pool = await open_pool(fresh_dsn, min_size=1, max_size=1)
    try:
        actor = await new_actor(pool)
        team = actor.team_id
        await ensure_partitions(pool, T0, 2)
        async with pool.connection() as conn:
            await append_events(conn, [
                _run_event(team, "run.queued", T0 + timedelta(minutes=i), "system")
                for i in range(5)])
        first = await list_team_events(pool, team, limit=3)
        assert [r["occurred_at"] for r in first] == [
            T0 + timedelta(minutes=m) for m in (4, 3, 2)]

        async with pool.connection() as conn:  # the old day's leaf, then the late event in it
            await conn.execute("SELECT retention_partition_create('events_runs', %s::date)",
                               (OLD.date(),))
            late = await append_events(conn, [_run_event(team, "run.missed", OLD, "api_key:x")])
        newest = await list_team_events(pool, team, limit=2)
        assert [r["global_position"] for r in newest][0] == late[0]
        assert newest[0]["occurred_at"] == OLD and newest[0]["event_type"] == "run.missed"
        assert newest[1]["occurred_at"] == T0 + timedelta(minutes=4)

        by_type = await list_team_events(pool, team, limit=2, stream_type="run")
        assert by_type[0]["global_position"] == late[0]
        jobs = await list_team_events(pool, team, limit=10, stream_type="job")
        assert all(r["stream_type"] == "job" for r in jobs)
        assert late[0] not in [r["global_position"] for r in jobs]
        by_actor = await list_team_events(pool, team, limit=5, actor="api_key:x")
        assert [r["global_position"] for r in by_actor] == late
        both = await list_team_events(pool, team, limit=5, actor="system", stream_type="run")
        assert len(both) == 5 and all(r["metadata"]["actor"] == "system" for r in both)

        in_range = await list_team_events(pool, team, limit=10, since=OLD,
                                          until=OLD + timedelta(days=1))
        assert [r["global_position"] for r in in_range] == late
        after = await list_team_events(pool, team, limit=10, since=T0 + timedelta(minutes=3))
        assert [r["occurred_at"] for r in after] == [T0 + timedelta(minutes=m) for m in (4, 3)]

        page = await list_team_events(pool, team, limit=2, before=late[0])
        assert [r["occurred_at"] for r in page] == [T0 + timedelta(minutes=m) for m in (4, 3)]
        rest = await list_team_events(pool, team, limit=10, before=page[-1]["global_position"])
        assert [r["occurred_at"] for r in rest] == [T0 + timedelta(minutes=m) for m in (2, 1, 0)]
        async with pool.connection() as conn:  # the filtered read is a function too
            await conn.execute("SET LOCAL track_functions = 'pl'")
            await conn.execute(Q["event_list_team_filtered"], {
                "team_id": team, "before": None, "kinds": ["runs"], "stream_type": "run",
                "actor": None, "since": None, "until": None, "limit": 5})
            cur = await conn.execute("SELECT calls FROM pg_stat_xact_user_functions "
                                     "WHERE funcname = 'event_list_team_filtered'")
            assert await cur.fetchone() == {"calls": 1}
        other = await new_actor(pool)
        theirs = await list_team_events(pool, other.team_id, limit=10)
        assert not {r["global_position"] for r in theirs} & {
            r["global_position"] for r in rest + page + newest}
    finally:
        await pool.close()
