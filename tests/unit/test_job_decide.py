"""The job stream's decisions without a database (core/jobs/decide.py): what a PATCH and a
pause or resume append, from the state the fold gives."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from core.errors import Conflict, InvalidInput
from core.jobs.decide import (
    CreateJob,
    DeleteJob,
    PauseJob,
    UpdateJob,
    decide_create,
    decide_delete,
    decide_pause,
    decide_update,
)
from core.jobs.definition import normalize_definition
from core.jobs.state import JobState, evolve

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
LATER = T0 + timedelta(hours=1)


def _job(**overrides: Any) -> JobState:
    """A job's state after ``job.created`` (then ``overrides``), as the fold gives it and
    ``job_lock`` reads it."""
    definition = normalize_definition({"name": "backup", "schedule": "0 3 * * *",
                                       "timezone": "UTC",
                                       "request": {"url": "https://example.com/hook"}},
                                      anchor=T0, now=T0)
    state = evolve(None, {"event_type": "job.created", "stream_id": uuid.uuid4(),
                          "team_id": uuid.uuid4(), "stream_version": 1, "occurred_at": T0,
                          "data": {**definition, "status": "active", "anchor_at": T0,
                                   "signing": False}})
    return dataclasses.replace(state, **overrides)


def test_a_rename_is_one_update_with_that_change() -> None:
    update = decide_update(_job(), UpdateJob({"name": "nightly backup"}, LATER))
    assert update.events == [("job.updated", {"changes": {"name": "nightly backup"}})]
    assert update.definition["name"] == "nightly backup" and not update.set_signing


def test_the_same_values_decide_nothing() -> None:
    same = UpdateJob({"name": "backup", "timezone": "UTC"}, LATER)
    assert decide_update(_job(), same).events == []


def test_a_new_schedule_reanchors_at_now_and_drops_the_old_words() -> None:
    [(kind, data)] = decide_update(_job(schedule_text="every day at 3am"),
                                   UpdateJob({"schedule": "0 4 * * *"}, LATER)).events
    assert kind == "job.updated"
    assert data["changes"]["anchor_at"] == LATER and data["changes"]["schedule"] == "0 4 * * *"


def test_request_is_merged_key_by_key() -> None:
    update = decide_update(_job(), UpdateJob({"request": {"method": "POST"}}, LATER))
    assert update.definition["request"]["url"] == "https://example.com/hook"
    assert update.definition["request"]["method"] == "POST"


def test_a_signing_secret_is_set_and_its_removal_only_when_there_is_one() -> None:
    update = decide_update(_job(), UpdateJob({"signing_secret": "s" * 32}, LATER))
    assert update.set_signing and update.events[0][1]["changes"]["signing"] is True
    assert decide_update(_job(), UpdateJob({"signing_secret": None}, LATER)).set_signing is False
    removal = UpdateJob({"signing_secret": None}, LATER)
    assert decide_update(_job(signing=True), removal).set_signing


def test_pausing_in_a_patch_and_repairing_a_broken_job() -> None:
    assert decide_update(_job(), UpdateJob({"paused": True}, LATER)).events == [("job.paused", {})]
    broken = _job(broken_at=T0, broken_reason="unknown time zone")
    assert decide_update(broken, UpdateJob({}, LATER)).events == [
        ("job.repaired", {"previous_reason": "unknown time zone"})]


def test_an_invalid_patch_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidInput) as refused:
        decide_update(_job(), UpdateJob({"timezone": "Mars/Base"}, LATER))
    assert "timezone" in str(refused.value.errors)


def test_pause_and_resume() -> None:
    assert decide_pause(_job(), PauseJob(True, LATER)) == [("job.paused", {})]
    assert decide_pause(_job(), PauseJob(False, LATER)) is None  # already active
    assert decide_pause(_job(status="paused"), PauseJob(True, LATER)) is None
    assert decide_pause(_job(status="paused"), PauseJob(False, LATER)) == [("job.resumed", {})]
    assert decide_pause(_job(broken_at=T0, broken_reason="r"), PauseJob(False, LATER)) == [
        ("job.repaired", {"previous_reason": "r"})]
    with pytest.raises(Conflict, match="completed"):
        decide_pause(_job(status="completed"), PauseJob(True, LATER))
    with pytest.raises(Conflict, match="broken"):
        decide_pause(_job(broken_at=T0, broken_reason="r", timezone="Mars/Base"),
                     PauseJob(False, LATER))


def test_a_delete_is_one_deleted_event() -> None:
    assert decide_delete(_job(), DeleteJob()) == [("job.deleted", {})]


def test_a_create_is_one_created_event_with_status_anchor_and_signing_flag() -> None:
    fields = {"name": "backup", "schedule": "0 3 * * *", "timezone": "UTC", "paused": True,
              "request": {"url": "https://example.com/hook"}, "signing_secret": "s" * 32}
    created = decide_create(CreateJob(fields, T0))
    definition, [(kind, data)] = created.definition, created.events
    assert kind == "job.created" and data["name"] == definition["name"] == "backup"
    assert (data["status"], data["anchor_at"], data["signing"]) == ("paused", T0, True)
    assert "s" * 32 not in repr(data)
    state = evolve(None, {"event_type": kind, "data": data, "stream_id": uuid.uuid4(),
                          "team_id": uuid.uuid4(), "stream_version": 1, "occurred_at": T0})
    assert state.status == "paused" and state.signing and state.anchor_at == T0
