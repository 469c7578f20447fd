"""The what-if replay's pure parts: the replay of a monitor stream under a proposal, the job
alert replay, incidents and the summary (docs/ledger.md, *What-if replay*)."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.errors import InvalidInput
from core.replay import jobs as job_replay
from core.replay.compare import Incident, incidents, summary
from core.replay.maintenance import Maintenance, proposed
from core.replay.monitors import Replayer, replay
from core.replay.proposal import Proposal, job_proposal, monitor_proposal
from core.replay.window import replay_window

T0 = datetime(2026, 11, 1, 0, 0, tzinfo=UTC)
MONITOR_ID, TEAM = uuid.UUID(int=7), uuid.UUID(int=8)
DEFINITION = {"name": "backup", "schedule": "1h", "timezone": "UTC", "grace_seconds": 300,
              "methods": "any", "manual_resume": False, "channels": [],
              "realert_every": None, "period_seconds": 3600.0}


class Stream:
    """A monitor stream built by hand, as the ping path and the checker would record it."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.add(T0, "monitor.created", {**DEFINITION, "status": "new",
                                         "ping_token_hash": "00" * 32})

    def add(self, at: datetime, kind: str, data: dict[str, Any]) -> None:
        self.events.append({"event_type": kind, "data": data, "stream_id": MONITOR_ID,
                            "team_id": TEAM, "stream_version": len(self.events) + 1,
                            "occurred_at": at})

    def ping(self, at: datetime, kind: str = "success", method: str = "GET",
             exit_status: int | None = None) -> None:
        self.add(at, "monitor.pinged", {"kind": kind, "method": method, "rid": None,
                                        "exit_status": exit_status, "duration_ms": None})


def _hours(n: float) -> datetime:
    return T0 + timedelta(hours=n)


def _late_then_back() -> Stream:
    """Up at 1:00; due at 2:00, late then, down at 2:05 (overdue); the ping at 2:30 is back."""
    s = _still_down()
    s.ping(_hours(2.5))
    s.add(_hours(2.5), "monitor.up", {"previous_status": "down", "reason": "ping"})
    return s


def test_the_recorded_definition_reproduces_the_recorded_flips() -> None:
    answer = replay(_late_then_back().events, Proposal(), T0, _hours(3))
    assert answer["simulated"] == answer["actual"]
    assert [(t["event_type"], t["at"]) for t in answer["simulated"]["transitions"]] == [
        ("monitor.up", _hours(1)), ("monitor.late", _hours(2)),
        ("monitor.down", _hours(2) + timedelta(minutes=5)), ("monitor.up", _hours(2.5))]
    assert answer["summary"] == {"would_alert": 1, "did_alert": 1,
                                 "false_alarms_avoided": 0, "outages_missed": 0}


def test_a_longer_grace_avoids_the_alarm_of_a_late_job() -> None:
    proposal = Proposal({"grace_seconds": 3600})
    answer = replay(_late_then_back().events, proposal, T0, _hours(3))
    assert [t["event_type"] for t in answer["simulated"]["transitions"]] == [
        "monitor.up", "monitor.late", "monitor.up"]
    assert answer["simulated"]["alerts"] == []
    assert answer["summary"] == {"would_alert": 0, "did_alert": 1,
                                 "false_alarms_avoided": 1, "outages_missed": 0}


def test_a_shorter_period_alerts_earlier_and_a_still_down_monitor_is_an_outage() -> None:
    s = Stream()
    s.ping(_hours(1))
    s.add(_hours(1), "monitor.up", {"previous_status": "new", "reason": "ping"})
    s.add(_hours(2), "monitor.late", {"previous_status": "up"})
    s.add(_hours(2) + timedelta(minutes=5), "monitor.down",
          {"previous_status": "late", "reason": "overdue"})
    shorter = replay(s.events, Proposal({"schedule": "30m", "period_seconds": 1800.0}), T0,
                     _hours(4))
    assert shorter["simulated"]["alerts"] == [
        {"at": _hours(1.5) + timedelta(minutes=5), "event": "down", "reason": "overdue",
         "maintenance": None}]
    assert shorter["summary"]["outages_missed"] == 0  # it alerted too, earlier
    # a 3-hour grace is still quiet at the window's end while the monitor never came back
    quiet = replay(s.events, Proposal({"grace_seconds": 3 * 3600}), T0, _hours(4))
    assert quiet["summary"] == {"would_alert": 0, "did_alert": 1,
                                "false_alarms_avoided": 0, "outages_missed": 1}


