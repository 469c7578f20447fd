"""Dependencies (docs/notifications.md, *Dependencies*): a monitor or job names parents in
``depends_on``; while one is down, a dependent's problem alert is held (recorded, never sent),
the parent's messages name the held dependents, and when the parents are back the dependents
still down alert then. Cycles, unknown ids and other teams' ids are refused; a parent with
dependents cannot be deleted. Real PostgreSQL, the real ping statement and checker, a frozen
clock; the API, ``apply`` and export over HTTP.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from core.actor import Actor
from core.alerts.explain import explain_alert
from core.alerts.queries import list_alerts
from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.db import ConnectionPool
from core.errors import Conflict, InvalidInput
from core.monitors.checker import Checker
from core.monitors.commands import delete_monitor, set_paused, update_monitor
from core.monitors.ping import PingPool
from core.notifications.released import RELEASE_POLL
from core.replay.jobs import simulate_job
from core.replay.monitors import simulate_monitor
from core.runs.worker import Worker
from core.statuspages.commands import set_note
from core.statuspages.queries import get_note
from tests.helpers import add_job, new_actor
from tests.monitor_helpers import add_monitor, advance, ping
from tests.sink import Reply, Sink
from tests.teams import Team

T0 = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)


async def _notifications(pool: ConnectionPool) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM notifications ORDER BY created_at, id")
        return await cur.fetchall()


async def _events(pool: ConnectionPool, kind: str) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute("SELECT * FROM events WHERE event_type = %s "
                                 "ORDER BY global_position", (kind,))
        return await cur.fetchall()


async def _network(pool: ConnectionPool, sealer: AesGcmSealer, sink: Sink
                   ) -> tuple[Actor, dict[str, tuple[uuid.UUID, str]]]:
    """A router (grace 5 min) and two dependents (grace 10 min), all hourly, all alerting."""
    actor = await new_actor(pool)
    channel, _ = await create_channel(pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/hook")}, T0)
    router = await add_monitor(pool, actor, T0, "1h", name="router", grace_seconds=300,
                               channels=[str(channel)])
    out = {"router": router}
    for name in ("backup", "sync"):
        out[name] = await add_monitor(pool, actor, T0, "1h", name=name, grace_seconds=600,
                                      channels=[str(channel)], depends_on=[str(router[0])])
    return actor, out


async def _ping_all(ping_pool: PingPool, monitors: dict[str, tuple[uuid.UUID, str]],
                    at: datetime) -> None:
    for _, token in monitors.values():
        assert await ping(ping_pool, token, at) == "up"


async def test_dependents_going_down_while_the_router_is_down_are_held_then_released(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    """The example of docs/notifications.md, *Dependencies*."""
    actor, m = await _network(fresh_pool, sealer, sink)
    await _ping_all(ping_pool, m, T0)
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=5))  # router down
    [router_down] = await _notifications(fresh_pool)
    assert router_down["event"] == "down" and router_down["subject_id"] == m["router"][0]
    assert router_down["status"] == "pending"

    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=10))  # both down
    rows = await _notifications(fresh_pool)
    held = [r for r in rows if r["subject_id"] != m["router"][0]]
    assert sorted(r["event"] for r in held) == ["down", "down"]
    assert {r["status"] for r in held} == {"suppressed"}  # never sent
    # while alerts are held, the checker looks again soon (its pass releases what is left)
    assert await checker.next_deadline() <= checker.clock.now() + timedelta(
        seconds=RELEASE_POLL)
    alerts = await list_alerts(fresh_pool, actor, limit=10, before=None, monitor=m["backup"][0])
    [backup_alert] = alerts
    assert backup_alert["state"] == "held"
    assert backup_alert["held_by"] == [m["router"][0]]
    why = await explain_alert(fresh_pool, actor, backup_alert["id"])
    [router] = why["dependencies"]["considered"]
    assert router["name"] == "router" and router["down"] is True
    assert router["status"] == "down"
    assert why["dependencies"]["held_by"] == [str(m["router"][0])]
    assert "held, not sent: monitor 'router' (depends_on) was down" in why["rule"]["text"]
    assert why["definition"]["depends_on"] == [m["router"][0]]
    suppressed = await _events(fresh_pool, "notification.suppressed")
    assert {e["data"]["held_by"][0] for e in suppressed} == {str(m["router"][0])}

    # the router comes back: its recovery names the held dependents ...
    back = T0 + timedelta(hours=1, minutes=20)
    assert await ping(ping_pool, m["router"][1], back) == "up"
    rows = await _notifications(fresh_pool)
    [router_up] = [r for r in rows if r["subject_id"] == m["router"][0] and r["event"] == "up"]
    assert router_up["message"]["title"] == (
        "Monitor \u201crouter\u201d is up; 2 dependents were held: they alert now if still "
        "down")
    assert {d["name"] for d in router_up["message"]["dependents"]} == {"backup", "sync"}

    # ... and in the same transaction the dependents still down get their alert, once
    released = [r for r in rows if r["status"] == "pending" and r["event"] == "down"
                and r["subject_id"] != m["router"][0]]
    assert sorted(r["message"]["subject"]["name"] for r in released) == ["backup", "sync"]
    assert {r["created_at"] for r in released} == {back}  # at the router's recovery
    assert all("links" in r["message"] and r["message"]["links"]["explain"] for r in released)
    [new, old] = await list_alerts(fresh_pool, actor, limit=10, before=None,
                                   monitor=m["backup"][0])
    assert old["state"] == "released" and old["released_as"] == new["id"]
    assert new["state"] == "sent" and new["rule"]["released_from"] == str(old["id"])
    why = await explain_alert(fresh_pool, actor, new["id"])
    assert why["dependencies"]["released_from"] == str(old["id"])
    assert "sent when they came back" in why["rule"]["text"]
    assert len(await _events(fresh_pool, "alert.released")) == 2
    await checker.run_once(back + MIN)  # the checker's pass finds nothing left to release
    assert len(await _notifications(fresh_pool)) == len(rows)  # released once


async def test_a_note_on_a_held_alert_does_not_stop_its_release(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    """``alert.noted`` takes the held alert's stream version after ``alert.raised``; its
    ``alert.released`` follows it (it took version 2 as well, and the checker's pass failed
    with a conflict at every try, so the dependent never alerted)."""
    actor, m = await _network(fresh_pool, sealer, sink)
    await _ping_all(ping_pool, m, T0)
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=5))  # router down
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=10))  # both down
    [held] = await list_alerts(fresh_pool, actor, limit=10, before=None, monitor=m["backup"][0])
    assert held["state"] == "held"
    await set_note(fresh_pool, actor, held["id"], "the router is being replaced",
                   T0 + timedelta(hours=1, minutes=11))
    back = T0 + timedelta(hours=1, minutes=20)
    assert await ping(ping_pool, m["router"][1], back) == "up"
    await checker.run_once(back)
    [new, old] = await list_alerts(fresh_pool, actor, limit=10, before=None,
                                   monitor=m["backup"][0])
    assert old["state"] == "released" and old["released_as"] == new["id"]
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT stream_version, event_type FROM events "
                                 "WHERE stream_id = %s ORDER BY stream_version", (old["id"],))
        assert [(e["stream_version"], e["event_type"]) for e in await cur.fetchall()] == [
            (1, "alert.raised"), (2, "alert.noted"), (3, "alert.released")]


async def test_a_note_written_after_the_release_is_kept(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    """A note on a released alert appends after its ``alert.released`` (it took the version the
    ``alert_notes`` row named, the release's: ConcurrencyConflict, HTTP 409, every time), and
    a second note after that one."""
    actor, m = await _network(fresh_pool, sealer, sink)
    await _ping_all(ping_pool, m, T0)
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=5))  # router down
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=10))  # both down
    [held] = await list_alerts(fresh_pool, actor, limit=10, before=None, monitor=m["backup"][0])
    back = T0 + timedelta(hours=1, minutes=20)
    assert await ping(ping_pool, m["router"][1], back) == "up"
    await checker.run_once(back)
    [_, old] = await list_alerts(fresh_pool, actor, limit=10, before=None,
                                 monitor=m["backup"][0])
    assert old["id"] == held["id"] and old["state"] == "released"
    await set_note(fresh_pool, actor, old["id"], "the router was replaced", back + MIN)
    assert await get_note(fresh_pool, actor.team_id, old["id"]) == "the router was replaced"
    await set_note(fresh_pool, actor, old["id"], "the router was replaced; backup ran",
                   back + 2 * MIN)
    assert await get_note(fresh_pool, actor.team_id, old["id"]) == (
        "the router was replaced; backup ran")
    async with fresh_pool.connection() as conn:
        cur = await conn.execute("SELECT stream_version, event_type FROM events "
                                 "WHERE stream_id = %s ORDER BY stream_version", (old["id"],))
        assert [(e["stream_version"], e["event_type"]) for e in await cur.fetchall()] == [
            (1, "alert.raised"), (2, "alert.released"), (3, "alert.noted"), (4, "alert.noted")]


async def test_a_dependent_back_while_held_owes_nothing(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    actor, m = await _network(fresh_pool, sealer, sink)
    await _ping_all(ping_pool, m, T0)
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=10))
    assert await ping(ping_pool, m["backup"][1], T0 + timedelta(hours=1, minutes=12)) == "up"
    [held_down, held_up] = (await list_alerts(fresh_pool, actor, limit=10, before=None,
                                              monitor=m["backup"][0]))[::-1]
    # held (nothing to take back) and closed at once: nothing of it is owed later
    assert (held_up["event"], held_up["state"], held_up["released_as"]) == (
        "up", "released", None)
    assert held_down["state"] == "released" and held_down["released_as"] is None
    assert await ping(ping_pool, m["router"][1], T0 + timedelta(hours=1, minutes=20)) == "up"
    await checker.run_once(T0 + timedelta(hours=1, minutes=20))
    sent = [r for r in await _notifications(fresh_pool) if r["status"] == "pending"]
    assert sorted((r["message"]["subject"]["name"], r["event"]) for r in sent) == [
        ("router", "down"), ("router", "up"), ("sync", "down")]
    [router_up] = [r for r in sent if r["message"]["subject"]["name"] == "router"
                   and r["event"] == "up"]
    assert [d["name"] for d in router_up["message"]["dependents"]] == ["sync"]  # not backup


def _downs(rows: list[dict[str, Any]], monitor: uuid.UUID) -> list[tuple[datetime, str]]:
    """A monitor's down notifications that went out: ``(created_at, status)``."""
    return [(r["created_at"], r["status"]) for r in rows
            if r["subject_id"] == monitor and r["event"] == "down" and r["status"] == "pending"]


async def test_an_edit_that_leaves_no_parent_down_releases_at_once_and_replays(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    """backup is held by the router; dropping the router from its depends_on sends its down
    in the edit's transaction, at the edit; naming it again holds the next one. The replay
    of backup's definition follows both edits: the same alerts at the same instants."""
    actor, m = await _network(fresh_pool, sealer, sink)
    await _ping_all(ping_pool, m, T0)
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=10))
    edit = T0 + timedelta(hours=1, minutes=15)
    await update_monitor(fresh_pool, actor, m["backup"][0], {"depends_on": []}, edit)
    assert _downs(await _notifications(fresh_pool), m["backup"][0]) == [(edit, "pending")]
    [new, old] = await list_alerts(fresh_pool, actor, limit=10, before=None,
                                   monitor=m["backup"][0])
    assert (old["state"], old["released_as"]) == ("released", new["id"])
    again = T0 + timedelta(hours=1, minutes=30)
    assert await ping(ping_pool, m["backup"][1], again - MIN) == "up"
    await update_monitor(fresh_pool, actor, m["backup"][0],
                         {"depends_on": [str(m["router"][0])]}, again)
    await advance(checker, fresh_pool, T0 + timedelta(hours=2, minutes=45))  # down, held
    back = T0 + timedelta(hours=2, minutes=50)
    assert await ping(ping_pool, m["router"][1], back) == "up"
    end = back + MIN
    answer = await simulate_monitor(fresh_pool, actor, m["backup"][0], {}, T0, end, end)
    shown = [(a["at"], a["event"], a.get("dependency")) for a in answer["simulated"]["alerts"]]
    assert shown == [(T0 + timedelta(hours=1, minutes=10), "down", "held"),
                     (edit, "down", "released"), (again - MIN, "up", None),
                     (T0 + timedelta(hours=2, minutes=39, seconds=0), "down", "held"),
                     (back, "down", "released")]
    assert answer["simulated"] == answer["actual"]
    assert [(a["at"], a["event"]) for a in answer["simulated"]["alerts"]] == [
        (r["created_at"], r["event"]) for r in await _notifications(fresh_pool)
        if r["subject_id"] == m["backup"][0]]


