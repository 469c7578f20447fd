"""The fold of a run stream: :func:`evolve` turns each ``run.*`` event into the ``runs`` row.

Event payloads are described in :mod:`core.runs`. The rebuild of the ``runs`` table from the
log (:mod:`core.projections.runs`) folds with it. Not in the row it returns (not derived from the
log): the lease of a running run (``lease_token``, ``lease_expires_at``, a transient claim).
"""

from __future__ import annotations

from typing import Any

from core.coerce import instant, uuid_of

FINAL = ("succeeded", "failed", "skipped", "missed")
COLUMNS = ("id", "job_id", "team_id", "scheduled_for", "trigger", "status", "attempt",
           "max_attempts", "available_at", "worker_id", "started_at", "finished_at",
           "lateness_ms", "duration_ms", "response_status", "error_class", "error", "reason",
           "version", "created_at", "overran_at")
_RESULT = ("duration_ms", "response_status", "error_class", "error")


def _first(event: dict[str, Any]) -> dict[str, Any]:
    data = event["data"]
    return {
        "id": event["stream_id"], "job_id": uuid_of(data["job_id"]), "team_id": event["team_id"],
        "scheduled_for": instant(data["scheduled_for"]), "trigger": data["trigger"],
        "status": None, "attempt": 0, "max_attempts": data.get("max_attempts", 1),
        "available_at": None, "worker_id": None, "started_at": None, "finished_at": None,
        "lateness_ms": None, "duration_ms": None, "response_status": None,
        "error_class": None, "error": None, "reason": None, "version": 0,
        "created_at": event["occurred_at"], "overran_at": None,
    }


def evolve(row: dict[str, Any] | None, event: dict[str, Any]) -> dict[str, Any]:
    """The ``runs`` row after ``event`` (``row`` is ``None`` before the stream's first event).

    Raises:
        ValueError: an event that cannot apply (unknown type, or not starting a stream).
    """
    kind, data = event["event_type"], event["data"]
    if row is None:
        if event["stream_version"] != 1:
            raise ValueError(f"run {event['stream_id']}: {kind} does not start the stream")
        row = _first(event)
    else:
        row = dict(row)
    if kind == "run.started":
        row.update(status="running", attempt=data["attempt"], worker_id=data.get("worker_id"),
                   available_at=None)
    elif kind == "run.queued":
        row.update(status="queued", available_at=instant(data.get("available_at")),
                   reason=data.get("reason"))
    elif kind == "run.released":
        row["available_at"] = instant(data["available_at"])
    elif kind in ("run.retry_scheduled", "run.succeeded", "run.failed",
                  "run.awaiting_confirmation"):
        row.update({key: data.get(key) for key in _RESULT})
        row.update(started_at=row["started_at"] or instant(data.get("started_at")),
                   lateness_ms=data.get("lateness_ms"))
        if kind == "run.retry_scheduled":
            row.update(status="queued", available_at=instant(data["available_at"]),
                       finished_at=None)
        elif kind == "run.awaiting_confirmation":
            row.update(status="awaiting_confirmation", available_at=None, finished_at=None)
        else:
            row.update(status=kind.removeprefix("run."), available_at=None,
                       finished_at=instant(data.get("finished_at")))
    elif kind == "run.overran":  # still going past max_duration (core/runs/bounds.py)
        row["overran_at"] = event["occurred_at"]
    elif kind in ("run.skipped", "run.missed"):
        row.update(status=kind.removeprefix("run."), reason=data.get("reason"),
                   finished_at=instant(data.get("finished_at")), available_at=None)
    else:
        raise ValueError(f"unknown run event {kind!r}")
    row["version"] = event["stream_version"]
    return row
