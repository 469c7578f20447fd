"""The advisor's skipping replays (core/advice/monitors.py:_Trials): a less sensitive
candidate that jumps over what the field's first replay showed quiet has the alerts and
incidents of the replay fed every event. Generated histories: check-ins mostly a little late,
some very late, failures, timed runs, silences; interval and cron schedules."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core import streams
from core.advice.monitors import SKIPPING, _Trials
from core.monitors.state import evolve

T0 = datetime(2026, 9, 1, tzinfo=UTC)
SUBJECT, TEAM = uuid.UUID(int=7), uuid.UUID(int=8)


def _stream(seed: int, schedule: str, period: int, aaf: int, recover: int,
            count: int = 600) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    events: list[dict[str, Any]] = []

    def add(at: datetime, kind: str, data: dict[str, Any]) -> None:
        events.append({"event_type": kind, "data": data, "stream_id": SUBJECT,
                       "team_id": TEAM, "stream_version": len(events) + 1,
                       "occurred_at": at})

    def ping(kind: str, duration_ms: int | None = None, rid: str | None = None
             ) -> dict[str, Any]:
        return {"kind": kind, "method": "GET", "rid": rid, "exit_status": None,
                "duration_ms": duration_ms, "requested": kind}

    add(T0, "monitor.created", {
        "name": "gen", "schedule": schedule, "timezone": "UTC", "grace_seconds": 60,
        "methods": "any", "manual_resume": False, "channels": [], "realert_every": None,
        "period_seconds": float(period) if not schedule[0].isdigit() or "*" not in schedule
        else None, "status": "new", "ping_token_hash": "00" * 32,
        "alert_after_failures": aaf, "recover_after_successes": recover})
    at = T0
    for i in range(count):
        roll = rnd.random()
        late = rnd.uniform(0, 20) if roll < 0.85 else rnd.choice([45, 90, 150, 400, 1000]) \
            if roll < 0.95 else rnd.uniform(2, 6) * period
        at += timedelta(seconds=period + late)
        duration = None
        if rnd.random() < 0.2:
            duration = rnd.randint(5_000, 130_000)
            add(at - timedelta(milliseconds=duration), "monitor.pinged", ping("start"))
        kind = "fail" if rnd.random() < 0.04 else "success"
        add(at, "monitor.pinged", ping(kind, duration if kind == "success" else None))
        if i == 0:
            add(at, "monitor.up", {"previous_status": "new", "reason": "ping"})
    return events


# Every history at full length (600 check-ins) runs in tests/long; the unit layer runs an
# interval, a cron schedule (fewer check-ins: its slots cost the most) and a count threshold.
HISTORIES = [(1, "5m", 300, 1, 1, 600), (2, "5m", 300, 2, 1, 600),
             (3, "*/5 * * * *", 300, 1, 2, 600), (4, "1h", 3600, 3, 2, 600),
             (5, "5m", 300, 1, 3, 600)]
QUICK_HISTORIES = [HISTORIES[0], (3, "*/5 * * * *", 300, 1, 2, 150), HISTORIES[3]]


@pytest.mark.parametrize(("seed", "schedule", "period", "aaf", "recover", "count"),
                         QUICK_HISTORIES)
def test_skipping_replays_alert_as_the_full_ones(seed: int, schedule: str, period: int,
                                                 aaf: int, recover: int, count: int) -> None:
    events = _stream(seed, schedule, period, aaf, recover, count)
    latest = streams.fold(evolve, events)
    assert latest is not None
    now = events[-1]["occurred_at"] + timedelta(minutes=1)
    start = T0 + timedelta(hours=6)  # a part of the stream before the window
    skipping = _Trials(events, latest, start, now, now, None, None)
    full = _Trials(events, latest, start, now, now, None, None)
    full._skips = False  # every replay fed every event
    values = {"grace_seconds": [30, 60, 120, 240, 600, 1200, 5000],
              "alert_after_failures": [1, 2, 3, 4], "recover_after_successes": [1, 2, 3]}
    assert set(values) == set(SKIPPING)
    for name, candidates in values.items():
        fast = skipping.trials(name, candidates)
        slow = full.trials(name, candidates)
        assert [(t.value, t.incidents, t.alerts) for t in fast] == [
            (t.value, t.incidents, t.alerts) for t in slow], (name, seed)
    # a max_duration at least the grace (not one shorter) skips by the recorded definition's
    # replay (always marked)
    fed, full_fed = skipping.fed, full.fed
    bounds = [None, 30, 45, 60, 90, 120, 600]  # under the grace: not skipped
    fast = skipping.trials("max_duration", bounds)
    slow = full.trials("max_duration", bounds)
    assert [(t.value, t.incidents, t.alerts) for t in fast] == [
        (t.value, t.incidents, t.alerts) for t in slow], seed
    assert skipping.fed - fed < full.fed - full_fed, "max_duration did not skip"
    assert skipping.fed < full.fed  # it did skip


@pytest.mark.parametrize("seed", [1, 3, 4])
def test_check_ins_read_each_ping_against_the_fold_before_it(seed: int) -> None:
    """core/advice/monitors.py:check_ins folds only the events that are not pings: the same
    check-ins as folding every event (the reference below), with an edit and flips in it."""
    from core.advice.monitors import CheckIn, check_ins
    from core.monitors.definition import cached_schedule
    from core.monitors.rules import FINISHES, expected_after
    from core.stored import schedule_problem

    events = _stream(seed, "*/5 * * * *" if seed == 3 else "5m", 300, 1, 1)
    middle = events[len(events) // 2]["occurred_at"]
    for kind, data in (("monitor.updated", {"changes": {"schedule": "10m"}}),
                       ("monitor.late", {"previous_status": "up"}),
                       ("monitor.up", {"previous_status": "late", "reason": "ping"})):
        events.insert(len(events) // 2, {**events[0], "event_type": kind, "data": data,
                                          "occurred_at": middle})
    for version, event in enumerate(events, 1):
        event["stream_version"] = version
    start = T0 + timedelta(hours=6)
    want: list[CheckIn] = []
    state = None
    for event in events:
        data = event["data"]
        if event["event_type"] == "monitor.pinged" and state is not None \
                and event["occurred_at"] >= start and data["kind"] in FINISHES:
            schedule, _ = schedule_problem(cached_schedule, state.schedule, state.timezone,
                                           state.created_at)
            expected = None if schedule is None or state.status in ("paused", "new") \
                else expected_after(schedule, state.last_ping_at)
            late = None if expected is None \
                else (event["occurred_at"] - expected).total_seconds()
            ms = data.get("duration_ms") if data["kind"] == "success" else None
            want.append(CheckIn(event["occurred_at"], data["kind"], late,
                                None if ms is None else ms / 1000))
        state = evolve(state, event)
    assert check_ins(events, start) == want
    assert all(c.lateness is not None for c in want)