async def test_pausing_a_down_parent_releases_its_dependents(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    actor, m = await _network(fresh_pool, sealer, sink)
    await _ping_all(ping_pool, m, T0)
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=10))
    paused = T0 + timedelta(hours=1, minutes=12)
    await set_paused(fresh_pool, actor, m["router"][0], True, paused)
    rows = await _notifications(fresh_pool)
    assert _downs(rows, m["backup"][0]) == _downs(rows, m["sync"][0]) == [(paused, "pending")]


async def test_a_hold_locked_at_the_recovery_is_released_by_the_checkers_pass(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    """The recovery's release skips a held alert another transaction holds (SKIP LOCKED); the
    checker's next pass sends it."""
    actor, m = await _network(fresh_pool, sealer, sink)
    await _ping_all(ping_pool, m, T0)
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=10))
    back = T0 + timedelta(hours=1, minutes=20)
    async with fresh_pool.connection() as other, other.transaction():
        await other.execute("SELECT id FROM alerts WHERE subject_id = %s AND held_by IS NOT NULL"
                            " FOR UPDATE", (m["backup"][0],))
        assert await ping(ping_pool, m["router"][1], back) == "up"
    rows = await _notifications(fresh_pool)
    assert _downs(rows, m["sync"][0]) == [(back, "pending")]
    assert _downs(rows, m["backup"][0]) == []  # locked then: left to the checker
    assert await checker.next_deadline() <= checker.clock.now() + timedelta(
        seconds=RELEASE_POLL)
    await checker.run_once(back + timedelta(seconds=3))
    rows = await _notifications(fresh_pool)
    assert _downs(rows, m["backup"][0]) == [(back + timedelta(seconds=3), "pending")]
    assert _downs(rows, m["sync"][0]) == [(back, "pending")]  # once


