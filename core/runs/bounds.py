"""Run-time bounds of jobs (docs/notifications.md, *Run-time bounds of jobs*), the rule monitors
have (:func:`core.alerting.shorter_than`; healthchecks #236 "run too short").

``min_duration``: a successful attempt whose exchange took less than it is a failed attempt
(error class ``too_short``, "finished in 4 s, expected at least 2 min (min_duration)"), retried
like any failure by the job's retry policy: the backup endpoint that answered 200 at once
because its dump was empty. The recorder applies it before it decides the run's outcome
(:mod:`core.runs.recorder`). A fire-and-confirm job cannot have one (its 2xx comes at once by
design): :mod:`core.jobs.definition` refuses the pair.

``max_duration``: a run still going past it alerts **while it runs** (Sentry Crons'
``max_runtime``), once: :func:`alert_overruns`, the pass of the confirmation service
(:class:`core.runs.confirm.ConfirmTimeouts`, which sleeps until :func:`next_overrun_at`). An
attempt is bounded by ``timeout_seconds`` (at most 15 min), but a run is more: its retries and
their waits, and a fire-and-confirm job's wait for its confirmation (up to 7 days). The alert
does not stop the run: its lease, timeouts and retries go on.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from core.alerting import shorter_than
from core.db import Connection
from core.events import append_events
from core.notifications.messages import job_overran_message, span
from core.notifications.outbox import DEFAULT_MAX_ATTEMPTS, Alert, Hold, enqueue
from core.queries import Q
from core.rows import field_values
from core.runs import events as run_events
from core.runs.dispatch import AttemptResult

TOO_SHORT = "too_short"  # the error class of an attempt shorter than min_duration


def too_short(result: AttemptResult) -> AttemptResult:
    """``result`` as a failed attempt when it succeeded in less than its job's
    ``min_duration``, else unchanged."""
    bound = result.dispatch.min_duration
    if not result.ok or not shorter_than(result.duration_ms, bound):
        return result
    assert bound is not None  # shorter_than holds only with a bound
    return replace(result, error_class=TOO_SHORT, error=(
        f"finished in {span(result.duration_ms / 1000)}, expected at least {span(bound)} "
        "(min_duration)"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Overrun:
    """A row of ``run_overrun_claim`` (core/sql/runs.sql): a run going past its job's
    ``max_duration`` (seconds), with the job's ``name`` and ``channels`` for the alert.
    ``started_at`` is the run's first send, or its slot when it has not sent yet (UTC)."""

    id: uuid.UUID
    job_id: uuid.UUID
    team_id: uuid.UUID
    scheduled_for: datetime
    trigger: str
    started_at: datetime
    name: str
    channels: list[uuid.UUID]
    max_duration: int

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Overrun:
        """The run in one ``run_overrun_claim`` row."""
        return cls(**field_values(cls, row))


async def alert_overruns(conn: Connection, now: datetime, *, limit: int,
                         hold: Hold, max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> int:
    """``max_duration``: the runs still going (running, waiting for a retry or for their
    confirmation) past their start plus the job's ``max_duration``, each said once while it
    runs: ``run.overran`` on the run (``overran_at``) and, for a job with channels, a
    ``too_long`` alert (rule ``{"reason": "max_duration", "run_id", "scheduled_for",
    "started_at", "max_duration", "deadline"}``), in the caller's transaction. The run goes on:
    its lease, timeouts and retries are untouched, and it ends as it would have.

    Returns:
        How many runs were claimed (``SKIP LOCKED``).
    """
    cur = await conn.execute(Q["run_overrun_claim"], {"now": now, "limit": limit})
    runs = [Overrun.from_row(row) for row in await cur.fetchall()]
    if not runs:
        return 0
    cur = await conn.execute(Q["run_overrun_mark"], {"ids": [run.id for run in runs],
                                                     "now": now})
    versions = {row["id"]: row["version"] for row in await cur.fetchall()}
    alerts = []
    events = []
    for run in runs:
        deadline = run.started_at + timedelta(seconds=run.max_duration)
        events.append(run_events.overran(
            run.id, run.team_id, versions[run.id], now, job_id=run.job_id,
            scheduled_for=run.scheduled_for, trigger=run.trigger,
            started_at=run.started_at, max_duration=run.max_duration,
            deadline=deadline))
        message = job_overran_message(
            job_id=run.job_id, job_name=run.name, run_id=run.id,
            scheduled_for=run.scheduled_for, started_at=run.started_at,
            max_duration=run.max_duration, now=now)
        alerts.append(Alert(run.team_id, "job", run.job_id, "too_long", run.channels,
                            message, {"reason": "max_duration", "run_id": run.id,
                                      "scheduled_for": run.scheduled_for,
                                      "started_at": run.started_at,
                                      "max_duration": run.max_duration,
                                      "deadline": deadline}))
    await append_events(conn, events)
    await enqueue(conn, alerts, now, max_attempts, hold=hold)
    return len(runs)


async def next_overrun_at(conn: Connection) -> datetime | None:
    """The earliest instant a run still going passes its job's ``max_duration`` (UTC), for
    the sleep of the service that calls :func:`alert_overruns`."""
    cur = await conn.execute(Q["run_overrun_next"])
    row = await cur.fetchone()
    return row["at"] if row else None