def test_methods_post_ignores_get_pings_and_misses_an_explicit_failure() -> None:
    s = Stream()
    s.ping(_hours(1))
    s.add(_hours(1), "monitor.up", {"previous_status": "new", "reason": "ping"})
    s.ping(_hours(1.5), kind="fail", exit_status=2)
    s.add(_hours(1.5), "monitor.down", {"previous_status": "up", "reason": "fail",
                                        "exit_status": 2})
    s.ping(_hours(1.75))
    s.add(_hours(1.75), "monitor.up", {"previous_status": "down", "reason": "ping"})
    answer = replay(s.events, Proposal({"methods": "post"}), T0, _hours(1.8))
    assert answer["simulated"]["transitions"] == []  # every ping ignored: still new
    assert answer["summary"] == {"would_alert": 0, "did_alert": 1,
                                 "false_alarms_avoided": 0, "outages_missed": 1}


def test_a_window_starts_from_the_recorded_state_and_a_proposed_field_survives_an_edit() -> None:
    s = _late_then_back()
    s.add(_hours(2.6), "monitor.updated", {"changes": {"grace_seconds": 60}})
    answer = replay(s.events, Proposal({"grace_seconds": 7200}), _hours(2.75), _hours(5))
    # up since 2:30: due 3:30, late then, and with the proposed 2 h grace not down by 5:00
    assert [(t["event_type"], t["at"]) for t in answer["simulated"]["transitions"]] == [
        ("monitor.late", _hours(3.5))]
    assert answer["actual"]["transitions"] == []  # nothing was recorded after 2:45


def test_a_recorded_ignored_ping_is_replayed_by_its_exit_status() -> None:
    s = Stream()
    s.events[0]["data"]["methods"] = "post"
    s.ping(_hours(1), kind="ignored", exit_status=4)
    answer = replay(s.events, Proposal({"methods": "any"}), T0, _hours(1.1))
    assert [(t["event_type"], t["reason"]) for t in answer["simulated"]["transitions"]] == [
        ("monitor.down", "fail")]


def test_incidents_and_summary() -> None:
    spans = incidents([(_hours(1), True, "overdue"), (_hours(1.5), True, "fail"),
                       (_hours(2), False, None), (_hours(3), False, None),
                       (_hours(4), True, "fail")], _hours(5))
    assert spans == [Incident(_hours(1), _hours(2), False, "overdue"),
                     Incident(_hours(4), _hours(5), True, "fail")]
    assert summary([Incident(_hours(2), _hours(2), False, None)], spans) == {
        "would_alert": 1, "did_alert": 2, "false_alarms_avoided": 0, "outages_missed": 1}


def test_proposals_are_validated_by_the_definition_rules() -> None:
    current = {**DEFINITION, "created_at": T0}
    proposal = monitor_proposal({"schedule": " 30m ", "methods": "POST"}, current, T0)
    assert proposal.overrides == {"schedule": "30m", "methods": "post", "period_seconds": 1800}
    assert proposal.shown() == {"schedule": "30m", "methods": "post"}
    with pytest.raises(InvalidInput) as bad:
        monitor_proposal({"timezone": "Mars/Olympus"}, current, T0)
    assert bad.value.errors[0].field == "changes.timezone"
    with pytest.raises(InvalidInput) as unknown:
        monitor_proposal({"name": "x"}, current, T0)
    assert unknown.value.errors[0].field == "changes.name"
    assert job_proposal({"realert_every": "1h"}, T0).overrides == {"realert_every": 3600}
    with pytest.raises(InvalidInput) as zero:
        job_proposal({"alert_after_failures": 0}, T0)
    assert zero.value.errors[0].field == "changes.alert_after_failures"