async def test_a_parent_alerting_after_the_hold_names_its_dependents(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    """The router's own message waits for its failure tolerance; its dependents went down
    meanwhile: one message, "router down; 2 dependents also silent"."""
    actor, m = await _network(fresh_pool, sealer, sink)
    await update_monitor(fresh_pool, actor, m["router"][0], {"alert_after_failures": 2}, T0)
    await _ping_all(ping_pool, m, T0)
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=10))
    assert {r["status"] for r in await _notifications(fresh_pool)} == {"suppressed"}
    await advance(checker, fresh_pool, T0 + timedelta(hours=2, minutes=5))  # missed again
    router_down = [r for r in await _notifications(fresh_pool) if r["status"] == "pending"]
    assert [r["message"]["title"] for r in router_down] == [
        "Monitor \u201crouter\u201d is down; 2 dependents also silent"]
    facts = {f["name"]: f["value"] for f in router_down[0]["message"]["facts"]}
    assert facts["Dependents also silent"] in ("\u201cbackup\u201d, \u201csync\u201d",
                                               "\u201csync\u201d, \u201cbackup\u201d")


async def test_a_failing_job_holds_its_dependent_monitor(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    channel, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/hook")}, T0)
    job = await add_job(fresh_pool, actor, T0, "https://example.com/export", "0 * * * *",
                        name="export")
    monitor, token = await add_monitor(fresh_pool, actor, T0, "1h", name="report",
                                       channels=[str(channel)], depends_on=[str(job)])
    async with fresh_pool.connection() as conn:  # the job is in a failure streak
        await conn.execute(
            "INSERT INTO alert_states (subject_type, subject_id, team_id, failing_since, "
            "consecutive_failures) VALUES ('job', %s, %s, %s, 1)", (job, actor.team_id, T0))
    await ping(ping_pool, token, T0)
    assert await ping(ping_pool, token, T0 + MIN, "fail") == "down"
    [alert] = await list_alerts(fresh_pool, actor, limit=10, before=None, monitor=monitor)
    assert alert["state"] == "held" and alert["held_by"] == [job]
    assert alert["rule"]["dependencies"][0]["kind"] == "job"


async def test_a_job_parent_back_releases_its_dependent_at_its_good_run_and_replays(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    worker: Worker, clock: FrozenClock, sink: Sink, sealer: AesGcmSealer,
) -> None:
    """The export job fails at 11:00 (a streak: down as a parent); report goes down at 11:02,
    held; export's good run at 12:00 ends the streak and, in the recorder's transaction,
    report's down goes out, dated then. The replay of report's definition says the same."""
    actor = await new_actor(fresh_pool)
    channel, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/hook")}, T0)
    sink.reply("/export", Reply(status=500), Reply(status=200))
    job = await add_job(fresh_pool, actor, T0, sink.url("/export"), "0 * * * *",
                        name="export")
    report, token = await add_monitor(fresh_pool, actor, T0, "1h", name="report",
                                      channels=[str(channel)], depends_on=[str(job)])
    await ping(ping_pool, token, T0)
    for hour in (1, 2):
        clock.set(T0 + timedelta(hours=hour))
        await worker.run_once()
        await worker.settle()
        if hour == 1:
            await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=1))  # late
            assert await ping(ping_pool, token, T0 + timedelta(hours=1, minutes=2),
                              "fail") == "down"
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT e.occurred_at FROM events e JOIN runs r ON r.id = e.stream_id"
            " WHERE r.job_id = %s AND e.event_type = 'run.succeeded'", (job,))
        [(good,)] = [tuple(r.values()) for r in await cur.fetchall()]
    rows = await _notifications(fresh_pool)
    assert _downs(rows, report) == [(good, "pending")]  # at the job's good run
    end = good + MIN
    answer = await simulate_monitor(fresh_pool, actor, report, {}, T0, end, end)
    assert [(a["at"], a["event"], a.get("dependency")) for a in answer["simulated"]["alerts"]] \
        == [(T0 + timedelta(hours=1, minutes=2), "down", "held"), (good, "down", "released")]
    assert answer["simulated"] == answer["actual"]


