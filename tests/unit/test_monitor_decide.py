"""The monitor stream's decisions without a database (core/monitors/decide.py): what a PATCH
and a pause or resume append, from the state the fold gives."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.errors import Conflict, InvalidInput
from core.monitors.decide import (
    CreateMonitor,
    DeleteMonitor,
    PauseMonitor,
    RotateToken,
    UpdateMonitor,
    decide_create,
    decide_delete,
    decide_pause,
    decide_rotate,
    decide_update,
)
from core.monitors.definition import normalize_definition
from core.monitors.state import MonitorState, evolve

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
LATER = T0 + timedelta(hours=1)


def _monitor(**overrides: Any) -> MonitorState:
    """A monitor's state after ``monitor.created`` (then ``overrides``)."""
    definition = normalize_definition({"name": "backup", "schedule": "@every 1h"}, now=T0)
    state = evolve(None, {"event_type": "monitor.created", "stream_id": uuid.uuid4(),
                          "team_id": uuid.uuid4(), "stream_version": 1, "occurred_at": T0,
                          "data": {**definition, "status": "new",
                                   "ping_token_hash": "00" * 32}})
    return dataclasses.replace(state, **overrides)


def test_a_rename_is_one_update_with_that_change() -> None:
    update = decide_update(_monitor(), UpdateMonitor({"name": "nightly backup"}, LATER))
    assert update.events == [("monitor.updated", {"changes": {"name": "nightly backup"}})]
    assert update.changes == {"name": "nightly backup"}


def test_the_same_values_and_unknown_fields_decide_nothing() -> None:
    update = decide_update(_monitor(), UpdateMonitor({"name": "backup", "status": "down"}, LATER))
    assert update.events == [] and update.changes == {}


def test_a_new_schedule_drops_the_old_words_and_carries_its_period() -> None:
    [(kind, data)] = decide_update(_monitor(schedule_text="every hour"),
                                   UpdateMonitor({"schedule": "@every 2h"}, LATER)).events
    assert kind == "monitor.updated"
    assert data["changes"]["schedule_text"] is None
    assert data["changes"]["period_seconds"] == 7200


def test_a_broken_monitor_is_repaired_by_a_valid_patch_and_a_bad_one_is_refused() -> None:
    broken = _monitor(broken_at=T0, broken_reason="unknown time zone")
    assert decide_update(broken, UpdateMonitor({}, LATER)).events == [
        ("monitor.repaired", {"previous_reason": "unknown time zone"})]
    with pytest.raises(InvalidInput):
        decide_update(_monitor(), UpdateMonitor({"grace_seconds": -1}, LATER))


def test_pause_and_resume() -> None:
    assert decide_pause(_monitor(), PauseMonitor(True)) == [("monitor.paused", {})]
    assert decide_pause(_monitor(), PauseMonitor(False)) is None  # not paused: nothing to resume
    assert decide_pause(_monitor(status="paused"), PauseMonitor(True)) is None
    assert decide_pause(_monitor(status="paused"), PauseMonitor(False)) == [("monitor.resumed", {})]
    assert decide_pause(_monitor(broken_at=T0, broken_reason="r"), PauseMonitor(False)) == [
        ("monitor.repaired", {"previous_reason": "r"})]
    with pytest.raises(Conflict):
        decide_pause(_monitor(broken_at=T0, broken_reason="r", timezone="Mars/Base"),
                     PauseMonitor(False))


def test_a_delete_and_a_token_rotation_are_one_event_each() -> None:
    assert decide_delete(_monitor(), DeleteMonitor()) == [("monitor.deleted", {})]
    assert decide_rotate(_monitor(), RotateToken(b"\x01\xab")) == [
        ("monitor.token_rotated", {"ping_token_hash": "01ab"})]


def test_a_create_is_one_created_event_new_with_the_token_hash() -> None:
    definition = normalize_definition({"name": "backup", "schedule": "1h"}, now=T0)
    [(kind, data)] = decide_create(CreateMonitor({**definition, "slug": "backup"}, b"\xff"))
    assert kind == "monitor.created"
    assert (data["status"], data["ping_token_hash"], data["slug"]) == ("new", "ff", "backup")
