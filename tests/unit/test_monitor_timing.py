"""Heartbeat timing of ``core/monitors/rules.py``: expected instant, status, next alert.

Rules checked (docs/heartbeats.md, "States"; healthchecks.io's ``get_grace_start``,
``going_down_after`` and ``get_status``):

- **up**: the next ping is expected at ``last_ping_at + period`` for a period schedule, or at
  the first fire of the cron schedule strictly after ``last_ping_at`` in the monitor's zone;
- **late** from the expected instant (inclusive) until expected + grace; **down** at
  expected + grace (inclusive). Worked example (shared case M01): period 1 h, grace 5 min,
  pings at 10:00:00 and 11:04:59 - late at 11:00:00 and still at 11:04:58; expected again at
  12:04:59 (late then), down at 12:09:59; with the second ping at 11:05:01 instead, down at
  11:05:00;
- a ``/start`` not followed by a success or failure within the grace makes the monitor down
  at ``start + grace``, whatever the status (new and paused included);
- ``new``, ``paused`` and ``down`` never change with time, except through a pending start.

"""

from __future__ import annotations

from datetime import datetime

import pytest

from core.monitors.rules import expected_after, next_alert, status_at, timing
from core.monitors.state import MonitorState
from core.schedule import Schedule, parse_schedule
from tests.unit.instants import utc
from tests.unit.monitor_states import monitor_state

ANCHOR = utc("2026-01-01T00:00:00Z")
GRACE = 300  # 5 minutes


def t(hms: str) -> datetime:
    return utc(f"2026-12-01T{hms}Z")


def sched(expression: str, zone: str = "UTC") -> Schedule:
    return parse_schedule(expression, zone, anchor=ANCHOR)


def state(status: str, start: datetime | None = None, grace: int = GRACE,
          last_ping: datetime | None = None) -> MonitorState:
    return monitor_state(status=status, grace_seconds=grace, last_start_at=start,
                         last_ping_at=last_ping)


# --- expected_after ------------------------------------------------------------------------
@pytest.mark.parametrize(("expression", "zone", "last_ping", "expected"), [
    ("1h", "UTC", t("11:04:59"), t("12:04:59")),
    ("@every 1h", "UTC", t("10:00:00"), t("11:00:00")),
    ("90s", "UTC", t("10:00:00.5"), t("10:01:30.5")),
    ("1d", "UTC", t("03:00:07"), utc("2026-12-02T03:00:07Z")),
    ("@every 1h30m", "Europe/Paris", t("23:00:00"), utc("2026-12-02T00:30:00Z")),
    ("0 * * * *", "UTC", t("11:04:59"), t("12:00:00")),
    ("0 * * * *", "UTC", t("11:00:00"), t("12:00:00")),          # strictly after
    ("0 * * * *", "UTC", t("10:59:59.999"), t("11:00:00")),
    ("*/15 * * * *", "UTC", t("11:04:59"), t("11:15:00")),
    ("@daily", "UTC", t("00:00:01"), utc("2026-12-02T00:00:00Z")),
    ("0 3 * * *", "Europe/Paris", t("01:00:00"), t("02:00:00")),  # 03:00 CET = 02:00Z
    # fixed-time 01:30 in New York on the fall-back night: expected at the first 01:30 (EDT)
    ("30 1 * * *", "America/New_York", utc("2024-11-03T04:00:00Z"),
     utc("2024-11-03T05:30:00Z")),
    # pinged during the second 01:00-01:59 (EST): next is the following night
    ("30 1 * * *", "America/New_York", utc("2024-11-03T06:10:00Z"),
     utc("2024-11-04T06:30:00Z")),
    ("*/30 * * * * *", "UTC", t("10:00:10"), t("10:00:30")),
])
def test_expected_after(expression: str, zone: str, last_ping: datetime,
                        expected: datetime) -> None:
    assert expected_after(sched(expression, zone), last_ping) == expected


