"""The what-if replay of the current definition reproduces history (docs/ledger.md, *What-if
replay*).

Each example creates a monitor of a generated definition and drives a generated history through
the real paths on a frozen clock: pings through the ping statement (``record_pings``), edits and
pauses through the commands, and the passing of time through the real checker, run at every
``alert_at`` (a perfectly timely checker); a parent (``depends_on``, generated on or off) that
goes down and back only by its pings, in phases where the monitor fails or falls silent
meanwhile (so that its down is held and, still down at the parent's recovery, released in
that ping's transaction), and edits of the monitor's ``depends_on`` part-way (naming the
parent or not; an edit that leaves no parent down releases in its transaction too). No
checker pass is run for a release: live releases at those instants, and so does the replay.
Then :func:`core.replay.monitors.simulate_monitor`
with no changes, over a window starting at a generated instant inside the history, must give
exactly the transitions and alerts recorded in that window, the alerts the live paths queued
to the monitor's channel (its failure tolerance generated too), and a summary with nothing
avoided or missed.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, Phase, event, given, note, settings
from hypothesis import strategies as st

from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.db import ConnectionPool
from core.monitors import commands
from core.monitors.checker import Checker
from core.monitors.ping import Ping, PingPool, record_pings
from core.replay.monitors import simulate_monitor
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor, ping

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
RIDS = [None, uuid.UUID(int=1)]
KINDS = {"success": ("success", None), "start": ("start", None), "fail": ("fail", None),
         "log": ("log", None), "exit 0": ("success", 0), "exit 3": ("fail", 3)}

definitions = st.fixed_dictionaries({
    "schedule": st.sampled_from(["60s", "600s", "3600s", "*/5 * * * *", "0 * * * *"]),
    "grace_seconds": st.integers(1, 3600),
    "methods": st.sampled_from(["any", "post"]),
    "manual_resume": st.booleans(),
    "min_duration": st.sampled_from([None, 1, 60]),
    "max_duration": st.sampled_from([None, 600, 3600]),
    "keywords": st.sampled_from([{}, {}, {}, {"failure_keywords": ["FAIL"]},
                                 {"success_keywords": ["OK"], "start_keywords": ["go"]}]),
    "alert_after_failures": st.sampled_from([1, 1, 2, 3]),
    "recover_after_successes": st.sampled_from([1, 1, 2]),
})
BODIES = [None, b"OK", b"FAIL", b"go"]
# microseconds since the previous step: often within a period and its grace, sometimes hours;
# never 0: the log orders a parent's events and the monitor's at one instant only by their
# positions, which the replay does not compare (docs/ledger.md, *What-if replay*)
gaps = st.one_of(st.integers(1, 90 * 10**6), st.integers(1, 2 * 3600 * 10**6))
pings = st.tuples(st.just("ping"), st.sampled_from(sorted(KINDS)),
                  st.sampled_from(["GET", "POST"]), st.sampled_from(range(len(RIDS))),
                  st.sampled_from(range(len(BODIES))), gaps)
ARM = ("ping", "success", "POST", 0, 1, 1)  # a monitor never pinged stays new: no alerts
failing = st.one_of(  # what takes a monitor down: a failed ping, or silence past its grace
    st.tuples(st.just("ping"), st.sampled_from(["fail", "exit 3"]), st.just("POST"),
              st.just(0), st.just(2), gaps),  # "FAIL" is a failure keyword too
    st.tuples(st.just("wait"), st.integers(3600 * 10**6, 3 * 3600 * 10**6)))
depends = st.tuples(st.just("depends"), st.booleans(), gaps)
step = st.one_of(
    pings,
    st.tuples(st.just("grace"), st.integers(1, 3600), gaps),
    st.tuples(st.just("pause"), st.booleans(), gaps),
    st.tuples(st.just("parent"), st.sampled_from(["fail", "success"]), gaps),
    depends,
)
# a parent-down phase: the parent fails, the monitor fails or falls silent (an edit of its
# depends_on now and then), the parent comes back
outage = st.tuples(
    st.tuples(st.just("parent"), st.just("fail"), gaps),
    st.lists(st.one_of(failing, failing, failing, pings, depends), min_size=1, max_size=4),
    st.tuples(st.just("parent"), st.just("success"), gaps),
).map(lambda p: [p[0], *p[1], p[2]])
blocks = st.lists(st.one_of(step.map(lambda s: [s]), outage), max_size=4)
steps = st.tuples(st.sampled_from([[ARM], [ARM], []]), blocks, outage, blocks).map(
    lambda p: [*p[0], *(s for block in (*p[1], p[2], *p[3]) for s in block)][:25])


async def _alert_at(pool: ConnectionPool, monitor_id: uuid.UUID) -> datetime | None:
    """The monitor's next checker instant: ``alert_at``, or the next slot its failure
    tolerance watches while down."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT least((SELECT alert_at FROM monitors WHERE id = %(id)s), (SELECT "
            "next_miss_at FROM alert_states WHERE subject_id = %(id)s)) AS at",
            {"id": monitor_id})
        return (await cur.fetchone())["at"]


