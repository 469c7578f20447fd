"""Records attempt results: the run's new state, the attempt's request/response, the events.

Results are written in batches (one transaction for many finished attempts), with a
compare-and-set on each run's lease token: a worker whose lease was taken over records nothing.
A successful attempt shorter than the job's ``min_duration`` is a failed one
(:func:`core.runs.bounds.too_short`). A failed attempt with attempts left puts the run back as
``queued`` with ``available_at`` (the
retry is durable: it lives in the database, not in the worker's memory). Failures that another
attempt cannot fix (error classes ``secret`` and ``blocked``) fail the run at once.
"""

from __future__ import annotations

import logging
import random
import uuid
from datetime import datetime, timedelta
from typing import Any

from core.backoff import retry_delay
from core.clock import Instant, read_now
from core.db import Connection, ConnectionPool, transaction
from core.events import NewEvent, append_events, notify_wakeup, to_json
from core.maintenance.queries import held_alerts
from core.notifications.job_alerts import FinalRun, reaches_rules, record_job_outcomes
from core.notifications.messages import snippet
from core.notifications.outbox import DEFAULT_MAX_ATTEMPTS
from core.queries import Q
from core.runs import events as run_events
from core.runs.bounds import too_short
from core.runs.confirm import arm as arm_confirmations
from core.runs.confirm import deadline as confirm_deadline
from core.runs.dispatch import AttemptResult
from core.runs.state import RunRow

log = logging.getLogger("cronledger.recorder")


def _outcome(result: AttemptResult, now: datetime, rng: random.Random) -> dict[str, Any]:
    """The run's next state after ``result``: succeeded, failed, or queued for a retry."""
    d = result.dispatch
    if result.ok and d.confirm_token and d.confirm_timeout_seconds:
        return {"status": "awaiting_confirmation", "finished_at": None, "available_at": None,
                "confirm_deadline_at": confirm_deadline(now, d.confirm_timeout_seconds)}
    if result.ok:
        return {"status": "succeeded", "finished_at": result.finished_at, "available_at": None}
    if d.attempt < d.max_attempts and not result.final:
        delay = retry_delay(d.retry.to_json(), d.attempt, result.response_status,
                            result.retry_after, now, rng)
        return {"status": "queued", "finished_at": None,
                "available_at": now + timedelta(seconds=delay)}
    return {"status": "failed", "finished_at": result.finished_at, "available_at": None}


def _event(result: AttemptResult, outcome: dict[str, Any], row: RunRow,
           now: datetime) -> NewEvent:
    d = result.dispatch
    return run_events.attempt_recorded(
        outcome["status"], row.id, row.team_id, row.version, now, job_id=d.job_id,
        scheduled_for=d.scheduled_for, trigger=d.trigger, attempt=d.attempt,
        started_at=result.started_at, duration_ms=result.duration_ms,
        lateness_ms=row.lateness_ms, response_status=result.response_status,
        error_class=result.error_class, error=result.error,
        finished_at=outcome["finished_at"], available_at=outcome["available_at"],
        confirm_deadline_at=outcome.get("confirm_deadline_at"))


def _final_runs(accepted: list[RunRow],
                by_id: dict[Any, tuple[AttemptResult, dict[str, Any]]]) -> list[FinalRun]:
    """Final failures, and successes that end a failure streak: what the alert rules need."""
    finals = []
    for row in accepted:
        if not reaches_rules(row.status, row.was_failing):
            continue
        result, outcome = by_id[(row.id, row.result_lease_token)]
        finals.append(FinalRun(
            job_id=row.job_id, team_id=row.team_id, run_id=row.id,
            status=row.status, was_failing=row.was_failing,
            scheduled_for=row.scheduled_for, attempts=result.dispatch.attempt,
            finished_at=outcome["finished_at"] or result.finished_at,
            last_response={"status": result.response_status,
                           "body": snippet(result.response_body),
                           "error_class": result.error_class, "error": result.error}))
    return finals


async def _discarded(conn: Connection, results: list[AttemptResult],
                     accepted: set[tuple[Any, Any]]) -> None:
    """Results refused by the lease compare-and-set: logged (one warning each), and their send
    start kept as the run's lateness while the run still waits for the re-dispatched attempt
    (statement ``run_keep_first_lateness``)."""
    lost = [r for r in results
            if (r.dispatch.run_id, r.dispatch.lease_token) not in accepted]
    for r in lost:
        log.warning("discarded the result of run %s (job %s, attempt %d, started %s): its lease "
                    "was lost, another worker owns the run", r.dispatch.run_id, r.dispatch.job_id,
                    r.dispatch.attempt, r.started_at.isoformat())
    await conn.execute(Q["run_keep_first_lateness"], {
        "ids": [r.dispatch.run_id for r in lost],
        "attempts": [r.dispatch.attempt for r in lost],
        "lateness_ms": [r.lateness_ms for r in lost]})


