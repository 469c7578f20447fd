"""The failure-tolerance rule jobs and monitors share (core/alerting.py:tolerate)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from core.alerting import Streak, normalize_threshold, tolerate
from core.errors import FieldErrors
from core.monitors import rules
from core.schedule import parse_schedule

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def run(outcomes: str, alert_after: int, recover_after: int) -> list[str | None]:
    """``outcomes`` as letters (F failure, S success); the alert after each."""
    streak, out = Streak(), []
    for letter in outcomes:
        streak, alert = tolerate(streak, "failure" if letter == "F" else "success",
                                 alert_after=alert_after, recover_after=recover_after)
        out.append(alert)
    return out


def test_the_defaults_alert_at_the_first_failure_and_recover_at_the_first_success() -> None:
    assert run("FFSFS", 1, 1) == ["failure", None, "recovery", "failure", "recovery"]


def test_failures_must_come_in_a_row_and_a_short_run_ends_silently() -> None:
    assert run("FFSFFF", 3, 1) == [None, None, None, None, None, "failure"]
    assert run("FFS", 3, 1) == [None, None, None]  # nothing said, nothing taken back


def test_recovery_waits_for_good_ones_in_a_row_and_a_failure_restarts_the_count() -> None:
    assert run("FSSFSSS", 1, 3) == ["failure", None, None, None, None, None, "recovery"]


def test_an_open_alert_is_not_said_twice() -> None:
    assert run("FFFFF", 2, 1) == [None, "failure", None, None, None]


@pytest.mark.parametrize("value", [0, 1001, True, "2", 1.5, None])
def test_a_threshold_outside_1_to_1000_is_refused_naming_the_field(value: object) -> None:
    errors = FieldErrors()
    normalize_threshold(value, "recover_after_successes", errors)
    assert [e.field for e in errors.items] == ["recover_after_successes"]


def test_what_a_ping_counts_as() -> None:
    assert rules.ping_outcome("fail", "down") == "failure"
    assert rules.ping_outcome("success", "down") == "failure"  # a run too short
    assert rules.ping_outcome("success", "up") == "success"
    assert rules.ping_outcome("start", "up") is None
    assert rules.ping_outcome("ignored", "down") is None


def test_the_next_missed_slot_is_the_one_after_the_slot_counted() -> None:
    hourly = parse_schedule("1h", "UTC", anchor=T0)
    assert rules.next_miss(hourly, 300, T0) == (T0 + timedelta(hours=1),
                                               T0 + timedelta(hours=1, minutes=5))
    daily = parse_schedule("0 3 * * *", "Europe/Paris", anchor=T0)
    expected, deadline = rules.next_miss(daily, 900, T0) or (None, None)
    assert expected == datetime(2026, 12, 1, 2, 0, tzinfo=UTC)  # 03:00 in Paris
    assert deadline == expected + timedelta(minutes=15)
