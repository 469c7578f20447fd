"""The what-if replay of a job's alert rules reproduces the alerts the recorder queued
(docs/ledger.md, *What-if replay*).

Each example runs a job with a channel against a local sink for generated hourly outcomes
(500 or 200) through the real worker, recorder and alert rules on a frozen clock, with a
generated edit of its rules part-way (its ``min_duration`` included: with 60 s every quick 200
is a ``too_short`` failure), and ``recover_after_successes`` of 1 or 2;
:func:`core.replay.jobs.simulate_job` with no changes, over a window starting at a generated
hour, must list exactly the alerts queued in the window.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, Phase, event, example, given, note, settings
from hypothesis import strategies as st

from core.channels.commands import create_channel
from core.channels.sealing import AesGcmSealer
from core.clock import FrozenClock
from core.config import Settings
from core.db import ConnectionPool
from core.jobs import commands
from core.monitors import commands as monitor_commands
from core.monitors.checker import Checker
from core.monitors.ping import PingPool
from core.replay.jobs import simulate_job
from core.runs.confirm import HEADER, ConfirmTimeouts, confirm
from core.runs.worker import Worker
from tests.helpers import add_job, make_worker, new_actor
from tests.monitor_helpers import add_monitor, ping
from tests.sink import Reply, Sink

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
async def job_worker(fresh_pool: ConnectionPool, fresh_dsn: str, settings: Settings,
                     clock: FrozenClock) -> AsyncIterator[Worker]:
    w = make_worker(fresh_pool, fresh_dsn, settings, clock)
    yield w
    await w.settle()
    await w.executor.aclose()


async def _queued(pool: ConnectionPool, job_id: uuid.UUID,
                  start: datetime) -> list[tuple[datetime, str]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT DISTINCT created_at, event FROM notifications WHERE subject_id = %s"
            " AND created_at >= %s ORDER BY created_at", (job_id, start))
        return [(r["created_at"], r["event"]) for r in await cur.fetchall()]


@settings(max_examples=12, deadline=None, phases=[p for p in Phase if p != Phase.explain],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(outcomes=st.lists(st.booleans(), min_size=1, max_size=8),
       rules=st.fixed_dictionaries({"alert_after_failures": st.integers(1, 3),
                                    "realert_every": st.sampled_from([None, 7200]),
                                    "min_duration": st.sampled_from([None, 60]),
                                    "recover_after_successes": st.sampled_from([1, 1, 2])}),
       edit=st.tuples(st.integers(0, 8), st.integers(1, 3), st.sampled_from([None, 60])),
       cut=st.integers(0, 8))
async def test_replaying_the_current_rules_reproduces_the_queued_alerts(
    fresh_pool: ConnectionPool, job_worker: Worker, clock: FrozenClock, sink: Sink,
    sealer: AesGcmSealer, outcomes: list[bool], rules: dict[str, Any],
    edit: tuple[int, int, int | None], cut: int,
) -> None:
    actor = await new_actor(fresh_pool)
    hook, _ = await create_channel(fresh_pool, sealer, actor,
                                   {"name": "hook", "kind": "webhook",
                                    "url": sink.url("/receiver")}, T0)
    path = f"/job/{uuid.uuid4().hex}"
    sink.reply(path, *(Reply(status=200 if ok else 500) for ok in outcomes))
    job = await add_job(fresh_pool, actor, T0, sink.url(path), "0 * * * *",
                        channels=[str(hook)], **rules)
    note(f"outcomes {outcomes}, rules {rules}, edit {edit}, window from hour {cut}")
    for hour in range(1, len(outcomes) + 1):
        if hour == edit[0]:
            await commands.update_job(fresh_pool, actor, job,
                                      {"alert_after_failures": edit[1],
                                       "min_duration": edit[2]},
                                      T0 + timedelta(hours=hour, minutes=-30))
        clock.set(T0 + timedelta(hours=hour))
        await job_worker.run_once()
        await job_worker.settle()
    end = T0 + timedelta(hours=len(outcomes), minutes=1)
    start = T0 + timedelta(hours=min(cut, len(outcomes)), minutes=-1)  # before its end

    answer = await simulate_job(fresh_pool, actor, job, {}, start, end, end)

    recorded = await _queued(fresh_pool, job, start)
    assert [(a["at"], a["event"]) for a in answer["simulated"]["alerts"]] == recorded
    assert answer["simulated"] == answer["actual"]
    in_window = [ok for h, ok in enumerate(outcomes, start=1)
                 if T0 + timedelta(hours=h) >= start]
    assert answer["outcomes"]["succeeded"] + answer["outcomes"]["failed"] == len(in_window)
    assert answer["outcomes"]["failed"] >= sum(not ok for ok in in_window)  # + too_short
    summary = answer["summary"]
    assert summary["would_alert"] == summary["did_alert"]
    assert summary["false_alarms_avoided"] == summary["outages_missed"] == 0
    await commands.delete_job(fresh_pool, actor, job, end)  # it fires no more


# one hour of the second property: the run's outcome, the minutes after its slot when it is
# confirmed (past the next slot: that slot is skipped), whether the worker is down at the slot
# (missed beyond the catch-up policy), and the parent's ping at :40 (fail: down; ok: back)
HOURS = st.tuples(st.booleans(), st.sampled_from([5, 30, 50, 75]),
                  st.sampled_from([False, False, True]),
                  st.sampled_from([None, "fail", "fail", "success"]))
ALERT_ON = st.sampled_from([[], ["skipped"], ["missed"], ["skipped", "missed"]])
# a parent-down phase: the parent fails at :40, the job's runs fail in the next hour or two
# (held), the parent comes back at :40 of the last one (the job still failing: released)
OUTAGE = st.tuples(
    st.tuples(st.booleans(), st.sampled_from([5, 30]), st.just(False), st.just("fail")),
    st.lists(st.tuples(st.just(False), st.sampled_from([5, 30]), st.just(False),
                       st.just(None)), min_size=0, max_size=1),
    st.tuples(st.just(False), st.sampled_from([5, 30]), st.just(False), st.just("success")),
).map(lambda p: [p[0], *p[1], p[2]])
SCHEDULE = st.lists(st.one_of(HOURS.map(lambda h: [h]), OUTAGE), min_size=1, max_size=4).map(
    lambda blocks: [h for block in blocks for h in block][:6])


async def _token(sink: Sink, path: str, seen: int) -> tuple[str | None, int]:
    """The confirmation token of the newest fire of ``path`` if there is one past ``seen``."""
    hits = sink.hits_for(path)
    if len(hits) == seen:
        return None, seen
    return urlsplit(hits[-1].headers[HEADER]).path.rsplit("/", 1)[1], len(hits)


@settings(max_examples=25, deadline=None, phases=[p for p in Phase if p != Phase.explain],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(hours=SCHEDULE,
       rules=st.fixed_dictionaries({"alert_after_failures": st.integers(1, 2),
                                    "realert_every": st.sampled_from([None, 3600, 5400]),
                                    "max_duration": st.sampled_from([None, 1200]),
                                    "alert_on": ALERT_ON,
                                    "with_parent": st.sampled_from([True, True, False])}),
       edit=st.tuples(st.integers(0, 6), st.sampled_from([None, 1200]), ALERT_ON,
                      st.sampled_from([None, True, False]), st.sampled_from([-1, 45])),
       cut=st.integers(0, 6),
       parent_job=st.one_of(st.none(), st.tuples(st.integers(1, 2), st.integers(2, 3))))
# held failed at 14:50, held recovered at 15:05, one failure at 16:05 (below
# alert_after_failures) when the parent comes back at 16:40: the held recovery owes nothing
# (live had released it as a failed)
@example(hours=[(False, 5, False, None), (False, 50, False, "fail"), (True, 5, False, "fail"),
                (False, 5, False, "success")],
         rules={"alert_after_failures": 2, "realert_every": None, "max_duration": None,
                "alert_on": [], "with_parent": True},
         edit=(0, None, [], None, -1), cut=0, parent_job=None)
# a job parent (recover_after_successes 2) fails at 13:40 and 14:40 (the job's failure at 14:05
# held), runs well at 15:40 (one of two: still down) and 16:40 (back): the job, failing all
# along, is released at 16:40 (the replay had counted the parent back at 15:40)
@example(hours=[(True, 5, False, "fail"), (False, 5, False, None),
                (False, 5, False, "success"), (False, 5, False, None)],
         rules={"alert_after_failures": 1, "realert_every": None, "max_duration": None,
                "alert_on": [], "with_parent": True},
         edit=(0, None, [], None, -1), cut=0, parent_job=(1, 2))
async def test_replaying_the_current_bounds_alert_on_and_parents_reproduces_the_alerts(
    fresh_pool: ConnectionPool, ping_pool: PingPool, job_worker: Worker,
    checker: Checker, clock: FrozenClock, sink: Sink, sealer: AesGcmSealer,
    hours: list[tuple[bool, int, bool, str | None]], rules: dict[str, Any],
    edit: tuple[int, int | None, list[str], bool | None, int], cut: int,
    parent_job: tuple[int, int] | None,
) -> None:
    """A fire-and-confirm job (overlap ``skip``, catch-up ``latest``) whose runs are confirmed
    at generated minutes, with ``max_duration`` (the confirmation service's pass at each
    deadline), ``alert_on`` over the skipped and missed slots, ``realert_every``, and a parent
    monitor failed and recovered by pings (no checker pass: the recovery's transaction
    releases the held alerts), or a parent job (``parent_job``: its ``alert_after_failures``
    of 1 or 2 and ``recover_after_successes`` of 2 or 3) run at :40 each hour, failing from a
    ``fail`` hour to a ``success`` one (the worker is then never down at a slot: its pass at
    :40 would catch the slot up); its rules edited part-way, a minute before a slot or at :45
    (after the parent's ping at :40), ``depends_on`` too (naming the parent or not: an edit
    that leaves no parent down releases in its transaction). Replaying the current definition
    gives the alerts the live paths recorded, held and released ones included."""
    actor = await new_actor(fresh_pool)
    hook, _ = await create_channel(fresh_pool, sealer, actor,
                                   {"name": "hook", "kind": "webhook",
                                    "url": sink.url("/receiver")}, T0)
    router, router_token = await add_monitor(fresh_pool, actor, T0, "1d", name="router",
                                             grace_seconds=3600)
    await ping(ping_pool, router_token, T0)
    # (instant, what): confirmations, parent pings and parent runs still to come
    planned: list[tuple[datetime, str, Any]] = []
    fields = dict(rules)
    parent = router
    if parent_job is not None:
        hours = [(ok, minutes, False, what) for ok, minutes, _, what in hours]
        replies, good = [Reply(status=200)], True  # its first slot, 12:40
        for *_, what in [*hours, (True, 5, False, None)]:  # and the hour after the last
            good = good if what is None else what == "success"
            replies.append(Reply(status=200 if good else 500))
        export = f"/export/{uuid.uuid4().hex}"
        sink.reply(export, *replies)
        parent = await add_job(fresh_pool, actor, T0, sink.url(export), "40 * * * *",
                               name="export", alert_after_failures=parent_job[0],
                               recover_after_successes=parent_job[1])
        planned.append((T0 + timedelta(minutes=40), "run", None))
    parents = [str(parent)] if fields.pop("with_parent") else []
    path = f"/job/{uuid.uuid4().hex}"
    job = await add_job(fresh_pool, actor, T0, sink.url(path), "0 * * * *",
                        channels=[str(hook)], confirm={"timeout_seconds": 86400},
                        depends_on=parents, **fields)
    timeouts = ConfirmTimeouts(fresh_pool, None, clock)
    note(f"hours {hours}, rules {rules}, edit {edit}, window from hour {cut}")
    seen = 0

    async def until(moment: datetime) -> None:
        """Everything planned or due (max_duration deadlines) before ``moment``."""
        for _ in range(1000):
            deadline = await timeouts.next_deadline()
            first = min(planned, default=None, key=lambda p: p[0])
            if deadline is not None and deadline < moment and (
                    first is None or deadline < first[0]):
                # a deadline an edit moved into the past: the service's next pass, now
                at = max(deadline, clock.now())
                clock.set(at)
                await timeouts.run_once(at)
                continue
            if first is None or first[0] >= moment:
                return
            planned.remove(first)
            at, what, arg = first
            clock.set(at)
            if what == "confirm":
                await confirm(fresh_pool, arg[0], failed=not arg[1], exit_status=None, now=at)
            elif what == "run":  # the parent job's slot
                await job_worker.run_once()
                await job_worker.settle()
            else:
                await ping(ping_pool, router_token, at, kind=what)  # releases what it held
        raise AssertionError(f"the deadlines did not move forward: {deadline}")

    async def edited(at: datetime) -> None:
        await until(at)
        clock.set(at)  # a deadline the edit moved into the past comes at the next pass
        fields: dict[str, Any] = {"max_duration": edit[1], "alert_on": edit[2]}
        if edit[3] is not None:
            fields["depends_on"] = [str(parent)] if edit[3] else []
        await commands.update_job(fresh_pool, actor, job, fields, at)

    for hour, (ok, minutes, down, ping_kind) in enumerate(hours, start=1):
        slot = T0 + timedelta(hours=hour)
        if hour == edit[0] and edit[4] < 0:
            await edited(slot + timedelta(minutes=edit[4]))
        await until(slot)
        if not down:
            clock.set(slot)
            await job_worker.run_once()
            await job_worker.settle()
            token, seen = await _token(sink, path, seen)
            if token is not None:
                planned.append((slot + timedelta(minutes=minutes), "confirm", (token, ok)))
        if parent_job is not None:
            planned.append((slot + timedelta(minutes=40), "run", None))
        elif ping_kind is not None:
            planned.append((slot + timedelta(minutes=40), ping_kind, None))
        if hour == edit[0] and edit[4] > 0:
            await edited(slot + timedelta(minutes=edit[4]))
    end = T0 + timedelta(hours=len(hours) + 2)
    if parent_job is not None:  # the parent's slot in the hour after the last
        planned.append((T0 + timedelta(hours=len(hours) + 1, minutes=40), "run", None))
    await until(end)
    start = T0 + timedelta(hours=min(cut, len(hours)), minutes=-1)  # before its end

    answer = await simulate_job(fresh_pool, actor, job, {}, start, end, end)

    assert answer["simulated"] == answer["actual"]
    assert [(a["at"], a["event"]) for a in answer["simulated"]["alerts"]] == \
        await _queued(fresh_pool, job, start)  # held ones too: recorded, never sent
    for alert in answer["simulated"]["alerts"]:  # how often each path is reached
        event(f"alert {alert['event']} {alert.get('dependency') or 'sent'}"
              f" ({'job' if parent_job else 'monitor'} parent)")
    summary = answer["summary"]
    assert summary["would_alert"] == summary["did_alert"]
    assert summary["false_alarms_avoided"] == summary["outages_missed"] == 0
    await commands.delete_job(fresh_pool, actor, job, end)  # it fires no more
    if parent_job is not None:
        await commands.delete_job(fresh_pool, actor, parent, end)
    await monitor_commands.delete_monitor(fresh_pool, actor, router, end)
