"""The monitor checker and the ping statement against a real database, on a frozen clock:
state rules, cron expectations with DST, concurrency (pings racing pings, pings racing the
checker, checkers racing checkers), LISTEN/NOTIFY wake-up, and the projection = fold(stream)."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import psycopg

from core.clock import FrozenClock, SystemClock
from core.db import ConnectionPool, transaction
from core.monitors import commands
from core.monitors.checker import Checker, ClaimedMonitor, apply_decisions, decide
from core.monitors.definition import cached_schedule
from core.monitors.ping import Ping, PingPool, open_ping_pool, ping_batch_params
from core.monitors.rules import timing
from core.monitors.state import fold
from core.queries import Q
from core.tokens import token_hash
from tests.helpers import eventually, new_actor, signal_on
from tests.monitor_helpers import add_monitor, advance, monitor_row, ping, stream

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def types(events: list[dict]) -> list[str]:
    return [e["event_type"] for e in events]


async def test_new_monitor_never_alerts(fresh_pool: ConnectionPool,
                                        checker: Checker) -> None:
    actor = await new_actor(fresh_pool)
    monitor, _ = await add_monitor(fresh_pool, actor, T0, "1s", grace_seconds=1)
    await advance(checker, fresh_pool, T0 + timedelta(days=30))
    row = await monitor_row(fresh_pool, monitor)
    assert row["status"] == "new" and row["alert_at"] is None
    assert types(await stream(fresh_pool, monitor)) == ["monitor.created"]


async def test_fail_and_nonzero_exit_status_are_down_at_once(
    fresh_pool: ConnectionPool, ping_pool: PingPool
) -> None:
    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0)
    assert await ping(ping_pool, token, T0, "fail", exit_status=None) == "down"
    assert await ping(ping_pool, token, T0 + timedelta(seconds=1), "success",
                      exit_status=0) == "up"
    assert await ping(ping_pool, token, T0 + timedelta(seconds=2), "fail", exit_status=3) == "down"
    assert await ping(ping_pool, token, T0 + timedelta(seconds=3), "fail") == "down"
    events = await stream(fresh_pool, monitor)
    assert types(events) == ["monitor.created", "monitor.pinged", "monitor.down",
                             "monitor.pinged", "monitor.up", "monitor.pinged", "monitor.down",
                             "monitor.pinged"]
    assert events[6]["data"] == {"previous_status": "up", "reason": "fail", "exit_status": 3}
    row = await monitor_row(fresh_pool, monitor)
    assert row["next_expected_at"] is None and row["version"] == 8
    # The success left an alert; the failure does not clear it (pings only move alert_at
    # earlier): the checker finds nothing to decide then, and clears it.
    assert row["alert_at"] == T0 + timedelta(seconds=1, hours=1)
    await Checker(fresh_pool, "", FrozenClock(T0)).run_once(row["alert_at"])
    row = await monitor_row(fresh_pool, monitor)
    assert row["alert_at"] is None and row["version"] == 8


async def test_start_must_be_followed_within_grace(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker
) -> None:
    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "1d", grace_seconds=600)
    await ping(ping_pool, token, T0)
    rid = uuid.uuid4()
    await ping(ping_pool, token, T0 + timedelta(hours=1), "start", rid=rid)
    row = await monitor_row(fresh_pool, monitor)
    assert row["alert_at"] == T0 + timedelta(hours=1, minutes=10)  # start + grace < expected
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=9, seconds=59))
    assert (await monitor_row(fresh_pool, monitor))["status"] == "up"
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=10))
    row = await monitor_row(fresh_pool, monitor)
    assert row["status"] == "down" and row["alert_at"] is None
    down = (await stream(fresh_pool, monitor))[-1]
    assert down["event_type"] == "monitor.down" and down["data"]["reason"] == "start_timeout"
    # The late success still records the duration of the run it closes.
    await ping(ping_pool, token, T0 + timedelta(hours=1, minutes=12), rid=rid)
    row = await monitor_row(fresh_pool, monitor)
    assert row["status"] == "up" and row["last_duration_ms"] == 12 * 60 * 1000
    assert row["last_start_at"] is None


async def test_start_on_a_new_monitor_arms_the_grace(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker
) -> None:
    """healthchecks: a running new or paused check goes down after start + grace."""
    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "1h", grace_seconds=60)
    await ping(ping_pool, token, T0, "start")
    assert (await monitor_row(fresh_pool, monitor))["alert_at"] == T0 + timedelta(seconds=60)
    await advance(checker, fresh_pool, T0 + timedelta(minutes=5))
    assert (await monitor_row(fresh_pool, monitor))["status"] == "down"


async def test_rid_pairs_a_start_with_its_end(
    fresh_pool: ConnectionPool, ping_pool: PingPool
) -> None:
    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "1h")
    first, second = uuid.uuid4(), uuid.uuid4()
    await ping(ping_pool, token, T0, "start", rid=first)
    await ping(ping_pool, token, T0 + timedelta(seconds=10), "start", rid=second)
    # The end of another run (rid mismatch) leaves the pending start alone.
    await ping(ping_pool, token, T0 + timedelta(seconds=20), rid=first)
    row = await monitor_row(fresh_pool, monitor)
    assert row["last_duration_ms"] is None and row["last_start_rid"] == second
    await ping(ping_pool, token, T0 + timedelta(seconds=42, milliseconds=500), rid=second)
    row = await monitor_row(fresh_pool, monitor)
    assert row["last_duration_ms"] == 32500 and row["last_start_at"] is None
    pinged = [e for e in await stream(fresh_pool, monitor) if e["event_type"] == "monitor.pinged"]
    assert pinged[-1]["data"]["duration_ms"] == 32500
    assert pinged[-1]["data"]["rid"] == str(second)
    # A success without rid closes any start; a start without rid pairs with it too.
    await ping(ping_pool, token, T0 + timedelta(minutes=1), "start")
    await ping(ping_pool, token, T0 + timedelta(minutes=2))
    assert (await monitor_row(fresh_pool, monitor))["last_duration_ms"] == 60000


async def test_log_and_ignored_pings_change_nothing_but_the_version(
    fresh_pool: ConnectionPool, ping_pool: PingPool
) -> None:
    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "1h", methods="post")
    await ping(ping_pool, token, T0, method="POST")
    before = await monitor_row(fresh_pool, monitor)
    await ping(ping_pool, token, T0 + timedelta(minutes=1), "log", method="POST")
    await ping(ping_pool, token, T0 + timedelta(minutes=2), "fail", method="GET")
    await ping(ping_pool, token, T0 + timedelta(minutes=3), "success", method="HEAD")
    after = await monitor_row(fresh_pool, monitor)
    assert after["version"] == before["version"] + 3
    for key in ("status", "last_ping_at", "next_expected_at", "alert_at", "last_start_at"):
        assert after[key] == before[key], key
    pinged = [e["data"]["kind"] for e in await stream(fresh_pool, monitor)
              if e["event_type"] == "monitor.pinged"]
    assert pinged == ["success", "log", "ignored", "ignored"]


async def test_paused_monitor_resumes_on_ping_unless_manual_resume(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker
) -> None:
    actor = await new_actor(fresh_pool)
    auto, auto_token = await add_monitor(fresh_pool, actor, T0, "1h", name="auto")
    manual, manual_token = await add_monitor(fresh_pool, actor, T0, "1h", name="manual",
                                             manual_resume=True)
    for monitor in (auto, manual):
        await commands.set_paused(fresh_pool, actor, monitor, True, T0)
    assert await ping(ping_pool, auto_token, T0 + timedelta(minutes=1)) == "up"
    assert await ping(ping_pool, manual_token, T0 + timedelta(minutes=1)) == "paused"
    assert await ping(ping_pool, manual_token, T0 + timedelta(minutes=2), "fail") == "paused"
    await advance(checker, fresh_pool, T0 + timedelta(days=2))
    assert (await monitor_row(fresh_pool, auto))["status"] == "down"
    assert (await monitor_row(fresh_pool, manual))["status"] == "paused"
    assert types(await stream(fresh_pool, auto))[-3:] == ["monitor.up", "monitor.late",
                                                          "monitor.down"]
    await commands.set_paused(fresh_pool, actor, manual, False, T0 + timedelta(days=2))
    row = await monitor_row(fresh_pool, manual)
    assert row["status"] == "new" and row["alert_at"] is None


async def test_cron_monitor_follows_the_job_dst_rules(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker
) -> None:
    """``30 1 * * *`` in New York fires once on the fall-back day, at 01:30 EDT (05:30Z): the
    ping at 05:30:10Z is expected next at 01:30 EST the day after, not at the second 01:30 of
    the same night (06:30Z), which is what naive croniter would expect."""
    actor = await new_actor(fresh_pool)
    start = datetime(2024, 11, 2, 5, 0, tzinfo=UTC)
    monitor, token = await add_monitor(fresh_pool, actor, start, "30 1 * * *",
                                       timezone="America/New_York", grace_seconds=600)
    ping_at = datetime(2024, 11, 3, 5, 30, 10, tzinfo=UTC)
    await ping(ping_pool, token, ping_at)
    row = await monitor_row(fresh_pool, monitor)
    assert row["next_expected_at"] is None and row["alert_at"] == ping_at  # for the checker
    await checker.run_once(ping_at)
    row = await monitor_row(fresh_pool, monitor)
    expected = datetime(2024, 11, 4, 6, 30, tzinfo=UTC)
    assert row["next_expected_at"] == expected and row["alert_at"] == expected
    assert row["status"] == "up"
    await advance(checker, fresh_pool, datetime(2024, 11, 3, 7, 0, tzinfo=UTC))
    assert (await monitor_row(fresh_pool, monitor))["status"] == "up"
    await advance(checker, fresh_pool, expected + timedelta(minutes=10))
    assert types(await stream(fresh_pool, monitor))[-2:] == ["monitor.late", "monitor.down"]


async def test_twenty_concurrent_pings_to_a_down_monitor(
    fresh_pool: ConnectionPool, fresh_dsn: str
) -> None:
    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "1h")
    pool = await open_ping_pool(fresh_dsn, size=20)
    try:
        await ping(pool, token, T0, "fail")
        async with pool.connection() as conn:  # hold the row so the 20 pile up on its lock
            await conn.set_autocommit(False)
            await conn.execute("SELECT 1 FROM monitors WHERE id = $1 FOR UPDATE", (monitor,))
            racing = [asyncio.create_task(ping(pool, token, T0 + timedelta(seconds=1)))
                      for _ in range(19)]
            await eventually(lambda: _lock_waiters(fresh_pool, 19), 10,
                             what="19 pings waiting on the monitor's row lock")
            await conn.rollback()
        racing.append(asyncio.create_task(ping(pool, token, T0 + timedelta(seconds=1))))
        assert await asyncio.gather(*racing) == ["up"] * 20
    finally:
        await pool.close()
    events = await stream(fresh_pool, monitor)
    assert types(events).count("monitor.pinged") == 21
    assert types(events).count("monitor.up") == 1
    assert [e["stream_version"] for e in events] == list(range(1, len(events) + 1))
    assert (await monitor_row(fresh_pool, monitor))["version"] == len(events)


async def test_a_ping_in_flight_wins_over_the_checker(
    fresh_pool: ConnectionPool, fresh_dsn: str, checker: Checker
) -> None:
    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "60s", grace_seconds=10)
    pool = await open_ping_pool(fresh_dsn, size=1)
    try:
        await ping(pool, token, T0)
        deadline = T0 + timedelta(seconds=70)
        async with await psycopg.AsyncConnection.connect(fresh_dsn) as conn:
            # The ping's statement ran (row locked) but has not committed when the checker runs.
            await conn.execute(Q["monitor_ping_batch"], ping_batch_params(
                [(Ping(token=token, kind="success", method="GET"),
                  deadline - timedelta(seconds=1))]))
            counts = await checker.run_once(deadline)
            assert counts.claimed == 0 and counts.changed == 0
            await conn.commit()
        await advance(checker, fresh_pool, deadline + timedelta(seconds=5))
    finally:
        await pool.close()
    row = await monitor_row(fresh_pool, monitor)
    assert row["status"] == "up"
    assert row["alert_at"] == deadline - timedelta(seconds=1) + timedelta(seconds=60)
    assert "monitor.down" not in types(await stream(fresh_pool, monitor))


async def test_a_stale_decision_changes_nothing(
    fresh_pool: ConnectionPool, ping_pool: PingPool
) -> None:
    """The compare-and-set: a decision made from a row read before a ping commits is dropped
    (what happens to a checker whose read raced a ping, or another checker)."""
    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "60s", grace_seconds=10)
    await ping(ping_pool, token, T0)
    deadline = T0 + timedelta(seconds=70)
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(Q["monitor_claim_due"], {"now": deadline, "limit": 10})
        [row] = await cur.fetchall()
        await conn.rollback()
    decision = decide(ClaimedMonitor.from_row(row), deadline)
    assert decision.status == "down"
    await ping(ping_pool, token, deadline)
    async with transaction(fresh_pool) as conn:
        applied = await apply_decisions(conn, [decision], deadline, "stale")
    assert applied == set()
    assert (await monitor_row(fresh_pool, monitor))["status"] == "up"
    assert "monitor.down" not in types(await stream(fresh_pool, monitor))


async def test_two_checkers_never_double_a_transition(
    fresh_pool: ConnectionPool, fresh_dsn: str, ping_pool: PingPool
) -> None:
    actor = await new_actor(fresh_pool)
    tokens = []
    for i in range(120):
        _, token = await add_monitor(fresh_pool, actor, T0, "60s", name=f"m{i}",
                                     grace_seconds=10)
        tokens.append(token)
    for token in tokens:
        await ping(ping_pool, token, T0)
    checkers = [Checker(fresh_pool, fresh_dsn, SystemClock(), checker_id=f"c{i}", batch=7)
                for i in range(2)]
    late_at, down_at = T0 + timedelta(seconds=60), T0 + timedelta(seconds=70)
    for at in (late_at, down_at):
        results = await asyncio.gather(*(c.run_once(at) for c in checkers),
                                       *(c.run_once(at) for c in checkers))
        assert sum(r.changed for r in results) == 120
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT event_type, count(*) AS n, count(DISTINCT stream_id) AS monitors, "
            "array_agg(DISTINCT metadata->>'actor') AS actors FROM events "
            "WHERE event_type IN ('monitor.late', 'monitor.down') GROUP BY event_type")
        rows = {r["event_type"]: r for r in await cur.fetchall()}
    for kind in ("monitor.late", "monitor.down"):
        assert rows[kind]["n"] == rows[kind]["monitors"] == 120
    assert len(rows["monitor.late"]["actors"] + rows["monitor.down"]["actors"]) >= 2


async def _lock_waiters(pool: ConnectionPool, n: int) -> bool:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM pg_stat_activity "
                                 "WHERE datname = current_database() AND wait_event_type = 'Lock'")
        return (await cur.fetchone())["n"] >= n


async def _status_is(pool: ConnectionPool, monitor: object, status: str) -> bool:
    return (await monitor_row(pool, monitor))["status"] == status


async def test_checker_sleeps_until_the_next_alert_and_wakes_on_notify(
    fresh_pool: ConnectionPool, fresh_dsn: str, ping_pool: PingPool
) -> None:
    """With nothing to do the checker would sleep 60 s; a /start arms a 1 s grace and its NOTIFY
    wakes the checker, which then sleeps until that alert and records the down."""
    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "1h", grace_seconds=1)
    checker = Checker(fresh_pool, fresh_dsn, SystemClock())
    listened = signal_on(checker, "on_listening")
    asleep = signal_on(checker, "sleep_until", after=listened)  # idle, and a NOTIFY would wake it
    task = asyncio.create_task(checker.run())
    try:
        await eventually(asleep.is_set, what="the checker idle after a pass")
        await ping(ping_pool, token, datetime.now(UTC), "start")
        await eventually(
            lambda: _status_is(fresh_pool, monitor, "down"), what="the monitor down")
    finally:
        checker.stop()
        await task
    assert (await stream(fresh_pool, monitor))[-1]["data"]["reason"] == "start_timeout"


async def test_projection_equals_the_fold_of_the_stream(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker
) -> None:
    actor = await new_actor(fresh_pool)
    monitor, token = await add_monitor(fresh_pool, actor, T0, "10m", grace_seconds=60)
    at = T0
    steps = [("ping", "success"), ("ping", "start"), ("wait", 30), ("ping", "success"),
             ("patch", {"schedule": "*/5 * * * *", "timezone": "Europe/Paris"}),
             ("ping", "success"), ("wait", 400), ("ping", "log"), ("rotate", None),
             ("ping", "fail"), ("pause", None), ("ping", "start"), ("resume", None),
             ("ping", "success"), ("patch", {"grace_seconds": 30, "methods": "post"}),
             ("ping", "success"), ("wait", 1000)]
    for what, arg in steps:
        at += timedelta(seconds=7)
        if what == "ping":
            await ping(ping_pool, token, at, arg)
            await checker.run_once(at)  # cron monitors get their expectation from the checker
        elif what == "wait":
            at += timedelta(seconds=arg)
            await advance(checker, fresh_pool, at)
        elif what == "patch":
            await commands.update_monitor(fresh_pool, actor, monitor, arg, at)
        elif what == "rotate":
            token = await commands.rotate_token(fresh_pool, actor, monitor, at)
        else:
            await commands.set_paused(fresh_pool, actor, monitor, what == "pause", at)
    row = await monitor_row(fresh_pool, monitor)
    folded = fold(await stream(fresh_pool, monitor))
    assert folded is not None
    state = folded.as_row()
    schedule = cached_schedule(folded.schedule, folded.timezone, folded.created_at)
    state["next_expected_at"], exact_alert = timing(folded, schedule, at)
    stored_alert = row.pop("alert_at")
    del state["alert_at"]
    assert state == row
    assert row["ping_token_hash"] == token_hash(token)
    # alert_at is never later than the next status change; pings leave it earlier (HOT
    # updates) and the checker moves it when it comes.
    assert stored_alert is not None or exact_alert is None
    assert exact_alert is None or stored_alert <= exact_alert
    await advance(checker, fresh_pool, stored_alert or at)
    assert (await monitor_row(fresh_pool, monitor))["alert_at"] == exact_alert


async def test_a_schedule_that_no_longer_parses_does_not_stop_the_checker(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker
) -> None:
    """Stored schedules were validated, but a tzdata or engine upgrade may break one: that
    monitor is marked broken (docs/operations.md, "Poison items") and no longer claimed, the others
    are still checked."""
    actor = await new_actor(fresh_pool)
    broken, broken_token = await add_monitor(fresh_pool, actor, T0, "0 * * * *", name="broken")
    fine, fine_token = await add_monitor(fresh_pool, actor, T0, "1m", name="fine",
                                         grace_seconds=10)
    async with fresh_pool.connection() as conn:
        await conn.execute("UPDATE monitors SET schedule = '0 * * * * * * *' WHERE id = %s",
                           (broken,))
    await ping(ping_pool, broken_token, T0)
    await ping(ping_pool, fine_token, T0)
    counts = await checker.run_once(T0 + timedelta(minutes=2))
    assert counts.claimed == 2 and counts.transitions == {"down": 1}
    row = await monitor_row(fresh_pool, broken)
    assert row["status"] == "up" and row["alert_at"] is None
    assert "got 8" in row["broken_reason"]
    assert (await monitor_row(fresh_pool, fine))["status"] == "down"