@pytest.mark.parametrize("expression", ["1h", "0 * * * *"])
def test_expected_after_before_the_first_ping(expression: str) -> None:
    assert expected_after(sched(expression), None) is None


# --- status_at: M01 and the boundaries to the second ------------------------------------
EXPECTED = t("12:04:59")  # ping at 11:04:59, period 1 h

STATUS_ROWS = [
    # (id, stored status, last_start_at, expected, now, answer)
    ("up-before-expected", "up", None, EXPECTED, t("12:04:58"), "up"),
    ("up-at-expected-is-late", "up", None, EXPECTED, t("12:04:59"), "late"),
    ("up-inside-grace", "up", None, EXPECTED, t("12:09:58"), "late"),
    ("up-at-expected-plus-grace-is-down", "up", None, EXPECTED, t("12:09:59"), "down"),
    ("up-long-after", "up", None, EXPECTED, t("18:00:00"), "down"),
    ("late-inside-grace", "late", None, EXPECTED, t("12:05:00"), "late"),
    ("late-just-before-deadline", "late", None, EXPECTED, t("12:09:58.999"), "late"),
    ("late-at-deadline", "late", None, EXPECTED, t("12:09:59"), "down"),
    # a schedule change moved the expected instant out: on time again
    ("late-before-expected-is-up", "late", None, EXPECTED, t("12:00:00"), "up"),
    # M01: first ping 10:00:00 -> expected 11:00:00
    ("m01-late-at-11", "up", None, t("11:00:00"), t("11:00:00"), "late"),
    ("m01-still-late-11:04:58", "late", None, t("11:00:00"), t("11:04:58"), "late"),
    ("m01-down-at-11:05:00", "late", None, t("11:00:00"), t("11:05:00"), "down"),
    ("up-without-expectation", "up", None, None, t("18:00:00"), "up"),
    # new, paused, down, deleted never change with time alone
    ("new-stays-new", "new", None, None, t("23:59:59"), "new"),
    ("new-ignores-an-expected-instant", "new", None, EXPECTED, t("23:59:59"), "new"),
    ("paused-stays-paused", "paused", None, EXPECTED, t("23:59:59"), "paused"),
    ("down-stays-down", "down", None, EXPECTED, t("12:00:00"), "down"),
    ("down-with-start-stays-down", "down", t("11:00:00"), EXPECTED, t("11:00:00"), "down"),
    ("deleted-stays-deleted", "deleted", t("11:00:00"), EXPECTED, t("23:00:00"), "deleted"),
    # a pending /start: down at start + grace, whatever the status
    ("new-start-before-timeout", "new", t("10:00:00"), None, t("10:04:59"), "new"),
    ("new-start-timeout", "new", t("10:00:00"), None, t("10:05:00"), "down"),
    ("paused-start-before-timeout", "paused", t("10:00:00"), None, t("10:04:59.999"), "paused"),
    ("paused-start-timeout", "paused", t("10:00:00"), None, t("10:05:00"), "down"),
    ("up-start-timeout-before-expected", "up", t("11:30:00"), EXPECTED, t("11:35:00"), "down"),
    ("up-start-pending", "up", t("11:30:00"), EXPECTED, t("11:34:59"), "up"),
    ("late-start-timeout-first", "late", t("12:00:00"), EXPECTED, t("12:05:00"), "down"),
    ("late-start-pending", "late", t("12:00:00"), EXPECTED, t("12:04:59.999"), "late"),
]


@pytest.mark.parametrize(("name", "status", "start", "expected", "now", "answer"), STATUS_ROWS,
                         ids=[row[0] for row in STATUS_ROWS])
def test_status_at(name: str, status: str, start: datetime | None, expected: datetime | None,
                   now: datetime, answer: str) -> None:
    assert status_at(state(status, start), expected, now) == answer


