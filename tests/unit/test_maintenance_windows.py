"""The rules of maintenance windows (core/maintenance/windows.py) and their input checks."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from core.errors import InvalidInput
from core.maintenance.definition import normalize_window, snooze_seconds
from core.maintenance.state import WindowState
from core.maintenance.windows import (
    closings,
    covers,
    in_maintenance_until,
    next_closing,
    occurrence_at,
)

T0 = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)
JOB, MONITOR = uuid.uuid4(), uuid.uuid4()


def window(**fields: object) -> WindowState:
    base: dict[str, object] = {
        "id": uuid.uuid4(), "team_id": uuid.uuid4(), "starts_at": None, "ends_at": None,
        "schedule": None, "timezone": None, "duration_seconds": None, "jobs": [],
        "monitors": [], "tags": [], "suppress": "alerts", "comment": None, "ended_at": None,
        "released_until": None, "version": 1, "created_at": T0, "updated_at": T0}
    return WindowState.from_row({**base, **fields})


def test_a_recurring_window_is_in_effect_from_each_fire_for_its_duration() -> None:
    w = window(schedule="0 3 * * *", timezone="UTC", duration_seconds=3600)
    three = T0 + timedelta(hours=3)
    assert occurrence_at(w, three - timedelta(seconds=1)) is None
    assert occurrence_at(w, three) == (three, three + timedelta(hours=1))
    assert occurrence_at(w, three + timedelta(minutes=59)) == (three, three + timedelta(hours=1))
    assert occurrence_at(w, three + timedelta(hours=1)) is None
    assert closings(w, T0, T0 + timedelta(days=2)) == [
        three + timedelta(hours=1), three + timedelta(days=1, hours=1)]
    assert next_closing(w, T0) == three + timedelta(hours=1)
    ended = window(schedule="0 3 * * *", timezone="UTC", duration_seconds=3600,
                   ended_at=three + timedelta(minutes=10))
    assert occurrence_at(ended, three) == (three, three + timedelta(minutes=10))
    assert closings(ended, T0, T0 + timedelta(days=2)) == [three + timedelta(minutes=10)]
    assert next_closing(ended, three + timedelta(minutes=10)) is None


def test_one_off_windows_and_the_selector() -> None:
    w = window(starts_at=T0, ends_at=T0 + timedelta(hours=2), jobs=[JOB], tags=["db"])
    assert covers(w, "job", JOB) and not covers(w, "monitor", JOB)
    assert covers(w, "monitor", MONITOR, ["db"]) and not covers(w, "monitor", MONITOR)
    team = window(starts_at=T0, ends_at=T0 + timedelta(hours=1))
    assert covers(team, "monitor", MONITOR)
    at = T0 + timedelta(minutes=30)
    assert in_maintenance_until([w, team], "job", JOB, at) == T0 + timedelta(hours=2)
    assert in_maintenance_until([w, team], "job", JOB, at, suppress="runs") is None
    assert in_maintenance_until([w], "monitor", MONITOR, at) is None
    assert closings(w, T0, T0 + timedelta(hours=2)) == [T0 + timedelta(hours=2)]
    assert closings(w, T0 + timedelta(hours=2), T0 + timedelta(hours=3)) == []


@pytest.mark.parametrize("fields", [
    {}, {"from": T0}, {"from": T0, "to": T0}, {"from": T0, "to": T0 + timedelta(days=400)},
    {"schedule": "0 3 * * *"}, {"schedule": "0 3 * * *", "duration_seconds": 0},
    {"schedule": "bad", "duration_seconds": 60},
    {"from": T0, "to": T0 + timedelta(hours=1), "schedule": "0 3 * * *"},
    {"from": "2026-01-01T00:00:00", "to": "2026-01-02T00:00:00Z"},
    {"from": T0, "to": T0 + timedelta(hours=1), "jobs": ["nope"]},
    {"from": T0, "to": T0 + timedelta(hours=1), "suppress": "all"},
    {"from": T0, "to": T0 + timedelta(hours=1), "tags": [""]},
    {"from": datetime(1, 1, 1, tzinfo=UTC), "to": T0},
])
def test_bad_windows_are_refused(fields: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        normalize_window(fields, anchor=T0)


def test_snooze_durations() -> None:
    assert snooze_seconds("2h") == 7200 and snooze_seconds("1d") == 86400
    assert snooze_seconds(1800) == 1800
    for bad in ("10s", "31d", "soon", True, None):
        with pytest.raises(InvalidInput):
            snooze_seconds(bad)
