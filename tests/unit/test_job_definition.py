"""A job's request and retry policy as frozen values (core/job_definition.py): they give back
the objects the events carry, key for key, so typed state changes no payload of the log; and a
row edited by hand is still reported, not raised (core/stored.py)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from core.events import to_json
from core.job_definition import Request, RetryPolicy
from core.jobs.decide import UpdateJob, decide_update
from core.jobs.definition import normalize_definition
from core.jobs.state import JobState, evolve
from core.schedule import cached_schedule
from core.stored import job_problem

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
REQUEST = {"method": "post", "url": "https://example.com/hook?x=${secrets.TOKEN}",
           "headers": {"X-Key": "${secrets.KEY}"}, "body": '{"a": 1}'}
RETRY = {"attempts": 3, "backoff": "linear", "delay_seconds": 5}


def _definition() -> dict[str, Any]:
    return normalize_definition({"name": "backup", "schedule": "0 3 * * *", "timezone": "UTC",
                                 "request": REQUEST, "retry": RETRY}, anchor=T0, now=T0)


def _state(definition: dict[str, Any]) -> JobState:
    return evolve(None, {"event_type": "job.created", "stream_id": uuid.uuid4(),
                         "team_id": uuid.uuid4(), "stream_version": 1, "occurred_at": T0,
                         "data": {**definition, "status": "active", "anchor_at": T0,
                                  "signing": False}})


def test_the_objects_of_a_definition_come_back_byte_for_byte() -> None:
    definition = _definition()
    request = Request.from_json(definition["request"])
    retry = RetryPolicy.from_json(definition["retry"])
    assert (request.method, request.headers["X-Key"], request.body) == \
        ("POST", "${secrets.KEY}", '{"a": 1}')
    assert (retry.attempts, retry.backoff, retry.delay_seconds, retry.max_delay_seconds) == \
        (3, "linear", 5.0, 300.0)
    assert to_json(request.to_json()) == to_json(definition["request"])
    assert to_json(retry.to_json()) == to_json(definition["retry"])


def test_the_folded_state_holds_typed_objects_and_a_same_patch_appends_nothing() -> None:
    definition = _definition()
    state = _state(definition)
    assert isinstance(state.request, Request) and isinstance(state.retry, RetryPolicy)
    assert state.secret_names == ["KEY", "TOKEN"]
    assert state.definition()["request"] == definition["request"]
    assert JobState.from_row(state.as_row()) == state  # the jobs row holds the JSON objects
    same = decide_update(state, UpdateJob({"request": REQUEST, "retry": RETRY}, T0))
    assert same.events == []
    moved = decide_update(state, UpdateJob({"request": {"url": "https://example.com/b"}}, T0))
    changed = moved.events[0][1]["changes"]
    assert to_json(changed["request"]) == to_json({**definition["request"],
                                                   "url": "https://example.com/b"})


def test_a_row_edited_by_hand_is_reported_not_raised() -> None:
    state = _state(_definition())
    row = {**state.as_row(), "request": {"method": "GET"}, "retry": "three"}
    job = JobState.from_row(row)
    assert job.request.url is None and job.retry.attempts is None
    assert job_problem(job.as_row(), cached_schedule)[1] == "the stored request has no valid url"
    fixed = {**row, "request": REQUEST}
    assert job_problem(JobState.from_row(fixed).as_row(), cached_schedule)[1] == \
        "the stored retry policy has no valid attempts"