@pytest.mark.parametrize(("grace", "now", "answer"), [
    (1, t("12:04:59"), "late"),
    (1, t("12:05:00"), "down"),
    (3600, t("13:04:58"), "late"),
    (3600, t("13:04:59"), "down"),
])
def test_status_at_other_graces(grace: int, now: datetime, answer: str) -> None:
    assert status_at(state("up", grace=grace), EXPECTED, now) == answer


def test_m01_second_ping_just_in_time() -> None:
    """Pings at 10:00:00 and 11:04:59: up again, expected at 12:04:59, down at 12:09:59."""
    schedule = sched("1h")
    expected = expected_after(schedule, t("11:04:59"))
    assert expected == t("12:04:59")
    assert [status_at(state("up"), expected, now)
            for now in (t("12:04:58"), t("12:04:59"), t("12:09:58"), t("12:09:59"))] == \
        ["up", "late", "late", "down"]


# --- next_alert: the next instant the stored status may change by time alone ---------------
NEXT_ROWS = [
    ("up-alerts-at-expected", "up", None, EXPECTED, EXPECTED),
    ("late-alerts-at-deadline", "late", None, EXPECTED, t("12:09:59")),
    ("down-never", "down", None, EXPECTED, None),
    ("down-with-start-never", "down", t("11:00:00"), EXPECTED, None),
    ("deleted-never", "deleted", t("11:00:00"), EXPECTED, None),
    ("new-never", "new", None, None, None),
    ("paused-never", "paused", None, EXPECTED, None),
    ("new-start-deadline", "new", t("10:00:00"), None, t("10:05:00")),
    ("paused-start-deadline", "paused", t("10:00:00"), EXPECTED, t("10:05:00")),
    ("up-start-deadline-first", "up", t("11:30:00"), EXPECTED, t("11:35:00")),
    ("up-expected-first", "up", t("12:03:00"), EXPECTED, EXPECTED),
    ("late-start-deadline-first", "late", t("12:00:00"), EXPECTED, t("12:05:00")),
    ("late-deadline-first", "late", t("12:06:00"), EXPECTED, t("12:09:59")),
    ("up-without-expectation", "up", None, None, None),
    ("late-without-expectation", "late", None, None, None),
]


@pytest.mark.parametrize(("name", "status", "start", "expected", "answer"), NEXT_ROWS,
                         ids=[row[0] for row in NEXT_ROWS])
def test_next_alert(name: str, status: str, start: datetime | None, expected: datetime | None,
                    answer: datetime | None) -> None:
    assert next_alert(state(status, start), expected) == answer


# --- timing: (next_expected_at, alert_at) of the projection row ---------------------------
TIMING_ROWS = [
    ("up-on-time", state("up", last_ping=t("11:04:59")), t("11:30:00"),
     (EXPECTED, EXPECTED)),
    ("late-on-its-way-down", state("late", last_ping=t("11:04:59")), t("12:06:00"),
     (EXPECTED, t("12:09:59"))),
    # stored status no longer matches the time: the checker must decide now
    ("up-but-already-late", state("up", last_ping=t("11:04:59")), t("12:05:00"),
     (EXPECTED, t("12:05:00"))),
    ("late-but-on-time-again", state("late", last_ping=t("11:04:59")), t("11:30:00"),
     (EXPECTED, t("11:30:00"))),
    ("new-no-expectation", state("new"), t("11:30:00"), (None, None)),
    ("new-with-start", state("new", start=t("11:29:00")), t("11:30:00"),
     (None, t("11:34:00"))),
    ("paused-ignores-last-ping", state("paused", last_ping=t("11:04:59")), t("18:00:00"),
     (None, None)),
    ("down-ignores-last-ping", state("down", last_ping=t("11:04:59")), t("18:00:00"),
     (None, None)),
]


@pytest.mark.parametrize(("name", "row", "now", "answer"), TIMING_ROWS,
                         ids=[row[0] for row in TIMING_ROWS])
def test_timing(name: str, row: MonitorState, now: datetime,
                answer: tuple[datetime | None, datetime | None]) -> None:
    assert timing(row, sched("1h"), now) == answer