class Recorder:
    """Writes batches of :class:`AttemptResult` to the database.

    Args:
        pool: database pool.
        rng: jitter source for retry delays.
        worker_id: recorded on each attempt.
        notify_max_attempts: delivery attempts of the alerts queued for final failures and
            recoveries (:mod:`core.notifications.job_alerts`).
    """
    def __init__(self, pool: ConnectionPool, rng: random.Random | None = None,
                 worker_id: str | None = None,
                 notify_max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> None:
        self.pool = pool
        self.rng = rng or random.Random()
        self.worker_id = worker_id
        self.notify_max_attempts = notify_max_attempts

    async def record(self, results: list[AttemptResult], now: Instant) -> int:
        """Record ``results`` in one transaction; returns how many runs accepted them.

        ``now`` (UTC, or the clock, read once the connection is obtained) dates the events and
        the retries' ``available_at``.
        """
        if not results:
            return 0
        results = [too_short(r) for r in results]  # a success under min_duration fails
        async with transaction(self.pool) as conn:
            now = read_now(now)
            outcomes = [_outcome(r, now, self.rng) for r in results]
            # Keyed by lease too: a batch may hold both the result of a re-dispatched attempt
            # and the late one of the attempt it replaced (same run id); only the first matches.
            by_id: dict[tuple[uuid.UUID, uuid.UUID | None],
                        tuple[AttemptResult, dict[str, Any]]] = {
                (r.dispatch.run_id, r.dispatch.lease_token): (r, o)
                for r, o in zip(results, outcomes, strict=True)}
            accepted = await _finish(conn, results, outcomes)
            kept = [by_id[(row.id, row.result_lease_token)][0] for row in accepted]
            if len(accepted) < len(results):
                await _discarded(conn, results,
                                 {(row.id, row.result_lease_token) for row in accepted})
            await _insert_attempts(conn, kept, self.worker_id)
            await append_events(conn, [
                _event(*by_id[(row.id, row.result_lease_token)], row, now)
                for row in accepted])
            await self._follow_up(conn, accepted, by_id, now)
            released = await _release_buffered(conn, now)
            if released or any(o["status"] == "queued" for o in outcomes):
                await notify_wakeup(conn, "runs")
        return len(accepted)

    async def _follow_up(self, conn: Connection, accepted: list[RunRow],
                         by_id: dict[Any, Any], now: datetime) -> None:
        """The job alerts of the final outcomes, and the confirmations the awaiting runs
        wait for, in the recording transaction."""
        finals = _final_runs(accepted, by_id)
        if finals:  # the alert rules cost queries only on final failures and recoveries
            await record_job_outcomes(conn, finals, now, self.notify_max_attempts,
                                      held_alerts)
        awaiting = [row.id for row in accepted if row.status == "awaiting_confirmation"]
        if awaiting:
            await arm_confirmations(conn, awaiting, now, self.notify_max_attempts)


async def _finish(conn: Connection, results: list[AttemptResult],
                  outcomes: list[dict[str, Any]]) -> list[RunRow]:
    """``run_finish_many``: each run's new state, where its lease token still matches; returns
    the rows that accepted their result."""
    cur = await conn.execute(Q["run_finish_many"], {
        "ids": [r.dispatch.run_id for r in results],
        "lease_tokens": [r.dispatch.lease_token for r in results],
        "statuses": [o["status"] for o in outcomes],
        "finished_at": [o["finished_at"] for o in outcomes],
        "available_at": [o["available_at"] for o in outcomes],
        "started_at": [r.started_at for r in results],
        "lateness_ms": [r.lateness_ms for r in results],
        "duration_ms": [r.duration_ms for r in results],
        "response_status": [r.response_status for r in results],
        "error_class": [r.error_class for r in results],
        "error": [r.error for r in results],
    })
    return [RunRow.from_row(row) for row in await cur.fetchall()]


async def _insert_attempts(conn: Connection, kept: list[AttemptResult],
                           worker_id: str | None) -> None:
    """``run_attempt_insert_many``: the accepted attempts, request and response in full."""
    await conn.execute(Q["run_attempt_insert_many"], {
        "run_ids": [r.dispatch.run_id for r in kept],
        "attempts": [r.dispatch.attempt for r in kept],
        "started_at": [r.started_at for r in kept],
        "finished_at": [r.finished_at for r in kept],
        "duration_ms": [r.duration_ms for r in kept],
        "requests": [to_json(r.request) for r in kept],
        "response_status": [r.response_status for r in kept],
        "response_headers": [None if r.response_headers is None
                             else to_json(r.response_headers) for r in kept],
        "response_body": [r.response_body for r in kept],
        "response_truncated": [r.truncated for r in kept],
        "error_class": [r.error_class for r in kept],
        "error": [r.error for r in kept],
        "lateness_ms": [r.attempt_lateness_ms for r in kept],
        "worker_ids": [worker_id] * len(kept),
    })


async def _release_buffered(conn: Connection,
                            now: datetime) -> list[RunRow]:
    """``run_release_buffered``: the queued runs an overlap buffer held that may go now, each
    with its ``run.released`` event; returns them."""
    cur = await conn.execute(Q["run_release_buffered"], {"now": now})
    released = [RunRow.from_row(row) for row in await cur.fetchall()]
    await append_events(conn, [
        run_events.released(row.id, row.team_id, row.version, now,
                            job_id=row.job_id, scheduled_for=row.scheduled_for,
                            trigger=row.trigger, available_at=now)
        for row in released])
    return released
