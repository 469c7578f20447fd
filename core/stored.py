"""Stored definitions that no longer evaluate (docs/operations.md, "Poison items": no single item
may stop a loop).

Schedules and requests are validated when they are written, but a stored one can still stop
evaluating later: a time zone removed from the tz database by an upgrade, a schedule engine that
became stricter, a row edited by hand. Every place that evaluates a stored definition goes
through these helpers, so one such row is reported (``broken_reason``, docs/api.md) instead of
raising out of a read, a claim or a check.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg
import psycopg.rows

from core.reasons import reason_of
from core.schedule import Schedule

log = logging.getLogger("cronledger.stored")

def schedule_problem(parse: Callable[[str, str, datetime], Schedule], expression: Any,
                     timezone: Any, anchor: Any) -> tuple[Schedule | None, str | None]:
    """``(schedule, None)`` when ``parse(expression, timezone, anchor)`` works, else
    ``(None, reason)``. Never raises (whatever ``parse`` raises becomes the reason)."""
    try:
        return parse(expression, timezone, anchor), None
    except Exception as exc:  # noqa: BLE001 - any failure of a stored schedule is reported
        return None, f"schedule {expression!r} in time zone {timezone!r} no longer " \
                     f"evaluates: {reason_of(exc)}"


def describe_stored(parse: Callable[[str, str, datetime], Schedule], expression: Any,
                    timezone: Any, anchor: Any) -> str:
    """The human description of a stored schedule, or ``"<expr> (<zone>, no longer valid)"``
    when it does not evaluate any more (shared by jobs and monitors)."""
    schedule, problem = schedule_problem(parse, expression, timezone, anchor)
    if schedule is None:
        return f"{expression} ({timezone}, no longer valid)"
    try:
        return schedule.describe()
    except Exception:  # noqa: BLE001 - a description is never worth a 500
        return f"{expression} ({timezone})"


def request_problem(request: Any) -> str | None:
    """Why a stored job request cannot be sent, or ``None`` when its shape is sound.

    The shape (docs/api.md): ``{"method": str, "url": str, "headers": {str: str},
    "body": str | None}``; the values themselves were validated when written.
    """
    if not isinstance(request, dict):
        return f"the stored request is not an object: {type(request).__name__}"
    for key in ("method", "url"):
        if not isinstance(request.get(key), str) or not request[key]:
            return f"the stored request has no valid {key}"
    headers = request.get("headers") or {}
    if not isinstance(headers, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        return "the stored request headers are not an object of strings"
    if request.get("body") is not None and not isinstance(request["body"], str):
        return "the stored request body is not a string"
    return None


def job_problem(job: dict[str, Any], parse: Callable[[str, str, datetime], Schedule]
                ) -> tuple[Schedule | None, str | None]:
    """``(schedule, None)`` for a job row whose schedule, request and retry policy evaluate,
    else ``(None, reason)``. ``job`` needs ``schedule``, ``timezone``, ``anchor_at``,
    ``request``, ``retry`` and ``timeout_seconds``; never raises."""
    schedule, problem = schedule_problem(parse, job["schedule"], job["timezone"],
                                         job["anchor_at"])
    if problem is None:
        problem = request_problem(job["request"])
    if problem is None:
        retry = job.get("retry")
        attempts = retry.get("attempts") if isinstance(retry, dict) else None
        if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
            problem = "the stored retry policy has no valid attempts"
    if problem is None:
        timeout = job.get("timeout_seconds")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            problem = "the stored timeout_seconds is not a positive number"
    return (schedule, None) if problem is None else (None, problem)


def reread_stored(conn: Any, migration: str, now: datetime) -> int:
    """Read the words of every live job and monitor again with the readers in force, and
    remove the words that no longer mean the stored schedule (docs/schedules.md, *When the
    reading of stored words changes*): the schedule is kept, a ``job.updated`` /
    ``monitor.updated`` event ``{"changes": {"schedule_text": null}, "reread": …}`` (metadata
    ``{"actor": "migration", "migration": migration}``) is appended at the next stream version
    and the row follows it.

    Args:
        conn: a synchronous psycopg connection inside the migration's transaction.
        migration: the revision that runs it, for the events' metadata.
        now: the instant of the events (UTC).

    Returns:
        How many definitions lost their words.
    """
    from core.events import Change, Head, event_rows
    from core.queries import Q
    from core.schedule.reread import reread

    changed = 0
    for stream, listing, remove in (
            ("job", Q["reread_jobs"], Q["reread_job_words_remove"]),
            ("monitor", Q["reread_monitors"], Q["reread_monitor_words_remove"])):
        cur = conn.cursor(row_factory=psycopg.rows.dict_row)
        for row in cur.execute(listing).fetchall():
            found = reread(row["schedule_text"], row["schedule"], row["timezone"],
                           row["anchor"], now)
            if found is None:
                continue
            head = Head(stream, row["id"], row["team_id"], row["version"])
            changes: list[Change] = [(f"{stream}.updated", {
                "changes": {"schedule_text": None}, "reread": found.as_data()})]
            conn.execute(Q["event_append"], {"rows": event_rows(head.events(
                changes, now, {"actor": "migration", "migration": migration}))})
            conn.execute(remove, {"version": head.after(changes), "now": now, "id": row["id"]})
            changed += 1
    return changed