async def test_a_job_parent_with_tolerance_is_down_until_its_recovery_and_replays(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    worker: Worker, clock: FrozenClock, sink: Sink, sealer: AesGcmSealer,
) -> None:
    """export (``alert_after_failures`` 2, ``recover_after_successes`` 2) fails at 11:00 and
    12:00 (its failed alert at 12:00) and runs well at 13:00 and 14:00: its streak, down as a
    parent, ends at 14:00 (the second good run in a row), so report's down held at 11:02 goes
    out then, not at 13:00. The replay of report's definition says the same (it had counted
    the parent back at its first good run)."""
    actor = await new_actor(fresh_pool)
    channel, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/hook")}, T0)
    sink.reply("/export", Reply(status=500), Reply(status=500), Reply(status=200),
               Reply(status=200))
    job = await add_job(fresh_pool, actor, T0, sink.url("/export"), "0 * * * *",
                        name="export", alert_after_failures=2, recover_after_successes=2)
    report, token = await add_monitor(fresh_pool, actor, T0, "1h", name="report",
                                      channels=[str(channel)], depends_on=[str(job)])
    await ping(ping_pool, token, T0)
    for hour in (1, 2, 3, 4):
        clock.set(T0 + timedelta(hours=hour))
        await worker.run_once()
        await worker.settle()
        if hour == 1:
            await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=1))  # late
            assert await ping(ping_pool, token, T0 + timedelta(hours=1, minutes=2),
                              "fail") == "down"
    async with fresh_pool.connection() as conn:
        cur = await conn.execute(
            "SELECT e.occurred_at FROM events e JOIN runs r ON r.id = e.stream_id"
            " WHERE r.job_id = %s AND e.event_type = 'run.succeeded'"
            " ORDER BY e.occurred_at", (job,))
        [first_good, back] = [r["occurred_at"] for r in await cur.fetchall()]
    assert first_good < back
    assert _downs(await _notifications(fresh_pool), report) == [(back, "pending")]
    end = back + MIN
    answer = await simulate_monitor(fresh_pool, actor, report, {}, T0, end, end)
    assert [(a["at"], a["event"], a.get("dependency")) for a in answer["simulated"]["alerts"]] \
        == [(T0 + timedelta(hours=1, minutes=2), "down", "held"), (back, "down", "released")]
    assert answer["simulated"] == answer["actual"]


