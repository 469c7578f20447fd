"""Alert rules for jobs, applied by the recorder in the transaction of the run's final event.

Rules (per job): a run that **failed after its last attempt** adds to the job's failure streak;
when the streak reaches ``alert_after_failures`` (default 1) a ``failed`` alert is queued; while
it keeps failing, another failed run at least ``realert_every`` seconds after the last alert
queues ``still_failing`` (off by default); the first success after an alerted streak queues
``recovered`` (with ``recover_after_successes`` above 1, the success that makes that many in a
row; a failure before then continues the streak, re-alerts included). A streak that never
reached the threshold ends silently (like healthchecks, "up" is only said after "down" was).
Skipped and missed slots do not count. The thresholds are the rule monitors share
(:func:`core.alerting.tolerate`).

The streak lives in ``alert_states`` (an inline projection of ``run.failed`` /
``run.succeeded`` events and the alerts queued), not on the ``jobs`` row, so ``jobs`` stays
exactly the fold of the job's own stream. The recorder only calls here for final failures and
for successes of jobs that have a streak (the run update returns that flag), so a healthy job's
run costs no extra query.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from core.alerting import Streak, tolerate
from core.db import Connection
from core.notifications.messages import job_message
from core.notifications.outbox import Alert, Hold, enqueue
from core.notifications.released import release_dependents
from core.queries import Q
from core.rows import field_values


@dataclass(frozen=True)
class FinalRun:
    """A run that just reached ``failed`` or ``succeeded``.

    Attributes:
        was_failing: the job had a failure streak when the run was recorded.
        last_response: ``{"status", "body", "error_class", "error"}`` of its last attempt.
    """

    job_id: uuid.UUID
    team_id: uuid.UUID
    run_id: uuid.UUID
    status: str
    was_failing: bool
    scheduled_for: datetime
    attempts: int
    finished_at: datetime
    last_response: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class JobStreak:
    """A job's failure streak (its ``alert_states`` row) with the job's alert rules, as the
    rules read it: a row of ``alert_state_job_fail`` or ``alert_state_job_streaks``
    (core/sql/notifications.sql), read once where it is fetched (:meth:`from_row`), or the
    what-if replay's fold of the same (:mod:`core.replay.streak`).

    ``failing_since``: the slot of the streak's first failed run (UTC);
    ``consecutive_successes``: good runs counted towards ``recover_after_successes`` (only
    ``alert_state_job_streaks`` returns it); ``last_alert_at``: ``None`` until the streak
    alerted. The job's fields (``name``, ``status``, ``channels``, ``alert_after_failures``,
    ``realert_every`` in seconds, ``recover_after_successes``) are those the statement joins;
    the others keep their defaults (the replay sets the rules of the job's definition then).
    """

    job_id: uuid.UUID
    failing_since: datetime
    consecutive_failures: int
    last_alert_at: datetime | None
    consecutive_successes: int = 0
    name: str = ""
    status: str = "active"
    channels: Sequence[uuid.UUID] = ()
    alert_after_failures: int = 1
    realert_every: int | None = None
    recover_after_successes: int = 1

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> JobStreak:
        """The streak in one row of those statements (the columns it has)."""
        return cls(**field_values(cls, row, present_only=True))


def reaches_rules(status: str, was_failing: bool) -> bool:
    """Whether a final outcome goes to the alert rules: every failure, and a success of a job
    that has a failure streak (a healthy job's success costs nothing)."""
    return status == "failed" or was_failing


def split_streaks(finals: Sequence[FinalRun]) -> tuple[dict[uuid.UUID, FinalRun],
                                                  dict[uuid.UUID, list[FinalRun]]]:
    """Per job: the last success that ends a streak, and the failures after it."""
    recoveries: dict[uuid.UUID, FinalRun] = {}
    failures: dict[uuid.UUID, list[FinalRun]] = {}
    for run in sorted(finals, key=lambda r: r.finished_at):
        if run.status == "succeeded":
            if run.was_failing or failures.get(run.job_id):
                recoveries[run.job_id] = run
            failures.pop(run.job_id, None)
        else:
            failures.setdefault(run.job_id, []).append(run)
    return recoveries, failures


def batch_successes(finals: Sequence[FinalRun]) -> dict[uuid.UUID, tuple[int, bool]]:
    """Per job: how many successes came after the batch's last failure, and whether a failure
    came before them in the batch (it ended any run of good ones counted before)."""
    out: dict[uuid.UUID, tuple[int, bool]] = {}
    for run in sorted(finals, key=lambda r: r.finished_at):
        n, reset = out.get(run.job_id, (0, False))
        out[run.job_id] = (n + 1, reset) if run.status == "succeeded" else (0, True)
    return out


def recover(state: JobStreak, successes: int, reset: bool) -> tuple[JobStreak | None, bool]:
    """The streak after ``successes`` good runs in a row (the shared rule,
    :func:`core.alerting.tolerate`, with the job's ``recover_after_successes``), and whether
    they say ``recovered``: ``(None, …)`` when the streak ends (a streak that never alerted
    ends silently at its first success; an alerted one after ``recover_after_successes`` in a
    row), else ``state`` with its ``consecutive_successes``. ``reset``: a failure came since
    the good ones ``state`` counted so far."""
    streak = Streak(state.consecutive_failures, 0 if reset else state.consecutive_successes,
                    state.last_alert_at is not None)
    alert = None
    for _ in range(max(successes, 1)):
        streak, alert = tolerate(streak, "success", alert_after=1,
                                 recover_after=state.recover_after_successes)
        if alert is not None or streak.idle:
            break
    if alert == "recovery":
        return None, state.status != "deleted"
    if streak.idle:
        return None, False
    return replace(state, consecutive_successes=streak.successes), False


def grow_streak(state: JobStreak | None, failures: Sequence[FinalRun]) -> JobStreak:
    """A job's streak after ``failures`` (one batch, in order), as ``alert_state_job_fail``
    writes it: a new streak starts at the slot of its first failure, an existing one counts on.
    The statement does it in SQL under the row lock; the what-if replay
    (:mod:`core.replay.jobs`) does it here, and ``tests/integration/test_replay_jobs.py``
    (hypothesis, the real recorder) keeps the two equal."""
    if state is None:
        return JobStreak(job_id=failures[0].job_id, failing_since=failures[0].scheduled_for,
                         consecutive_failures=len(failures), last_alert_at=None)
    return replace(state, consecutive_failures=state.consecutive_failures + len(failures),
                   consecutive_successes=0)


async def _recover(conn: Connection, recoveries: dict[uuid.UUID, FinalRun],
                   successes: dict[uuid.UUID, tuple[int, bool]], now: datetime
                   ) -> tuple[list[Alert], list[uuid.UUID]]:
    """The recovery alerts of jobs whose good runs end their streaks, and the jobs whose
    streaks ended (no longer down as parents)."""
    cur = await conn.execute(Q["alert_state_job_streaks"], {"job_ids": sorted(recoveries)})
    alerts: list[Alert] = []
    ended: list[uuid.UUID] = []
    going: list[JobStreak] = []
    for state in map(JobStreak.from_row, await cur.fetchall()):
        after, said = recover(state, *successes.get(state.job_id, (1, False)))
        if after is not None:  # good runs counted towards recover_after_successes
            going.append(after)
            continue
        ended.append(state.job_id)
        if not said:
            continue  # the streak never alerted: nothing to take back
        run = recoveries[state.job_id]
        message = job_message(
            "recovered", job_id=run.job_id, job_name=state.name, run_id=run.run_id,
            scheduled_for=run.scheduled_for, attempts=run.attempts,
            consecutive_failures=state.consecutive_failures, since=state.failing_since,
            last_response=run.last_response, now=now)
        alerts.append(Alert(run.team_id, "job", run.job_id, "recovered", state.channels,
                            message, {"reason": "succeeded", "run_id": run.run_id,
                                      "scheduled_for": run.scheduled_for,
                                      "since": state.failing_since,
                                      "consecutive_failures": state.consecutive_failures,
                                      "recover_after_successes":
                                          state.recover_after_successes}))
    if ended:
        await conn.execute(Q["alert_state_job_recover"], {"job_ids": ended})
    if going:
        await conn.execute(Q["alert_state_job_successes"], {
            "job_ids": [s.job_id for s in going],
            "successes": [s.consecutive_successes for s in going]})
    return alerts, ended


def decide_alert(state: JobStreak, now: datetime) -> str | None:
    """The alert a batch of failures queues (``failed``, ``still_failing``) or ``None``, given
    the streak after it and the job's rules (``state``: its ``status``,
    ``consecutive_failures``, ``last_alert_at``, ``alert_after_failures``, ``realert_every``)
    at ``now`` (UTC). Pure: reads nothing else."""
    if state.status == "deleted":
        return None
    if state.last_alert_at is None:
        # the streak before the batch's last failure, then that failure: the shared rule
        before = Streak(state.consecutive_failures - 1, 0, False)
        _, alert = tolerate(before, "failure", alert_after=state.alert_after_failures,
                            recover_after=1)
        return "failed" if alert == "failure" else None
    every = state.realert_every
    if every and (now - state.last_alert_at).total_seconds() >= every:
        return "still_failing"
    return None


async def _fail(conn: Connection, failures: dict[uuid.UUID, list[FinalRun]],
                now: datetime) -> list[Alert]:
    jobs = sorted(failures)  # one lock order for alert_states rows across concurrent recorders
    cur = await conn.execute(Q["alert_state_job_fail"], {
        "job_ids": jobs, "team_ids": [failures[j][0].team_id for j in jobs],
        # The streak starts at the slot of its first failed run (what a reader schedules by).
        "since": [failures[j][0].scheduled_for for j in jobs],
        "counts": [len(failures[j]) for j in jobs]})
    alerts = []
    for state in map(JobStreak.from_row, await cur.fetchall()):
        event = decide_alert(state, now)
        if event is None:
            continue
        run = failures[state.job_id][-1]
        message = job_message(
            event, job_id=run.job_id, job_name=state.name, run_id=run.run_id,
            scheduled_for=run.scheduled_for, attempts=run.attempts,
            consecutive_failures=state.consecutive_failures, since=state.failing_since,
            last_response=run.last_response, now=now)
        rule = {"reason": "alert_after_failures" if event == "failed" else "realert_every",
                "run_id": run.run_id, "scheduled_for": run.scheduled_for,
                "since": state.failing_since,
                "consecutive_failures": state.consecutive_failures,
                "alert_after_failures": state.alert_after_failures,
                "realert_every": state.realert_every}
        alerts.append(Alert(run.team_id, "job", run.job_id, event, state.channels, message,
                            rule))
    if alerts:
        await conn.execute(Q["alert_state_mark_alerted"], {
            "subject_type": "job", "ids": [a.subject_id for a in alerts], "now": now})
    return alerts


async def record_job_outcomes(
    conn: Connection, finals: Sequence[FinalRun], now: datetime,
    max_attempts: int, hold: Hold,
) -> list[uuid.UUID]:
    """Update the jobs' failure streaks and queue their alerts, in the caller's transaction.

    Args:
        conn: the recorder's transaction (the one appending ``run.failed``/``run.succeeded``).
        finals: final failures, and successes of jobs that had a streak.
        now: the recording instant (UTC).
        max_attempts: delivery attempts of each notification.
        hold: which alerts a maintenance window holds (:data:`core.notifications.outbox.Hold`).

    Returns:
        The outbox row ids written.
    """
    recoveries, failures = split_streaks(finals)
    alerts: list[Alert] = []
    ended: list[uuid.UUID] = []
    if recoveries:
        recovered, ended = await _recover(conn, recoveries, batch_successes(finals), now)
        alerts += recovered
    if failures:
        alerts += await _fail(conn, failures, now)
    written = await enqueue(conn, alerts, now, max_attempts, hold=hold) if alerts else []
    # after the recoveries (which name the dependents they hold): their holds may end now
    await release_dependents(conn, ended, now, hold=hold, max_attempts=max_attempts)
    return written
