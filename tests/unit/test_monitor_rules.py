"""The monitor rules (core/monitors/rules.py) on their own, no database: the examples of
docs/heartbeats.md and the alert edge table."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.monitors import rules
from core.monitors.definition import monitor_schedule
from core.monitors.state import MonitorState
from tests.unit.monitor_states import monitor_state

T = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
HOUR = monitor_schedule("1h", "UTC", T)
R1, R2 = uuid.UUID(int=1), uuid.UUID(int=2)
STATUSES = ("new", "up", "late", "down", "paused")


def at(hh: int, mm: int, ss: int = 0, ms: int = 0) -> datetime:
    return T.replace(hour=hh, minute=mm, second=ss) + timedelta(milliseconds=ms)


def monitor(**fields: Any) -> MonitorState:
    return monitor_state(**fields)


def pings(state: MonitorState, *sent: tuple[Any, ...]) -> tuple[MonitorState, list[str]]:
    """Apply ``(kind, at[, rid[, method]])`` pings; the state after and the event types."""
    types = []
    for kind, instant, *rest in sent:
        rid = rest[0] if rest else None
        method = rest[1] if len(rest) > 1 else "GET"
        outcome = rules.ping(state, kind=kind, method=method, rid=rid, at=instant)
        state = outcome.state
        types += [event_type for event_type, _ in outcome.events]
    return state, types


# -- time (docs/heartbeats.md, States: the boundary to the second, shared case M01) --------------
def test_m01_expected_late_and_down_to_the_second() -> None:
    state, _ = pings(monitor(), ("success", at(10, 0)))
    assert state.status == "up"
    expected = rules.expected_after(HOUR, state.last_ping_at)
    assert expected == at(11, 0)
    assert rules.next_alert(state, expected) == at(11, 0)
    assert rules.status_at(state, expected, at(10, 59, 59)) == "up"
    assert rules.status_at(state, expected, at(11, 0)) == "late"
    late = replace(state, status="late")
    assert rules.status_at(late, expected, at(11, 4, 58)) == "late"
    assert rules.next_alert(late, expected) == at(11, 5)
    # the ping at 11:04:59 makes it up, expected again at 12:04:59, down at 12:09:59
    state, types = pings(late, ("success", at(11, 4, 59)))
    assert types == ["monitor.pinged", "monitor.up"] and state.status == "up"
    expected = rules.expected_after(HOUR, state.last_ping_at)
    assert expected == at(12, 4, 59)
    assert rules.status_at(state, expected, at(12, 4, 58)) == "up"
    assert rules.status_at(state, expected, at(12, 4, 59)) == "late"
    assert rules.status_at(replace(state, status="late"), expected, at(12, 9, 58)) == "late"
    assert rules.status_at(replace(state, status="late"), expected, at(12, 9, 59)) == "down"
    event, data = rules.time_transition(replace(state, status="late"), "down", expected)
    assert (event, data["reason"], data["deadline"]) == ("monitor.down", "overdue", at(12, 9, 59))
    event, data = rules.time_transition(state, "late", expected)
    assert (event, data["expected_at"], data["deadline"]) == (
        "monitor.late", at(12, 4, 59), at(12, 9, 59))


def test_m01_ping_after_the_deadline_is_down_then_up() -> None:
    state, _ = pings(monitor(), ("success", at(10, 0)))
    expected = rules.expected_after(HOUR, state.last_ping_at)
    assert rules.status_at(replace(state, status="late"), expected, at(11, 5)) == "down"
    state, types = pings(replace(state, status="down"), ("success", at(11, 5, 1)))
    assert types == ["monitor.pinged", "monitor.up"] and state.status == "up"


@pytest.mark.parametrize("status", ["new", "up", "late", "paused"])
def test_a_start_must_be_followed_within_grace_whatever_the_status(status: str) -> None:
    state, types = pings(monitor(status=status), ("start", at(10, 0)))
    assert types == ["monitor.pinged"] and state.status == status
    assert state.last_start_at == at(10, 0)
    # up: not due for a long while; late: since 10:01, so down at 10:06 but for the start
    expected = {"up": at(23, 0), "late": at(10, 1)}.get(status)
    assert rules.next_alert(state, expected) == at(10, 5)
    assert rules.status_at(state, expected, at(10, 4, 59)) == status
    assert rules.status_at(state, expected, at(10, 5)) == "down"
    event, data = rules.time_transition(state, "down", expected)
    assert (event, data["reason"], data["started_at"], data["deadline"]) == (
        "monitor.down", "start_timeout", at(10, 0), at(10, 5))


@pytest.mark.parametrize("status", ["new", "paused", "down"])
def test_new_paused_and_down_never_change_with_time_alone(status: str) -> None:
    state = monitor(status=status, last_ping_at=at(0, 0))
    assert rules.next_alert(state, None) is None
    assert rules.status_at(state, None, at(23, 59)) == status
    assert rules.timing(state, HOUR, at(23, 59)) == (None, None)


def test_timing_asks_the_checker_at_once_when_the_stored_status_is_stale() -> None:
    state = monitor(status="up", last_ping_at=at(8, 0))  # e.g. after a PATCH of the schedule
    assert rules.timing(state, HOUR, at(10, 0)) == (at(9, 0), at(10, 0))
    assert rules.timing(state, HOUR, at(8, 30)) == (at(9, 0), at(9, 0))


# -- a ping (docs/heartbeats.md, Pinging) --------------------------------------------------------
@pytest.mark.parametrize("kind", ["success", "start", "fail", "log"])
def test_a_paused_monitor_with_manual_resume_ignores_every_ping(kind: str) -> None:
    state = monitor(status="paused", manual_resume=True)
    outcome = rules.ping(state, kind=kind, method="POST", rid=None, at=at(10, 0))
    assert outcome.action == "ignored"
    assert [e for e, _ in outcome.events] == ["monitor.pinged"]
    assert outcome.events[0][1]["kind"] == "ignored"
    assert outcome.state == replace(state, version=2)


@pytest.mark.parametrize(("method", "action"), [("GET", "ignored"), ("HEAD", "ignored"),
                                                ("POST", "success")])
def test_methods_post_ignores_get_and_head(method: str, action: str) -> None:
    outcome = rules.ping(monitor(methods="post"), kind="success", method=method, rid=None,
                         at=at(10, 0))
    assert outcome.action == action
    assert outcome.state.status == ("up" if action == "success" else "new")


def test_a_ping_resumes_a_paused_monitor_without_manual_resume() -> None:
    state, types = pings(monitor(status="paused"), ("success", at(10, 0)))
    assert (state.status, types) == ("up", ["monitor.pinged", "monitor.up"])
    state, types = pings(monitor(status="paused"), ("fail", at(10, 0)))
    assert (state.status, types) == ("down", ["monitor.pinged", "monitor.down"])


def test_events_and_versions_of_a_ping() -> None:
    outcome = rules.ping(monitor(status="up", version=7), kind="fail", method="GET", rid=R1,
                         at=at(10, 0), exit_status=3)
    assert outcome.events == (
        ("monitor.pinged", {"kind": "fail", "method": "GET", "rid": R1, "exit_status": 3,
                            "duration_ms": None, "requested": "fail"}),
        ("monitor.down", {"previous_status": "up", "reason": "fail", "exit_status": 3}))
    assert outcome.state.version == 9
    # no change of status: only monitor.pinged, one version
    for kind in ("fail", "log", "start"):
        again = rules.ping(outcome.state, kind=kind, method="GET", rid=None, at=at(10, 1))
        assert [e for e, _ in again.events] == ["monitor.pinged"]
        assert again.state.version == 10 and again.state.status == "down"
    up = rules.ping(outcome.state, kind="success", method="GET", rid=None, at=at(10, 2))
    assert up.events[1] == ("monitor.up", {"previous_status": "down", "reason": "ping"})


@pytest.mark.parametrize(("start_rid", "kind", "rid", "closes", "duration"), [
    (None, "success", None, True, 42_500),  # no rid on both sides: a match
    (R1, "success", R1, True, 42_500),
    (R1, "success", R2, False, None),  # another run's end leaves the start alone
    (R1, "success", None, True, None),  # a success without rid closes any start
    (None, "success", R1, False, None),
    (R1, "fail", R2, True, None),  # a failure closes any start
    (R1, "fail", R1, True, 42_500),
    (None, "fail", R1, True, None),
    (R1, "log", R1, False, None),  # a log changes nothing
])
def test_rid_pairing_and_duration(start_rid: uuid.UUID | None, kind: str,
                                  rid: uuid.UUID | None, closes: bool,
                                  duration: int | None) -> None:
    started, _ = pings(monitor(status="up"), ("start", at(10, 0), start_rid))
    state, _ = pings(started, (kind, at(10, 0, 42, 500), rid))
    assert (state.last_start_at is None) == closes
    assert state.last_start_rid == (None if closes else start_rid)
    if kind != "log":
        assert state.last_ping_at == at(10, 0, 42, 500)
        assert state.last_duration_ms == duration


def test_duration_is_floored_to_the_millisecond() -> None:
    started, _ = pings(monitor(), ("start", at(10, 0)))
    end = at(10, 0, 1) + timedelta(microseconds=999)
    assert rules.ping_duration_ms(started, "success", None, end) == 1000
    assert rules.ping_duration_ms(started, "log", None, end) is None


def test_what_the_ping_statement_writes_for_the_time() -> None:
    before = monitor(alert_at=at(12, 0))
    state, _ = pings(monitor(), ("success", at(10, 0)))
    # a period: the expected instant, alert_at only ever earlier
    assert rules.ping_timing(state, before, 3600.0, at(10, 0)) == (at(11, 0), at(11, 0))
    assert rules.ping_timing(state, replace(before, alert_at=at(10, 30)), 3600.0, at(10, 0)) == (
        at(11, 0), at(10, 30))
    # cron: left to the checker, at once
    assert rules.ping_timing(state, before, None, at(10, 0)) == (None, at(10, 0))
    # down: nothing to wait for, the stored alert_at stays (the checker clears it)
    down, _ = pings(state, ("fail", at(10, 1)))
    assert rules.ping_timing(down, before, 3600.0, at(10, 1)) == (None, at(12, 0))


# -- alerts ---------------------------------------------------------------------------------------
ALERTS = {("up", "down"): "down", ("late", "down"): "down", ("new", "down"): "down",
          ("paused", "down"): "down", ("down", "up"): "up"}


@pytest.mark.parametrize("before", STATUSES)
@pytest.mark.parametrize("after", STATUSES)
def test_the_alert_edge(before: str, after: str) -> None:
    assert rules.alert_for(before, after) == ALERTS.get((before, after))


# -- run-time bounds (docs/heartbeats.md, Run-time bounds) ----------------------------------------
def test_a_success_sooner_than_min_duration_is_a_failure() -> None:
    state = monitor(status="up", min_duration=120)
    state, _ = pings(state, ("start", at(3, 0)))
    short = rules.ping(state, kind="success", method="GET", rid=None, at=at(3, 0, 4))
    assert short.state.status == "down"
    assert short.events[1] == ("monitor.down", {"previous_status": "up", "reason": "too_short",
                                                "duration_ms": 4000, "min_duration": 120})
    assert short.events[0][1]["kind"] == "success"  # the ping as sent
    exact = rules.ping(state, kind="success", method="GET", rid=None, at=at(3, 2))
    assert exact.state.status == "up"  # 120 s is not shorter than 120 s
    unpaired = rules.ping(monitor(status="up", min_duration=120), kind="success", method="GET",
                          rid=None, at=at(3, 0))
    assert unpaired.state.status == "up"  # no start: no duration to judge


def test_max_duration_is_the_only_deadline_of_a_started_run() -> None:
    state = monitor(status="up", max_duration=7200, last_ping_at=at(2, 0))
    expected = rules.expected_after(HOUR, at(2, 0))  # 03:00, down at 03:05 without a start
    assert rules.next_alert(state, expected) == at(3, 0)
    started = replace(state, last_start_at=at(3, 0))
    assert rules.next_alert(started, expected) == at(5, 0)
    assert rules.status_at(started, expected, at(3, 10)) == "up"  # not overdue: it started
    assert rules.status_at(started, expected, at(5, 0)) == "down"
    assert rules.time_transition(started, "down", expected)[1]["reason"] == "too_long"
    # without max_duration a start has the grace, and the schedule's deadline stays
    plain = replace(started, max_duration=None)
    assert rules.next_alert(plain, expected) == at(3, 0)
    assert rules.time_transition(plain, "down", expected)[1]["reason"] == "start_timeout"
    late = rules.time_transition(replace(state, status="late"), "down", expected)
    assert late[1]["reason"] == "overdue"


# -- keywords (healthchecks' hc/api/tests/test_ping.py, filter_http_body) -----------------------
@pytest.mark.parametrize(("keywords", "body", "kind", "action"), [
    # test_it_handles_success_filter_match / _miss
    ({"success_keywords": ["SUCCESS"]}, b"SUCCESS!", "success", "success"),
    ({"success_keywords": ["SUCCESS"]}, b"hello world", "success", "ignored"),
    # test_it_handles_failure_filter_match / _miss
    ({"failure_keywords": ["FAIL"]}, b"FAIL!", "success", "fail"),
    ({"failure_keywords": ["FAIL"]}, b"---", "success", "ignored"),
    # test_it_handles_start_filter_match
    ({"start_keywords": ["START"]}, b"STARTING", "success", "start"),
    # case-sensitive, failure first, then success, then start; the URL's kind does not count
    ({"failure_keywords": ["ERROR"]}, b"error: none", "fail", "ignored"),
    ({"failure_keywords": ["ERROR"], "success_keywords": ["OK"]}, b"OK ERROR", "log", "fail"),
    ({"success_keywords": ["OK"], "start_keywords": ["go"]}, b"go OK", "start", "success"),
    ({"success_keywords": ["OK"]}, None, "success", "ignored"),  # no body: nothing matches
    ({"success_keywords": ["d\u00e9j\u00e0"]}, "d\u00e9j\u00e0 vu".encode(), "log", "success"),
    ({"success_keywords": ["OK"]}, b"\xff\xfeOK", "log", "success"),  # not UTF-8: searched
    ({}, b"FAIL", "success", "success"),  # no keywords: the URL decides
])
def test_keywords_decide_the_action_as_healthchecks(keywords: dict[str, Any], body: bytes | None,
                                                    kind: str, action: str) -> None:
    state = monitor(status="up", **keywords)
    outcome = rules.ping(state, kind=kind, method="POST", rid=None, at=at(3, 0), body=body)
    assert outcome.action == action
    assert outcome.events[0][1]["requested"] == kind


def test_ignored_wins_over_keywords() -> None:
    # test_manual_resume_takes_precedence_over_keywords, test_allowed_methods_takes_precedence
    paused = monitor(status="paused", manual_resume=True, success_keywords=["SUCCESS"])
    assert rules.ping(paused, kind="success", method="POST", rid=None, at=at(3, 0),
                      body=b"SUCCESS!").action == "ignored"
    post = monitor(status="up", methods="post", failure_keywords=["FAIL"])
    assert rules.ping(post, kind="success", method="GET", rid=None, at=at(3, 0),
                      body=b"FAIL").action == "ignored"


def test_a_failure_keyword_says_so_in_the_down_event() -> None:
    state = monitor(status="up", failure_keywords=["Traceback"])
    outcome = rules.ping(state, kind="success", method="POST", rid=None, at=at(3, 0),
                         body=b"Traceback (most recent call last)")
    assert outcome.events[1] == ("monitor.down", {"previous_status": "up",
                                                  "reason": "failure_keyword",
                                                  "exit_status": None})


def test_replaced_is_dataclasses_replace() -> None:
    state = monitor_state()
    at = datetime(2026, 11, 1, tzinfo=UTC)
    changed = state.replaced(status="down", last_ping_at=at, version=state.version + 2)
    assert changed == replace(state, status="down", last_ping_at=at, version=state.version + 2)
    assert changed is not state and state.replaced() == state and state.status != "down"
    with pytest.raises(TypeError, match="no field 'colour'"):
        state.replaced(colour="red")