async def _alerts(pool: ConnectionPool, monitor_id: uuid.UUID, start: datetime,
                  end: datetime) -> list[tuple[Any, ...]]:
    """The down and up alerts the live paths queued in ``[start, end]``."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT created_at, event FROM notifications WHERE subject_id = %s"
            " AND event IN ('down', 'up') AND created_at BETWEEN %s AND %s"
            " ORDER BY created_at, event", (monitor_id, start, end))
        return [(r["created_at"], r["event"]) for r in await cur.fetchall()]


async def _advance(checker: Checker, pool: ConnectionPool, monitor_id: uuid.UUID,
                   until: datetime) -> None:
    """The checker at every ``alert_at`` of the monitor up to ``until`` (inclusive)."""
    for _ in range(10_000):
        at = await _alert_at(pool, monitor_id)
        if at is None or at > until:
            return
        await checker.run_once(at)
    raise AssertionError("alert_at did not move forward")


async def _flips(pool: ConnectionPool, monitor_id: uuid.UUID, start: datetime,
                 end: datetime) -> list[tuple[Any, ...]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT occurred_at, event_type, data FROM events WHERE stream_id = %s"
            " AND event_type IN ('monitor.up', 'monitor.late', 'monitor.down')"
            " AND occurred_at BETWEEN %s AND %s ORDER BY stream_version",
            (monitor_id, start, end))
        return [(r["occurred_at"], r["event_type"], r["data"]["previous_status"],
                 r["data"].get("reason")) for r in await cur.fetchall()]


@settings(max_examples=40, deadline=None, phases=[p for p in Phase if p != Phase.explain],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(definition=definitions, script=steps, cut=st.floats(0, 1), tail=st.integers(0, 7200),
       with_parent=st.sampled_from([True, True, False]),
       parent_first=st.sampled_from(["fail", "success"]))
async def test_replaying_the_current_definition_reproduces_the_recorded_transitions(
    fresh_pool: ConnectionPool, ping_pool: PingPool, checker: Checker,
    sealer: AesGcmSealer, definition: dict[str, Any], script: list[tuple[Any, ...]],
    cut: float, tail: int, with_parent: bool, parent_first: str,
) -> None:
    actor = await new_actor(fresh_pool)
    # a parent that goes down and back only by its pings (a day's period, an hour's grace)
    router, router_token = await add_monitor(fresh_pool, actor, T0, "1d", name="router",
                                             grace_seconds=3600)
    await ping(ping_pool, router_token, T0, kind=parent_first)
    fields = dict(definition)
    fields.update(fields.pop("keywords"))
    # a channel, so the live paths queue (and count towards) the alerts the replay says
    channel, _ = await create_channel(fresh_pool, sealer, actor, {
        "name": "ops", "kind": "slack", "url": "https://hooks.slack.com/services/T0/B0/x"}, T0)
    monitor, token = await add_monitor(fresh_pool, actor, T0, channels=[str(channel)],
                                       depends_on=[str(router)] if with_parent else [],
                                       **fields)
    at, paused = T0, False
    note(f"steps: {script}")
    for step in script:
        at += timedelta(microseconds=step[-1])
        await _advance(checker, fresh_pool, monitor, at)
        if step[0] == "ping":
            kind, exit_status = KINDS[step[1]]
            body = BODIES[step[4]]
            await record_pings(ping_pool, [(Ping(token=token, kind=kind, method=step[2],
                                                 rid=RIDS[step[3]], exit_status=exit_status,
                                                 body=body, body_size=len(body or b"")),
                                            at)])
        elif step[0] == "parent":
            await ping(ping_pool, router_token, at, kind=step[1])  # releases what it held
        elif step[0] == "depends":
            await commands.update_monitor(fresh_pool, actor, monitor, {
                "depends_on": [str(router)] if step[1] else []}, at)
        elif step[0] == "wait":
            pass
        elif step[0] == "grace":
            await commands.update_monitor(fresh_pool, actor, monitor,
                                          {"grace_seconds": step[1]}, at)
        elif step[1] != paused:
            await commands.set_paused(fresh_pool, actor, monitor, step[1], at)
            paused = step[1]
    end = at + timedelta(seconds=tail)
    await _advance(checker, fresh_pool, monitor, end)
    start = T0 + (end - T0) * cut
    start = min(start, end - timedelta(microseconds=1))
    note(f"window: {start} .. {end}")

    answer = await simulate_monitor(fresh_pool, actor, monitor, {}, start, end, end)

    recorded = await _flips(fresh_pool, monitor, start, end)
    simulated = [(t["at"], t["event_type"], t["previous_status"], t["reason"])
                 for t in answer["simulated"]["transitions"]]
    assert simulated == recorded
    assert answer["simulated"] == answer["actual"]
    # the alerts the replay says are those the live paths queued (the failure tolerance)
    assert [(a["at"], a["event"]) for a in answer["simulated"]["alerts"]] == \
        await _alerts(fresh_pool, monitor, start, end)
    for alert in answer["simulated"]["alerts"]:  # how often each path is reached
        event(f"alert {alert['event']} {alert.get('dependency') or 'sent'}")
    summary = answer["summary"]
    assert summary["would_alert"] == summary["did_alert"]
    assert summary["false_alarms_avoided"] == summary["outages_missed"] == 0
    await commands.delete_monitor(fresh_pool, actor, monitor, end)  # out of the next checks
    await commands.delete_monitor(fresh_pool, actor, router, end)