def test_the_window_defaults_to_30_days_and_is_bounded() -> None:
    now = _hours(24 * 60)
    assert replay_window(None, None, now) == (now - timedelta(days=30), now)
    for start, end, field in ((None, now + timedelta(seconds=1), "to"),
                              (now, now, "from"),
                              (now - timedelta(days=32), None, "from")):
        with pytest.raises(InvalidInput) as bad:
            replay_window(start, end, now)
        assert bad.value.errors[0].field == field


JOB = uuid.UUID(int=9)


def _job_events(**rules: Any) -> list[dict[str, Any]]:
    data = {"name": "j", "schedule": "@every 1m", "timezone": "UTC",
            "request": {"method": "GET", "url": "https://example.com/"}, "timeout_seconds": 10,
            "retry": None, "overlap": "skip", "catchup": "none", "success_statuses": None,
            "channels": [], "alert_after_failures": 1, "realert_every": None, **rules,
            "status": "active", "anchor_at": T0.isoformat(), "signing": False}
    return [{"event_type": "job.created", "data": data, "stream_id": JOB, "team_id": TEAM,
             "stream_version": 1, "occurred_at": T0}]


def _finals(outcomes: str) -> list[dict[str, Any]]:
    """One recording transaction per character: F a final failure, S a success."""
    return [{"run_id": uuid.UUID(int=100 + n), "tx_id": str(n), "occurred_at": _hours(n + 1),
             "scheduled_for": _hours(n + 1), "data": {"attempt": 1},
             "event_type": "run.failed" if c == "F" else "run.succeeded"}
            for n, c in enumerate(outcomes)]


def test_job_alert_rules_replayed_batch_by_batch() -> None:
    finals = _finals("SFFFSFS")
    as_recorded = job_replay.replay(_job_events(), finals, Proposal(), T0)
    assert [(a["event"], a["at"]) for a in as_recorded] == [
        ("failed", _hours(2)), ("recovered", _hours(5)), ("failed", _hours(6)),
        ("recovered", _hours(7))]
    patient = job_replay.replay(_job_events(), finals, Proposal({"alert_after_failures": 3}), T0)
    assert [(a["event"], a["at"]) for a in patient] == [
        ("failed", _hours(4)), ("recovered", _hours(5))]
    nagging = job_replay.replay(_job_events(), finals, Proposal({"realert_every": 3600}), T0)
    assert [a["event"] for a in nagging] == [
        "failed", "still_failing", "still_failing", "recovered", "failed", "recovered"]
    # a streak that started before the window still counts; only alerts from `start` listed
    late = job_replay.replay(_job_events(), finals, Proposal({"alert_after_failures": 3}),
                             _hours(3.5))
    assert [a["event"] for a in late] == ["failed", "recovered"]


def _windows(subject_type: str, *spans: tuple[float, float, str]) -> Maintenance:
    """Proposed one-off windows ``(from hour, to hour, suppress)`` over the subject."""
    subject = MONITOR_ID if subject_type == "monitor" else JOB
    windows = [proposed({"from": _hours(a), "to": _hours(b), "schedule": None, "timezone": None,
                         "duration_seconds": None, "suppress": suppress}, subject_type, subject,
                        TEAM, T0, i) for i, (a, b, suppress) in enumerate(spans)]
    return Maintenance(subject_type, subject, (), tuple(windows))