async def test_cycles_unknown_ids_and_deleting_a_parent_are_refused(
    fresh_pool: ConnectionPool, sealer: AesGcmSealer,
) -> None:
    actor, other = await new_actor(fresh_pool), await new_actor(fresh_pool)
    a, _ = await add_monitor(fresh_pool, actor, T0, name="a")
    b, _ = await add_monitor(fresh_pool, actor, T0, name="b", depends_on=[str(a)])
    job = await add_job(fresh_pool, actor, T0, "https://example.com/", name="j",
                        depends_on=[str(b)])
    foreign, _ = await add_monitor(fresh_pool, other, T0, name="theirs")
    cases = [
        ([str(a)], "cannot depend on itself"),
        ([str(job)], "would make a cycle: monitor 'a' -> job 'j' -> monitor 'b' -> "
                     "monitor 'a'"),
        ([str(uuid.uuid4())], "is not a monitor or job of this team"),
        ([str(foreign)], "is not a monitor or job of this team"),
        (["not-an-id"], "is not a monitor or job id"),
    ]
    for depends_on, message in cases:
        with pytest.raises(InvalidInput, match=message) as caught:
            await update_monitor(fresh_pool, actor, a, {"depends_on": depends_on}, T0)
        assert caught.value.errors[0].field == "depends_on.0"
    with pytest.raises(Conflict, match="has dependents: monitor 'b'"):
        await delete_monitor(fresh_pool, actor, a, T0)
    await update_monitor(fresh_pool, actor, b, {"depends_on": []}, T0)
    await delete_monitor(fresh_pool, actor, a, T0)  # no dependent left


