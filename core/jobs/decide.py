"""What a job command decides, without the database: from the job's state (its locked
``jobs`` row or its fold) and the command (a frozen value: :class:`CreateJob`,
:class:`UpdateJob`, :class:`PauseJob`, :class:`DeleteJob`), the events to append.

Pure functions of their arguments (the instant ``now`` of a command is one, UTC), tested
without PostgreSQL (``tests/unit/test_job_decide.py``); :mod:`core.jobs.commands` locks the
row, asks here, does the few writes that are not events (a signing secret, the channel check),
and appends what was decided (:mod:`core.streams`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.errors import Conflict
from core.jobs.definition import DEFINITION_FIELDS, normalize_definition
from core.jobs.state import JobState
from core.schedule import cached_schedule, canonical_form, parse_schedule
from core.schedule.spread import next_fire_time, offset_of
from core.stored import job_problem
from core.streams import Change, Decision


@dataclass(frozen=True, slots=True)
class CreateJob:
    """``POST /v1/jobs``: ``fields``, the body, at ``now`` (UTC; intervals are anchored to
    it)."""

    fields: Mapping[str, Any]
    now: datetime


@dataclass(frozen=True, slots=True)
class UpdateJob:
    """``PATCH /v1/jobs/{id}``: ``fields``, the body (absent fields keep their value), at
    ``now`` (UTC)."""

    fields: Mapping[str, Any]
    now: datetime


@dataclass(frozen=True, slots=True)
class PauseJob:
    """Pause (``paused``) or resume the job at ``now`` (UTC)."""

    paused: bool
    now: datetime


@dataclass(frozen=True, slots=True)
class DeleteJob:
    """Delete the job (its dependents are checked by the command, in the database)."""


@dataclass(frozen=True, kw_only=True)
class Update(Decision):
    """What ``PATCH /v1/jobs/{id}`` decided (:class:`core.streams.Decision`).

    Attributes:
        definition: the whole definition after the patch, normalised (its ``channels`` are
            checked against the team's by the command).
        events: ``job.updated`` (with the changed fields), ``job.paused`` or ``job.resumed``,
            ``job.repaired``, in that order; empty when nothing changes.
        set_signing: whether the job's signing secret is set, replaced or removed.
    """

    set_signing: bool


def decide_create(command: CreateJob) -> Decision:
    """A new job: its definition (normalised; the command checks its ``channels`` and
    ``depends_on`` against the team's) and ``job.created`` (``paused`` makes it ``paused``;
    ``signing: true`` when a signing secret is given, never the secret).

    Raises:
        InvalidInput: the definition is not acceptable.
    """
    fields, now = command.fields, command.now
    definition = normalize_definition(dict(fields), anchor=now, now=now)
    status = "paused" if fields.get("paused") else "active"
    data = {**definition, "status": status, "anchor_at": now,
            "signing": fields.get("signing_secret") is not None}
    return Decision(definition, [("job.created", data)])


def next_fire(state: JobState, now: datetime) -> datetime | None:
    """The job's first fire time after ``now`` (UTC): a slot plus the job's spread offset
    (:func:`core.schedule.spread.next_fire_time`), ``None`` when there is none."""
    schedule = parse_schedule(state.schedule, state.timezone, anchor=state.anchor_at)
    return next_fire_time(schedule, now, offset_of(state.id, state.spread))


def _merged(current: dict[str, Any], fields: Mapping[str, Any]) -> dict[str, Any]:
    """The definition ``current`` with the patch ``fields`` on it (``request`` and ``retry``
    merged key by key; a schedule given anew brings its own words, or none)."""
    merged = dict(current)
    for key, value in fields.items():
        if key in ("request", "retry") and isinstance(value, dict):
            merged[key] = {**merged[key], **value}
        elif key in DEFINITION_FIELDS:
            merged[key] = value
    if "schedule" in fields:
        merged["schedule_text"] = None
    return merged


def _timing_changed(current: dict[str, Any], merged: dict[str, Any],
                    fields: Mapping[str, Any]) -> bool:
    """Whether the patch changes the schedule (in its canonical form) or the time zone."""
    return any(
        canonical_form(merged[k]) != current[k] if k == "schedule" else merged[k] != current[k]
        for k in ("schedule", "timezone") if k in fields
    )


def _status_events(before: JobState, paused: Any) -> list[Change]:
    """A PATCH's ``paused`` (``True``, ``False`` or absent) and the repair of a broken job
    (its patched definition was just validated, so it evaluates again)."""
    events: list[Change] = []
    if paused is True and before.status == "active":
        events.append(("job.paused", {}))
    elif paused is False and before.status == "paused":
        events.append(("job.resumed", {}))
    if before.broken_at is not None:
        events.append(("job.repaired", {"previous_reason": before.broken_reason}))
    return events


def decide_update(before: JobState, command: UpdateJob) -> Update:
    """A partial update: fields absent from ``fields`` keep their value; ``request`` and
    ``retry`` are merged key by key; a schedule or time zone change re-anchors at ``now``; a
    ``signing_secret`` string sets the secret, ``None`` removes it; a broken job whose patched
    definition is valid is repaired.

    Raises:
        InvalidInput: the resulting definition is not acceptable.
    """
    fields, now = command.fields, command.now
    current = before.definition()
    merged = _merged(current, fields)
    timing_changed = _timing_changed(current, merged, fields)
    signing_secret = fields.get("signing_secret")
    definition = normalize_definition({**merged, "signing_secret": signing_secret},
                                      anchor=now if timing_changed else before.anchor_at,
                                      now=now)
    changes = {k: v for k, v in definition.items() if v != current[k]}
    if timing_changed:
        changes["anchor_at"] = now
    set_signing = "signing_secret" in fields and (signing_secret is not None
                                                  or before.signing)
    if set_signing:
        changes["signing"] = signing_secret is not None
    events: list[Change] = [("job.updated", {"changes": changes})] if changes else []
    return Update(definition, events + _status_events(before, fields.get("paused")),
                  set_signing=set_signing)


def broken_conflict(job: JobState) -> Conflict:
    """The refusal of a command that needs a working definition on a broken job."""
    return Conflict(f"job {job.id} is broken ({job.broken_reason}); fix its definition "
                    "with PATCH first")


def decide_pause(before: JobState, command: PauseJob) -> list[Change] | None:
    """Pause or resume: the events, or ``None`` when the job is already so (nothing to do).

    Resuming a broken job whose stored definition evaluates again repairs it.

    Raises:
        Conflict: the job is completed, or resuming a one-shot whose instant has passed, or
            resuming a broken job whose definition still does not evaluate.
    """
    paused, now = command.paused, command.now
    if before.status == "completed":
        raise Conflict(f"job {before.id} is completed")
    target = "paused" if paused else "active"
    broken = before.broken_at is not None
    if before.status == target and (paused or not broken):
        return None
    events: list[Change] = []
    if not paused:
        if broken and job_problem(before.as_row(), cached_schedule)[1] is not None:
            raise broken_conflict(before)
        if next_fire(before, now) is None:
            raise Conflict(f"job {before.id} has no future fire time; change its schedule "
                           "first")
        if broken:
            events.append(("job.repaired", {"previous_reason": before.broken_reason}))
    if before.status != target:
        events.insert(0, ("job.paused" if paused else "job.resumed", {}))
    return events


def decide_delete(before: JobState, command: DeleteJob) -> list[Change]:
    """Delete: ``job.deleted`` (a deleted job is not locked, so ``before`` is live)."""
    return [("job.deleted", {})]