def _still_down() -> Stream:
    """Up at 1:00, late at 2:00, down at 2:05 (overdue), never back."""
    s = Stream()
    s.ping(_hours(1))
    s.add(_hours(1), "monitor.up", {"previous_status": "new", "reason": "ping"})
    s.add(_hours(2), "monitor.late", {"previous_status": "up"})
    s.add(_hours(2) + timedelta(minutes=5), "monitor.down",
          {"previous_status": "late", "reason": "overdue"})
    return s


def test_a_proposed_window_holds_the_down_alert_and_releases_one_at_its_close() -> None:
    answer = replay(_still_down().events, Proposal(), T0, _hours(5),
                    simulated=_windows("monitor", (1.5, 3, "alerts")))
    assert answer["simulated"]["transitions"] == answer["actual"]["transitions"]
    assert answer["simulated"]["alerts"] == [
        {"at": _hours(2) + timedelta(minutes=5), "event": "down", "reason": "overdue",
         "maintenance": "suppressed"},
        {"at": _hours(3), "event": "down", "reason": "overdue", "maintenance": "released"}]
    # the incident opens at the release, overlapping the recorded one: not missed
    assert answer["summary"] == {"would_alert": 1, "did_alert": 1,
                                 "false_alarms_avoided": 0, "outages_missed": 0}
    # two windows back to back: released once, at the close of the second
    chained = replay(_still_down().events, Proposal(), T0, _hours(5),
                     simulated=_windows("monitor", (1.5, 3, "alerts"), (2.5, 4, "alerts")))
    assert [(a["at"], a["maintenance"]) for a in chained["simulated"]["alerts"]] == [
        (_hours(2) + timedelta(minutes=5), "suppressed"), (_hours(4), "released")]
    # a window that closes after the replayed period releases nothing in it
    open_ = replay(_still_down().events, Proposal(), T0, _hours(5),
                   simulated=_windows("monitor", (1.5, 6, "alerts")))
    assert [a["maintenance"] for a in open_["simulated"]["alerts"]] == ["suppressed"]
    assert open_["summary"]["would_alert"] == 0
    # a runs window does nothing to a monitor
    runs = replay(_still_down().events, Proposal(), T0, _hours(5),
                  simulated=_windows("monitor", (1.5, 3, "runs")))
    assert runs["simulated"] == runs["actual"]


def test_a_monitor_back_up_inside_the_window_gets_no_alert_at_all() -> None:
    answer = replay(_late_then_back().events, Proposal(), T0, _hours(3.5),
                    simulated=_windows("monitor", (1.5, 3, "alerts")))
    assert [(a["event"], a["maintenance"]) for a in answer["simulated"]["alerts"]] == [
        ("down", "suppressed"), ("up", "suppressed")]
    assert answer["summary"] == {"would_alert": 0, "did_alert": 1,
                                 "false_alarms_avoided": 1, "outages_missed": 0}


def test_the_recorded_windows_mark_both_sides_alike() -> None:
    recorded = _windows("monitor", (1.5, 3, "alerts"))
    answer = replay(_still_down().events, Proposal(), T0, _hours(5), recorded, recorded)
    assert answer["simulated"] == answer["actual"]
    assert [a["maintenance"] for a in answer["actual"]["alerts"]] == ["suppressed", "released"]
    # a period starting inside the window, after the held alert: still released at the close
    inside = replay(_still_down().events, Proposal(), _hours(2.5), _hours(5), recorded, recorded)
    assert [(a["at"], a["maintenance"]) for a in inside["actual"]["alerts"]] == [
        (_hours(3), "released")]
    assert inside["simulated"] == inside["actual"]
    assert replay(_still_down().events, Proposal(), _hours(2.5), _hours(5), recorded,
                  None)["simulated"]["alerts"] == []  # without the window: it alerted before
    # released before the period (at 3:00): a second window closing inside it sends nothing
    twice = _windows("monitor", (1.5, 3, "alerts"), (3.5, 4, "alerts"))
    after = replay(_still_down().events, Proposal(), _hours(3.25), _hours(5), twice, twice)
    assert after["actual"]["alerts"] == after["simulated"]["alerts"] == []
    # a recorded window created after the alert held nothing
    late = Maintenance("monitor", MONITOR_ID, (), tuple(
        dataclasses.replace(w, created_at=_hours(2.5)) for w in recorded.windows))
    later = replay(_still_down().events, Proposal(), T0, _hours(5), late, late)
    assert [a["maintenance"] for a in later["actual"]["alerts"]] == [None]


