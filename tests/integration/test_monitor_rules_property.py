"""The ping statement (``monitor_ping_batch``) agrees with its specification,
:mod:`core.monitors.rules`, on generated monitors and ping sequences (docs/architecture.md,
*Invariants*).

Each example creates two monitors of one generated definition (period or cron schedule, grace,
methods, manual_resume, paused or not, run-time bounds) and sends both the same generated pings
(kind or exit status, method, rid from a small pool, non-decreasing arrival instants) through
the real ping
path against PostgreSQL: monitor A's all in one statement, monitor B's split into generated
batches, the first of which also carries A's pings (interleaved, so the statement partitions
by monitor). After every statement, both rows, the statuses returned and the appended events
must be what :func:`core.monitors.rules.ping` and :func:`core.monitors.rules.ping_timing` say,
and the fold of the stream (:mod:`core.monitors.state`) must give the row back.
"""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from core.db import ConnectionPool
from core.monitors import commands, rules
from core.monitors.ping import Ping, PingPool, record_pings
from core.monitors.state import MonitorState, fold
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor, monitor_row, stream

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)
RIDS = [None, uuid.UUID(int=1), uuid.UUID(int=2)]
ROW_FIELDS = ("status", "last_ping_at", "last_start_at", "last_start_rid", "last_duration_ms",
              "next_expected_at", "alert_at", "version")
FOLDED_FIELDS = ("status", "last_ping_at", "last_start_at", "last_start_rid",
                 "last_duration_ms", "version")
KINDS = {"success": ("success", None), "start": ("start", None), "fail": ("fail", None),
         "log": ("log", None), "exit 0": ("success", 0), "exit 1": ("fail", 1),
         "exit 255": ("fail", 255)}

definitions = st.fixed_dictionaries({
    # periods (the statement computes their expected instant) and cron (left to the checker)
    "schedule": st.sampled_from(["30s", "60s", "3600s", "5400s", "86400s", "*/5 * * * *",
                                 "0 3 * * *"]),
    "grace_seconds": st.integers(1, 7200),
    "methods": st.sampled_from(["any", "post"]),
    "manual_resume": st.booleans(),
    "paused": st.booleans(),
    # run-time bounds (docs/heartbeats.md, *Run-time bounds*): a short success is a failure,
    # a run's deadline is start + max_duration
    "min_duration": st.sampled_from([None, 1, 60, 1800]),
    "max_duration": st.sampled_from([None, 3600, 7200]),
    # keywords in bodies (healthchecks' filter_http_body): none, or some of the lists
    "keywords": st.sampled_from([{}, {"failure_keywords": ["FAIL"]},
                                 {"success_keywords": ["OK"], "start_keywords": ["go"]},
                                 {"failure_keywords": ["FAIL", "\u00e9chec"],
                                  "success_keywords": ["OK"]}]),
})
BODIES = [None, b"OK", b"FAIL: OK", b"go on", b"ok", "\u00e9chec".encode(), b"\xffOK"]
pings = st.lists(st.tuples(
    st.sampled_from(sorted(KINDS)),
    st.sampled_from(["GET", "POST", "HEAD"]),
    st.sampled_from(range(len(RIDS))),
    st.integers(0, 3 * 3600 * 10**6),  # microseconds since the previous ping (0: same instant)
    st.booleans(),  # monitor B's batch ends after this ping
    st.sampled_from(range(len(BODIES))),
), min_size=1, max_size=20)


class Model:
    """One monitor as the rules see it: the row as created, then :func:`rules.ping` per ping."""

    def __init__(self, row: dict[str, Any]) -> None:
        self.state = MonitorState.from_row(row)
        self.period = row["period_seconds"]
        self.events: list[tuple[int, str, dict[str, Any], datetime]] = []

    def batch(self, sent: list[tuple[Ping, datetime]]) -> list[str]:
        before, statuses = self.state, []
        for p, at in sent:
            outcome = rules.ping(self.state, kind=p.kind, method=p.method, rid=p.rid, at=at,
                                 exit_status=p.exit_status, body=p.body)
            for n, (event_type, data) in enumerate(outcome.events, start=1):
                if event_type == "monitor.pinged":
                    data = {**data, "rid": None if p.rid is None else str(p.rid),
                            "body_size": p.body_size, "remote_addr": None,
                            "user_agent": None}
                self.events.append((self.state.version + n, event_type, data, at))
            self.state = outcome.state
            statuses.append(self.state.status)
        expected, alert = rules.ping_timing(self.state, before, self.period, sent[-1][1])
        self.state = dataclasses.replace(self.state, next_expected_at=expected, alert_at=alert)
        return statuses