async def test_depends_on_through_the_api_apply_and_export(
    frozen_api: AsyncTestClient, team: Team,
) -> None:
    auth = team.auth
    r = await frozen_api.post("/v1/monitors", headers=auth, json={
        "name": "router", "schedule": "1h"})
    router = r.json()["id"]
    r = await frozen_api.post("/v1/jobs", headers=auth, json={
        "name": "sync", "schedule": "@hourly", "request": {"url": "https://example.com/"},
        "depends_on": [router]})
    assert r.status_code == 201, r.text
    job = r.json()
    assert job["depends_on"] == [router]
    r = await frozen_api.post("/v1/monitors", headers=auth, json={
        "name": "report", "schedule": "1h", "depends_on": [router, job["id"]]})
    assert r.status_code == 201, r.text
    report = r.json()
    r = await frozen_api.patch(f"/v1/monitors/{router}", headers=auth,
                               json={"depends_on": [report["id"]]})
    assert r.status_code == 422 and "depends_on.0" in r.text and "cycle" in r.text
    r = await frozen_api.patch(f"/v1/jobs/{job['id']}", headers=auth,
                               json={"depends_on": [job["id"]]})
    assert r.status_code == 422 and "depends_on.0" in r.text
    r = await frozen_api.patch(f"/v1/monitors/{router}", headers=auth,
                               json={"depends_on": ["x"] * 21})
    assert r.status_code in (400, 422) and "depends_on" in r.text
    r = await frozen_api.delete(f"/v1/monitors/{router}", headers=auth)
    assert r.status_code == 409 and "report" in r.text and "sync" in r.text
    r = await frozen_api.patch(f"/v1/monitors/{report['id']}", headers=auth,
                               json={"depends_on": [router]})
    assert r.status_code == 200 and r.json()["depends_on"] == [router]
    r = await frozen_api.get(f"/v1/monitors/{report['id']}/events", headers=auth)
    assert [e["data"]["changes"] for e in r.json()["items"]
            if e["event_type"] == "monitor.updated"] == [{"depends_on": [router]}]

    r = await frozen_api.get("/v1/export", headers=auth)
    document = r.json()
    [exported] = [m for m in document["monitors"] if m["name"] == "report"]
    assert exported["depends_on"] == [router]
    assert [j["depends_on"] for j in document["jobs"]] == [[router]]
    assert "depends_on" not in [m for m in document["monitors"] if m["name"] == "router"][0]
    r = await frozen_api.post("/v1/apply", headers=auth, json={**document,
                                                              "digest": "ab" * 32})
    assert r.status_code == 200, r.text
    assert {c["action"] for c in r.json()["changes"]} == {"unchanged"}
    document["jobs"][0]["depends_on"] = [job["id"]]
    r = await frozen_api.post("/v1/apply", headers=auth, json={**document,
                                                              "digest": "ab" * 32})
    assert r.status_code == 422 and "jobs.0.depends_on.0" in r.text, r.text


