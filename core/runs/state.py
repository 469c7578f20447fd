"""The state of a run stream: the frozen :class:`RunState` (the ``runs`` row's columns that the
log derives) and its fold, :func:`evolve`, which turns each ``run.*`` event into the next state;
and :class:`RunRow`, a run as the statements of the live run path (the recorder, the
confirmations) return it.

Event payloads are described in :mod:`core.runs`. The rebuild of the ``runs`` table from the
log (:mod:`core.projections.runs`) folds with it. Not in the state (not derived from the
log): the lease of a running run (``lease_token``, ``lease_expires_at``, a transient claim).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.coerce import instant, uuid_of
from core.rows import field_values

FINAL = ("succeeded", "failed", "skipped", "missed")
_RESULT = ("duration_ms", "response_status", "error_class", "error")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunState:
    """A run as its stream left it.

    Instants are UTC; ``lateness_ms`` and ``duration_ms`` in milliseconds. ``status`` is one
    of ``queued``, ``running``, ``awaiting_confirmation`` or :data:`FINAL` (``None`` only
    after a first event that sets none). ``overran_at``: when the run went past its job's
    ``max_duration`` (``None``: it did not). The fields are in the column order of
    ``rebuild_runs_copy`` (core/sql/rebuild.sql), which :data:`COLUMNS` lists.
    """

    id: uuid.UUID
    job_id: uuid.UUID
    team_id: uuid.UUID
    scheduled_for: datetime
    trigger: str
    status: str | None
    attempt: int
    max_attempts: int
    available_at: datetime | None
    worker_id: str | None
    started_at: datetime | None
    finished_at: datetime | None
    lateness_ms: int | None
    duration_ms: int | None
    response_status: int | None
    error_class: str | None
    error: str | None
    reason: str | None
    version: int
    created_at: datetime
    overran_at: datetime | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> RunState:
        """The state in a ``runs`` row, or in a prune snapshot's copy of one (a copy taken
        before migration 0033 has no ``overran_at``: ``None``)."""
        return cls(**field_values(cls, row, present_only=True))

    @property
    def finished(self) -> bool:
        """The run is final: its stream receives no further events."""
        return self.status in FINAL

    def as_row(self) -> dict[str, Any]:
        """The ``runs`` columns (:data:`COLUMNS`), by name."""
        return {c: getattr(self, c) for c in COLUMNS}


COLUMNS = tuple(f.name for f in dataclasses.fields(RunState))


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRow:
    """A run as a statement of the live run path returns it, read once where it is fetched
    (:meth:`from_row`): ``run_finish_many``, ``run_release_buffered`` (core/sql/runs.sql) and
    ``run_confirm_finish`` (core/sql/confirmations.sql).

    Each of them returns the fields up to ``attempt``, as the row is after the statement
    (``version`` the new stream version). The others come from some of them only, and are
    ``None`` (``was_failing`` ``False``) where the statement does not return them:

    - ``lateness_ms``, ``was_failing`` (a success ends the job's failure streak):
      ``run_finish_many`` and ``run_confirm_finish``;
    - ``result_lease_token`` (the lease the accepted result was sent under):
      ``run_finish_many``;
    - ``started_at``, ``duration_ms``, ``response_status``, ``error_class``, ``error``,
      ``confirmed_at``, ``exit_status`` (of the confirmation): ``run_confirm_finish``.
    """

    id: uuid.UUID
    job_id: uuid.UUID
    team_id: uuid.UUID
    version: int
    status: str
    scheduled_for: datetime
    trigger: str
    attempt: int
    lateness_ms: int | None = None
    was_failing: bool = False
    result_lease_token: uuid.UUID | None = None
    started_at: datetime | None = None
    duration_ms: int | None = None
    response_status: int | None = None
    error_class: str | None = None
    error: str | None = None
    confirmed_at: datetime | None = None
    exit_status: int | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> RunRow:
        """The run in one row of those statements (the columns it has)."""
        return cls(**field_values(cls, row, present_only=True))


def _first(event: Mapping[str, Any]) -> RunState:
    data = event["data"]
    job_id, scheduled_for = uuid_of(data["job_id"]), instant(data["scheduled_for"])
    if job_id is None or scheduled_for is None:
        raise ValueError(f"run {event['stream_id']}: {event['event_type']} without its job_id "
                         "or scheduled_for")
    return RunState(
        id=event["stream_id"], job_id=job_id, team_id=event["team_id"],
        scheduled_for=scheduled_for, trigger=data["trigger"],
        status=None, attempt=0, max_attempts=data.get("max_attempts", 1),
        available_at=None, worker_id=None, started_at=None, finished_at=None,
        lateness_ms=None, duration_ms=None, response_status=None,
        error_class=None, error=None, reason=None, version=0,
        created_at=event["occurred_at"], overran_at=None,
    )


def evolve(state: RunState | None, event: Mapping[str, Any]) -> RunState:
    """The state after ``event`` (``state`` is ``None`` before the stream's first event).

    Raises:
        ValueError: an event that cannot apply (unknown type, or not starting a stream).
    """
    kind = event["event_type"]
    if state is None:
        if event["stream_version"] != 1:
            raise ValueError(f"run {event['stream_id']}: {kind} does not start the stream")
        state = _first(event)
    return dataclasses.replace(state, **_changes(state, kind, event),
                               version=event["stream_version"])


def _changes(state: RunState, kind: str, event: Mapping[str, Any]) -> dict[str, Any]:
    """The fields ``event`` (of type ``kind``) changes."""
    data = event["data"]
    if kind == "run.started":
        return {"status": "running", "attempt": data["attempt"],
                "worker_id": data.get("worker_id"), "available_at": None}
    if kind == "run.queued":
        return {"status": "queued", "available_at": instant(data.get("available_at")),
                "reason": data.get("reason")}
    if kind == "run.released":
        return {"available_at": instant(data["available_at"])}
    if kind in ("run.retry_scheduled", "run.succeeded", "run.failed",
                "run.awaiting_confirmation"):
        return {**{key: data.get(key) for key in _RESULT},
                "started_at": state.started_at or instant(data.get("started_at")),
                "lateness_ms": data.get("lateness_ms"), **_outcome(kind, data)}
    if kind == "run.overran":  # still going past max_duration (core/runs/bounds.py)
        return {"overran_at": event["occurred_at"]}
    if kind in ("run.skipped", "run.missed"):
        return {"status": kind.removeprefix("run."), "reason": data.get("reason"),
                "finished_at": instant(data.get("finished_at")), "available_at": None}
    raise ValueError(f"unknown run event {kind!r}")


def _outcome(kind: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """Where an attempt's result leaves the run: queued for its retry, awaiting its
    confirmation, or finished."""
    if kind == "run.retry_scheduled":
        return {"status": "queued", "available_at": instant(data["available_at"]),
                "finished_at": None}
    if kind == "run.awaiting_confirmation":
        return {"status": "awaiting_confirmation", "available_at": None, "finished_at": None}
    return {"status": kind.removeprefix("run."), "available_at": None,
            "finished_at": instant(data.get("finished_at"))}
