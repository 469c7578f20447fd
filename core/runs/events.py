"""Every ``run.*`` event is built here (payload shapes: :mod:`core.runs`).

Each constructor returns one :class:`~core.events.NewEvent` on the run's stream at ``version``
(the version the event takes: 1 for the first event of a run, the row's new ``version``
otherwise). Every payload names ``job_id``, ``scheduled_for`` (UTC) and ``trigger`` so read
models need no lookup. ``metadata`` is the event's metadata (``{"actor": "worker:<id>"}`` …),
``{}`` when ``None``. Instants are tz-aware UTC; durations and lateness are milliseconds.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, Literal

from core.events import NewEvent


def new_run_id() -> uuid.UUID:
    """A fresh run id (a manual trigger's); it is also the ``Idempotency-Key`` of every
    attempt of the run."""
    return uuid.uuid4()


def slot_run_id(job_id: uuid.UUID, slot: datetime) -> uuid.UUID:
    """The run id of ``job_id``'s slot ``slot`` (UTC): a name-based UUID (RFC 9562 version 5,
    the job id as namespace, the slot's RFC 3339 instant as name), so that a slot claimed
    again has the same id and the same ``Idempotency-Key``: after an asynchronous failover
    lost the claim's commit (docs/operations.md, "High availability"), the target sees the
    slot again with the key it already saw. A slot has one run (``runs_job_slot_key``)."""
    return uuid.uuid5(job_id, slot.astimezone(UTC).isoformat(timespec="microseconds"))


def _event(kind: str, run_id: uuid.UUID, team_id: uuid.UUID, version: int, now: datetime,
           job_id: uuid.UUID, scheduled_for: datetime, trigger: str, fields: dict[str, Any],
           metadata: dict[str, Any] | None) -> NewEvent:
    data = {"job_id": job_id, "scheduled_for": scheduled_for, "trigger": trigger, **fields}
    return NewEvent("run", run_id, version, kind, team_id, now, data, metadata or {})


def _fire(fire_at: datetime | None) -> dict[str, Any]:
    """``{"fire_at": …}`` for the first event of a slot of a job with a spread: when the slot
    was to fire (slot + offset, core/schedule/spread.py); nothing without a spread, so the
    events of other jobs keep their shape."""
    return {} if fire_at is None else {"fire_at": fire_at}


def started(run_id: uuid.UUID, team_id: uuid.UUID, version: int, now: datetime, *,
            job_id: uuid.UUID, scheduled_for: datetime, trigger: str, attempt: int,
            max_attempts: int, worker_id: str, redispatch: bool | None = None,
            fire_at: datetime | None = None,
            metadata: dict[str, Any] | None = None) -> NewEvent:
    """``run.started``: attempt ``attempt`` (1-based) dispatched by ``worker_id``.

    ``redispatch`` is included when given (a claim of a ready run says whether it takes over an
    expired lease); a run started by the due-job claim carries none. ``fire_at``: see
    :func:`_fire`.
    """
    fields: dict[str, Any] = {"max_attempts": max_attempts, "attempt": attempt,
                              "worker_id": worker_id, **_fire(fire_at)}
    if redispatch is not None:
        fields["redispatch"] = redispatch
    return _event("run.started", run_id, team_id, version, now, job_id, scheduled_for, trigger,
                  fields, metadata)


def queued(run_id: uuid.UUID, team_id: uuid.UUID, version: int, now: datetime, *,
           job_id: uuid.UUID, scheduled_for: datetime, trigger: str, max_attempts: int,
           available_at: datetime | None, reason: str | None = None,
           fire_at: datetime | None = None,
           metadata: dict[str, Any] | None = None) -> NewEvent:
    """``run.queued``: a manual trigger (``available_at`` = now) or a run buffered behind a
    running one (``available_at`` ``None``, ``reason`` says why; ``reason`` omitted when
    ``None``)."""
    fields: dict[str, Any] = {"max_attempts": max_attempts, "available_at": available_at,
                              **_fire(fire_at)}
    if reason is not None:
        fields["reason"] = reason
    return _event("run.queued", run_id, team_id, version, now, job_id, scheduled_for, trigger,
                  fields, metadata)


def released(run_id: uuid.UUID, team_id: uuid.UUID, version: int, now: datetime, *,
             job_id: uuid.UUID, scheduled_for: datetime, trigger: str,
             available_at: datetime, metadata: dict[str, Any] | None = None) -> NewEvent:
    """``run.released``: a buffered run became ready at ``available_at``."""
    return _event("run.released", run_id, team_id, version, now, job_id, scheduled_for, trigger,
                  {"available_at": available_at}, metadata)


def not_run(status: str, run_id: uuid.UUID, team_id: uuid.UUID, version: int, now: datetime, *,
            job_id: uuid.UUID, scheduled_for: datetime, trigger: str, reason: str | None,
            finished_at: datetime, max_attempts: int | None = None,
            fire_at: datetime | None = None,
            metadata: dict[str, Any] | None = None) -> NewEvent:
    """``run.<status>``, ``status`` being ``skipped`` or ``missed``: a slot that did not run
    (``reason``), or a queued run cancelled. ``max_attempts`` is included when given (the
    first event of a stream).

    Raises:
        ValueError: ``status`` is neither ``skipped`` nor ``missed``.
    """
    if status not in ("skipped", "missed"):
        raise ValueError(f"a run that did not run is skipped or missed, not {status!r}")
    fields: dict[str, Any] = {} if max_attempts is None else {"max_attempts": max_attempts}
    fields.update(reason=reason, finished_at=finished_at, **_fire(fire_at))
    return _event(f"run.{status}", run_id, team_id, version, now, job_id, scheduled_for,
                  trigger, fields, metadata)


def attempt_recorded(status: Literal["succeeded", "failed", "queued", "awaiting_confirmation"],
                     run_id: uuid.UUID,
                     team_id: uuid.UUID, version: int, now: datetime, *, job_id: uuid.UUID,
                     scheduled_for: datetime, trigger: str, attempt: int,
                     started_at: datetime, duration_ms: int, lateness_ms: int | None,
                     response_status: int | None, error_class: str | None,
                     error: str | None, finished_at: datetime | None = None,
                     available_at: datetime | None = None,
                     confirm_deadline_at: datetime | None = None,
                     metadata: dict[str, Any] | None = None) -> NewEvent:
    """The outcome of attempt ``attempt``: ``run.succeeded`` / ``run.failed`` (with
    ``finished_at``), for ``status="queued"`` ``run.retry_scheduled`` (with ``available_at``,
    when the retry is due), or for ``status="awaiting_confirmation"``
    ``run.awaiting_confirmation`` (with ``confirm_deadline_at``: a 2xx of a job asking for
    confirmation, :mod:`core.runs.confirm`)."""
    fields: dict[str, Any] = {
        "attempt": attempt, "started_at": started_at, "duration_ms": duration_ms,
        "lateness_ms": lateness_ms, "response_status": response_status,
        "error_class": error_class, "error": error,
    }
    if status == "queued":
        kind, fields["available_at"] = "run.retry_scheduled", available_at
    elif status == "awaiting_confirmation":
        kind, fields["confirm_deadline_at"] = "run.awaiting_confirmation", confirm_deadline_at
    else:
        kind, fields["finished_at"] = f"run.{status}", finished_at
    return _event(kind, run_id, team_id, version, now, job_id, scheduled_for, trigger, fields,
                  metadata)


def overran(run_id: uuid.UUID, team_id: uuid.UUID, version: int, now: datetime, *,
            job_id: uuid.UUID, scheduled_for: datetime, trigger: str, started_at: datetime,
            max_duration: int, deadline: datetime) -> NewEvent:
    """``run.overran``: the run was still going (running, waiting for a retry or for its
    confirmation) at ``deadline``, ``started_at`` plus the job's ``max_duration`` seconds
    (:mod:`core.runs.bounds`)."""
    return _event("run.overran", run_id, team_id, version, now, job_id, scheduled_for, trigger,
                  {"started_at": started_at, "max_duration": max_duration,
                   "deadline": deadline}, {"actor": "system"})