async def test_simulate_holds_and_releases_as_live_and_shows_a_proposed_parent(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sink: Sink, sealer: AesGcmSealer,
) -> None:
    """The what-if replay (docs/ledger.md): replaying backup's definition gives the held down
    and the released one as they happened; proposing no parent shows the page it would have
    sent; proposing the router to a monitor that has none shows its page held."""
    actor, m = await _network(fresh_pool, sealer, sink)
    lone, lone_token = await add_monitor(fresh_pool, actor, T0, "1h", name="lone",
                                         grace_seconds=600, channels=[])
    await _ping_all(ping_pool, {**m, "lone": (lone, lone_token)}, T0)
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=10))
    back = T0 + timedelta(hours=1, minutes=20)
    await ping(ping_pool, m["router"][1], back)  # releases backup's down (no checker pass)
    end = T0 + timedelta(hours=1, minutes=30)

    def shown(side: dict[str, Any]) -> list[tuple[datetime, str, str | None]]:
        return [(a["at"], a["event"], a.get("dependency")) for a in side["alerts"]]

    current = await simulate_monitor(fresh_pool, actor, m["backup"][0], {}, T0, end, end)
    expected = [(T0 + timedelta(hours=1, minutes=10), "down", "held"), (back, "down", "released")]
    assert shown(current["simulated"]) == shown(current["actual"]) == expected
    assert current["summary"]["would_alert"] == current["summary"]["did_alert"] == 1
    alone = await simulate_monitor(fresh_pool, actor, m["backup"][0], {"depends_on": []},
                                   T0, end, end)
    assert shown(alone["simulated"]) == [(T0 + timedelta(hours=1, minutes=10), "down", None)]
    proposed = await simulate_monitor(fresh_pool, actor, lone, {
        "depends_on": [str(m["router"][0])]}, T0, end, end)
    assert shown(proposed["simulated"]) == expected
    assert shown(proposed["actual"]) == [(T0 + timedelta(hours=1, minutes=10), "down", None)]
    with pytest.raises(InvalidInput, match="changes.depends_on.0"):
        await simulate_monitor(fresh_pool, actor, lone, {"depends_on": [str(lone)]},
                               T0, end, end)


async def test_a_job_behind_a_down_monitor_is_held_released_and_replayed(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    worker: Worker, clock: FrozenClock, sink: Sink, sealer: AesGcmSealer,
) -> None:
    actor = await new_actor(fresh_pool)
    channel, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": sink.url("/hook")}, T0)
    router, token = await add_monitor(fresh_pool, actor, T0, "1h", name="router",
                                      grace_seconds=300)
    sink.reply("/export", Reply(status=500))
    job = await add_job(fresh_pool, actor, T0, sink.url("/export"), "6 11 * * *",
                        name="export", channels=[str(channel)], depends_on=[str(router)])
    await ping(ping_pool, token, T0)
    await advance(checker, fresh_pool, T0 + timedelta(hours=1, minutes=5))  # router down
    clock.set(T0 + timedelta(hours=1, minutes=6))
    await worker.run_once()
    await worker.settle()
    [held] = await list_alerts(fresh_pool, actor, limit=5, before=None, job=job)
    assert (held["event"], held["state"], held["held_by"]) == ("failed", "held", [router])
    back = T0 + timedelta(hours=1, minutes=20)
    await ping(ping_pool, token, back)  # a parent without channels: released at once too
    [sent, _] = await list_alerts(fresh_pool, actor, limit=5, before=None, job=job)
    assert (sent["event"], sent["state"]) == ("failed", "sent")
    end = back + timedelta(minutes=5)
    answer = await simulate_job(fresh_pool, actor, job, {}, T0, end, end)
    shown = [(a["at"], a["event"], a.get("dependency")) for a in answer["simulated"]["alerts"]]
    assert shown == [(T0 + timedelta(hours=1, minutes=6), "failed", "held"),
                     (back, "failed", "released")]
    assert answer["simulated"]["alerts"][0]["held_by"] == [router]
    assert [(a["at"], a["event"], a.get("dependency"))
            for a in answer["actual"]["alerts"]] == shown
    assert answer["summary"]["would_alert"] == answer["summary"]["did_alert"] == 1
