"""Read model: per job, its name, status and last outcome (the dashboard's failing jobs).

A job is *failing* when its most recent final outcome (``run.succeeded`` or ``run.failed``, in
log order) is a failure and the job is active or paused. Skipped and missed slots do not change
the outcome. ``consecutive_failures`` counts failed runs since the last success.

Table: ``job_health``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from core.coerce import uuid_of
from core.db import Connection
from core.events import to_json
from core.jobs.state import STATUS_AFTER
from core.projections.common import fetch_all
from core.queries import Q

TABLES = ("job_health",)
ERROR_LIMIT = 500  # characters of the last error kept for the dashboard


def _job_id(event: dict[str, Any]) -> uuid.UUID | None:
    if event["stream_type"] == "job":
        job_id: uuid.UUID = event["stream_id"]  # events.stream_id: uuid
        return job_id
    if event["event_type"] in ("run.succeeded", "run.failed"):
        return uuid_of(event["data"].get("job_id"))
    return None


def evolve(row: dict[str, Any] | None, event: dict[str, Any]) -> dict[str, Any] | None:
    """The job's health row after ``event`` (``None`` while the job is unknown)."""
    kind, data, at = event["event_type"], event["data"], event["occurred_at"]
    if kind == "job.created":
        return {"job_id": event["stream_id"], "team_id": event["team_id"], "name": data["name"],
                "status": data["status"], "last_outcome": None, "last_outcome_at": None,
                "last_failure_at": None, "last_error_class": None, "last_error": None,
                "consecutive_failures": 0, "updated_at": at}
    if row is None:
        return None
    row = {**row, "updated_at": at}
    if kind == "job.updated":
        row["name"] = data["changes"].get("name", row["name"])
    elif kind in STATUS_AFTER:
        row["status"] = STATUS_AFTER[kind]
    elif kind == "run.succeeded":
        row.update(last_outcome="succeeded", last_outcome_at=at, consecutive_failures=0)
    elif kind == "run.failed":
        error = data.get("error")
        row.update(last_outcome="failed", last_outcome_at=at, last_failure_at=at,
                   last_error_class=data.get("error_class"),
                   last_error=error[:ERROR_LIMIT] if error else error,
                   consecutive_failures=row["consecutive_failures"] + 1)
    return row


async def apply(conn: Connection, events: Sequence[dict[str, Any]]) -> None:
    """Fold ``events`` into the health rows of the jobs they concern."""
    relevant = [(job_id, e) for e in events if (job_id := _job_id(e)) is not None]
    if not relevant:
        return
    keys = [{"id": job_id} for job_id in {j for j, _ in relevant}]
    loaded = await fetch_all(conn, Q["job_health_load"], {"keys": to_json(keys)})
    rows: dict[uuid.UUID, dict[str, Any] | None] = {r["job_id"]: r for r in loaded}
    changed = set()
    for job_id, event in relevant:
        rows[job_id] = evolve(rows.get(job_id), event)
        changed.add(job_id)
    written = [row for job_id in changed if (row := rows[job_id]) is not None]
    if written:
        await conn.execute(Q["job_health_upsert"], {"rows": to_json(written)})