async def _check(pool: ConnectionPool, monitor: uuid.UUID, model: Model,
                 version0: int) -> None:
    row = await monitor_row(pool, monitor)
    assert {k: row[k] for k in ROW_FIELDS} == {k: getattr(model.state, k) for k in ROW_FIELDS}
    events = await stream(pool, monitor)
    assert [(e["stream_version"], e["event_type"], e["data"], e["occurred_at"])
            for e in events if e["stream_version"] > version0] == model.events
    folded = fold(events)
    assert folded is not None
    assert {k: getattr(folded, k) for k in FOLDED_FIELDS} == {k: row[k] for k in FOLDED_FIELDS}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(definition=definitions, script=pings)
async def test_the_ping_statement_follows_the_rules(
    fresh_pool: ConnectionPool, ping_pool: PingPool,
    definition: dict[str, Any], script: list[tuple[str, str, int, int, bool, int]]
) -> None:
    actor = await new_actor(fresh_pool)
    fields = dict(definition)
    paused = fields.pop("paused")
    fields.update(fields.pop("keywords"))
    monitors, tokens = [], []
    for name in ("a", "b"):
        monitor, token = await add_monitor(fresh_pool, actor, T0, name=name, **fields)
        if paused:
            await commands.set_paused(fresh_pool, actor, monitor, True, T0)
        monitors.append(monitor)
        tokens.append(token)
    rows = [await monitor_row(fresh_pool, m) for m in monitors]
    models = [Model(row) for row in rows]

    at, timeline, cuts = T0, [], []
    for label, method, rid, gap, cut, body in script:
        at += timedelta(microseconds=gap)
        kind, exit_status = KINDS[label]
        timeline.append((kind, method, RIDS[rid], exit_status, at, BODIES[body]))
        cuts.append(cut)
    note(f"pings: {timeline}")

    def sent(token: str, part: list[Any]) -> list[tuple[Ping, datetime]]:
        return [(Ping(token=token, kind=k, method=m, rid=r, exit_status=x, body=b,
                      body_size=len(b or b"")), t)
                for k, m, r, x, t, b in part]

    batches_b: list[list[Any]] = [[]]
    for item, cut in zip(timeline, cuts, strict=True):
        batches_b[-1].append(item)
        if cut:
            batches_b.append([])
    batches_b = [b for b in batches_b if b]
    note(f"monitor B's batches: {[len(b) for b in batches_b]}")

    # statement 1: all of A's pings and B's first batch, interleaved in arrival order
    a_pings, b_first = sent(tokens[0], timeline), sent(tokens[1], batches_b[0])
    first = sorted([(p, t, 0, n) for n, (p, t) in enumerate(a_pings)]
                   + [(p, t, 1, n) for n, (p, t) in enumerate(b_first)],
                   key=lambda x: (x[1], x[3], x[2]))
    statuses = await record_pings(ping_pool, [(p, t) for p, t, _, _ in first])
    expected_a, expected_b = models[0].batch(a_pings), models[1].batch(b_first)
    assert [s for s, item in zip(statuses, first, strict=True) if item[2] == 0] == expected_a
    assert [s for s, item in zip(statuses, first, strict=True) if item[2] == 1] == expected_b
    await _check(fresh_pool, monitors[0], models[0], rows[0]["version"])
    await _check(fresh_pool, monitors[1], models[1], rows[1]["version"])
    for part in batches_b[1:]:
        batch = sent(tokens[1], part)
        assert await record_pings(ping_pool, batch) == models[1].batch(batch)
        await _check(fresh_pool, monitors[1], models[1], rows[1]["version"])
    # one batch or many: the same end state
    assert {k: getattr(models[0].state, k) for k in ROW_FIELDS if k != "alert_at"} == {
        k: getattr(models[1].state, k) for k in ROW_FIELDS if k != "alert_at"}
