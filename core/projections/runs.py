"""Rebuild of the ``runs`` inline projection: each row is a fold over its run stream.

Event payloads are described in :mod:`core.runs`. Not derived from the log, and so carried
over from the rows being replaced (see :mod:`core.projections.rebuild`): the lease of a running
run (``lease_token``, ``lease_expires_at``, a transient claim) and ``run_attempts`` (each
attempt's full request and response, which the log does not hold).
"""

from __future__ import annotations

from typing import Any

import psycopg

from core.projections.common import Skipped, instant, uuid_of
from core.queries import Q
from core.stored import reason_of

TABLES = ("runs",)
FINAL = ("succeeded", "failed", "skipped", "missed")
COLUMNS = ("id", "job_id", "team_id", "scheduled_for", "trigger", "status", "attempt",
           "max_attempts", "available_at", "worker_id", "started_at", "finished_at",
           "lateness_ms", "duration_ms", "response_status", "error_class", "error", "reason",
           "version", "created_at")
FLUSH_EVERY = 5000
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
        "created_at": event["occurred_at"],
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
    elif kind in ("run.retry_scheduled", "run.succeeded", "run.failed"):
        row.update({key: data.get(key) for key in _RESULT})
        row.update(started_at=row["started_at"] or instant(data.get("started_at")),
                   lateness_ms=data.get("lateness_ms"))
        if kind == "run.retry_scheduled":
            row.update(status="queued", available_at=instant(data["available_at"]),
                       finished_at=None)
        else:
            row.update(status=kind.removeprefix("run."), available_at=None,
                       finished_at=instant(data.get("finished_at")))
    elif kind in ("run.skipped", "run.missed"):
        row.update(status=kind.removeprefix("run."), reason=data.get("reason"),
                   finished_at=instant(data.get("finished_at")), available_at=None)
    else:
        raise ValueError(f"unknown run event {kind!r}")
    row["version"] = event["stream_version"]
    return row


async def _write(conn: psycopg.AsyncConnection, rows: list[dict[str, Any]]) -> None:
    async with conn.cursor() as cur, cur.copy(Q["rebuild_runs_copy"]) as copy:
        for row in rows:
            await copy.write_row([row[c] for c in COLUMNS])


async def rebuild(conn: psycopg.AsyncConnection, skipped: Skipped | None = None) -> int:
    """Write ``runs`` from the log into the (emptied) table; returns the number of runs.

    Finished runs receive no further events, so they are written as soon as they finish and
    only unfinished runs stay in memory. An event that cannot be folded (a poison payload) is
    left out and appended to ``skipped`` as ``(global_position, reason)``.
    """
    open_runs: dict[Any, dict[str, Any]] = {}
    finished: list[dict[str, Any]] = []
    total = 0
    async with conn.cursor(name="cronledger_rebuild_runs") as cur:
        cur.itersize = 5000
        await cur.execute(Q["rebuild_run_events"])
        async for event in cur:
            before = open_runs.pop(event["stream_id"], None)
            try:
                row = evolve(before, event)
            except Exception as exc:  # noqa: BLE001 - a poison event must not stop the rebuild
                if before is not None:
                    open_runs[event["stream_id"]] = before
                if skipped is not None:
                    skipped.append((event["global_position"], reason_of(exc)))
                continue
            if row["status"] in FINAL:
                finished.append(row)
            else:
                open_runs[row["id"]] = row
            if len(finished) >= FLUSH_EVERY:
                await _write(conn, finished)
                total += len(finished)
                finished = []
    rows = finished + list(open_runs.values())
    await _write(conn, rows)
    return total + len(rows)