def test_proposed_windows_are_validated_by_the_maintenance_rules() -> None:
    current = {**DEFINITION, "created_at": T0}
    good = monitor_proposal({"maintenance": [{"from": "2026-11-01T01:00:00Z",
                                              "to": "2026-11-01T02:00:00+00:00"}]}, current, T0)
    assert good.windows == [{"from": _hours(1), "to": _hours(2), "schedule": None,
                             "timezone": None, "duration_seconds": None, "suppress": "alerts",
                             "comment": None}]
    assert not good.keeps_recorded_maintenance  # given windows replace the recorded ones
    assert monitor_proposal({}, current, T0).keeps_recorded_maintenance
    kept = job_proposal({"maintenance": [], "recorded_maintenance": "keep"}, T0)
    assert kept.keeps_recorded_maintenance and kept.windows == []
    for bad, field in [
        ({"maintenance": [{"from": "2026-11-01T02:00:00Z", "to": "2026-11-01T01:00:00Z"}]},
         "changes.maintenance.0.to"),
        ({"maintenance": [{"schedule": "0 3 * * *"}]}, "changes.maintenance.0.duration_seconds"),
        ({"maintenance": [{"from": "2026-11-01T01:00:00Z", "to": "2026-11-01T02:00:00Z",
                           "monitors": [str(MONITOR_ID)]}]}, "changes.maintenance.0.monitors"),
        ({"maintenance": {"from": "x"}}, "changes.maintenance"),
        ({"recorded_maintenance": "merge"}, "changes.recorded_maintenance"),
    ]:
        with pytest.raises(InvalidInput) as exc:
            monitor_proposal(bad, current, T0)
        assert exc.value.errors[0].field == field, bad


def test_job_windows_hold_alerts_and_skip_slots() -> None:
    finals = _finals("SFFFSFS")  # failed alerts at 2:00 and 6:00, recovered at 5:00 and 7:00
    held = job_replay.replay(_job_events(), finals, Proposal(), T0,
                             _windows("job", (1.5, 5.5, "alerts")))
    assert [(a["event"], a["maintenance"]) for a in held] == [
        ("failed", "suppressed"), ("recovered", "suppressed"), ("failed", None),
        ("recovered", None)]
    simulated, proposed_ = job_replay.side(held, _hours(8))
    assert len(proposed_) == 1  # the held incident opens nothing
    kept, dropped = job_replay.skipped(finals, _windows("job", (5.5, 6.5, "runs")))
    assert [r["scheduled_for"] for r in dropped] == [_hours(6)]
    assert [(a["event"], a["at"]) for a in job_replay.replay(_job_events(), kept, Proposal(),
                                                              T0)] == [
        ("failed", _hours(2)), ("recovered", _hours(5))]


def test_a_replayer_given_the_prior_of_another_answers_as_one_fed_everything() -> None:
    events, start, end = _late_then_back().events, _hours(1.5), _hours(3)
    proposal = Proposal({"grace_seconds": 600})
    whole = Replayer(proposal, start, end)
    for event in events:
        whole.feed(event)
    before = Replayer(Proposal(), start, end)
    later = [e for e in events if e["occurred_at"] >= start]
    for event in events[:len(events) - len(later)]:
        before.feed(event)
    shared = Replayer(proposal, start, end)
    shared.prior_of(before)
    for event in later:
        shared.feed(event)
    assert shared.answer() == whole.answer()
    with pytest.raises(ValueError):
        Replayer(proposal, _hours(1), end).prior_of(before)
