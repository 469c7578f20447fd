"""The advisor after a schedule change (docs/advice.md, *After a schedule change*): the
suggestions are for the current definition, so only the history since the change is read, and
the answer says so. Generated histories with a known answer, through the pure advisers."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from core import streams
from core.advice import jobs as job_advice
from core.advice import monitors as monitor_advice
from core.jobs.state import evolve as job_evolve
from core.monitors.state import evolve as monitor_evolve

T0 = datetime(2026, 9, 1, tzinfo=UTC)
DAY = timedelta(days=1)
SUBJECT, TEAM = uuid.UUID(int=7), uuid.UUID(int=8)
MONITOR = {"name": "nightly", "schedule": "0 3 * * *", "timezone": "UTC", "grace_seconds": 60,
           "methods": "any", "manual_resume": False, "channels": [], "realert_every": None,
           "period_seconds": None, "status": "new", "ping_token_hash": "00" * 32}
PING = {"kind": "success", "method": "GET", "rid": None, "exit_status": None,
        "duration_ms": None, "requested": "success"}


def _add(events: list[dict[str, Any]], at: datetime, kind: str, data: dict[str, Any]) -> None:
    events.append({"event_type": kind, "data": data, "stream_id": SUBJECT, "team_id": TEAM,
                   "stream_version": len(events) + 1, "occurred_at": at})


def _nightly(old_days: int, new_days: int) -> tuple[list[dict[str, Any]], datetime]:
    """A monitor on ``0 3 * * *`` pinged at 03:15:00 (900 s after its slot) for ``old_days``
    days, then edited to ``15 3 * * *`` at noon and pinged at 03:15:10 (10 s after the new
    slot) for ``new_days`` days; an edit that keeps the schedule and one of the grace come
    between. Returns the stream and the change's instant."""
    events: list[dict[str, Any]] = []
    _add(events, T0, "monitor.created", MONITOR)
    for day in range(1, old_days + 1):
        _add(events, T0 + day * DAY + timedelta(hours=3, minutes=15), "monitor.pinged", PING)
        if day == 1:
            _add(events, events[-1]["occurred_at"], "monitor.up",
                 {"previous_status": "new", "reason": "ping"})
    changed = T0 + old_days * DAY + timedelta(hours=12)
    _add(events, changed, "monitor.updated", {"changes": {"schedule": "15 3 * * *"}})
    _add(events, changed + timedelta(hours=1), "monitor.updated",
         {"changes": {"schedule": "15 3 * * *", "grace_seconds": 120}})  # not a change of it
    for day in range(old_days + 1, old_days + new_days + 1):
        _add(events, T0 + day * DAY + timedelta(hours=3, minutes=15, seconds=10),
             "monitor.pinged", PING)
    return events, changed


def test_a_monitors_lateness_is_read_only_since_its_schedule_changed() -> None:
    events, changed = _nightly(20, 12)
    latest = streams.fold(monitor_evolve, events)
    assert latest is not None and latest.schedule == "15 3 * * *"
    now = events[-1]["occurred_at"] + timedelta(hours=1)
    advice = monitor_advice.advise(events, latest, 90, now)
    assert advice.insufficient is None
    assert (advice.from_, advice.schedule_changed_at, advice.days) == (changed, changed, 90)
    assert advice.observations == 12  # the 20 pings before the change are not read
    reasons = {k.field: k.reason for k in advice.kept} | {
        s.field: s.reason for s in advice.suggestions}
    grace = reasons["grace_seconds"]
    # each check-in 10 s after the slot of the schedule in force: none 900 s late
    assert grace.startswith("12 good check-ins since 2026-09-21 12:00 UTC, when the schedule "
                            "changed, 12 after the expected instant, lateness p50 10 s, "
                            "p95 10 s, max 10 s; over the window 0 real outages"), grace
    assert "schedule" not in {s.field for s in advice.suggestions}  # no "30 3 * * *"
    # the old schedule's check-ins, against it, would have asked for a later schedule
    before = monitor_advice.advise(events[:22], streams.fold(monitor_evolve, events[:22]),
                                   90, changed)
    assert [s.suggested for s in before.suggestions if s.field == "schedule"] == ["15 3 * * *"]
    assert before.schedule_changed_at is None and before.from_ == changed - 90 * DAY


def test_too_little_history_since_a_schedule_change_says_so() -> None:
    events, changed = _nightly(20, 3)
    latest = streams.fold(monitor_evolve, events)
    assert latest is not None
    advice = monitor_advice.advise(events, latest, 30, events[-1]["occurred_at"])
    assert advice.insufficient == ("too little history: 3 check-ins since 2026-09-21 12:00 "
                                   "UTC, when the schedule changed, at least 10 are needed")
    assert advice.suggestions == advice.kept == [] and advice.schedule_changed_at == changed
    # a change before the days asked for narrows nothing
    later = monitor_advice.advise(events, latest, 1, events[-1]["occurred_at"])
    assert later.schedule_changed_at is None
    assert later.insufficient is not None and "in the last 1 day" in later.insufficient


def test_a_jobs_runs_are_read_only_since_its_schedule_changed() -> None:
    data = {"name": "busy", "schedule": "@every 5m", "timezone": "UTC",
            "request": {"method": "GET", "url": "https://example.com/"}, "timeout_seconds": 60,
            "retry": None, "overlap": "skip", "catchup": "none", "success_statuses": None,
            "channels": [], "alert_after_failures": 1, "realert_every": None,
            "status": "active", "anchor_at": T0.isoformat(), "signing": False}
    changed = T0 + timedelta(hours=10)
    events: list[dict[str, Any]] = []
    _add(events, T0, "job.created", data)
    _add(events, changed, "job.updated", {"changes": {"schedule": "@every 10m",
                                                      "anchor_at": changed.isoformat()}})
    slots = [T0 + timedelta(minutes=5 * i) for i in range(1, 120)] + [
        changed + timedelta(minutes=10 * i) for i in range(1, 31)]
    finals = [{"run_id": uuid.UUID(int=100 + i), "tx_id": str(i),
               "occurred_at": slot + timedelta(seconds=30), "scheduled_for": slot,
               "data": {"attempt": 1, "duration_ms": 30_000},
               "event_type": "run.succeeded"} for i, slot in enumerate(slots)]
    latest = streams.fold(job_evolve, events)
    assert latest is not None
    now = finals[-1]["occurred_at"] + timedelta(minutes=1)
    history = job_advice.JobHistory(events, finals, [], None, None)
    advice = job_advice.advise(history, latest, 90, now)
    assert (advice.from_, advice.schedule_changed_at, advice.observations) == (changed, changed,
                                                                              30)
    kept = {k.field: k.reason for k in advice.kept}
    assert kept["alert_after_failures"].startswith(
        "30 finished runs since 2026-09-01 10:00 UTC, when the schedule changed, 0 of them "
        "failed")
