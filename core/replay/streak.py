"""A job's failure streak replayed from its recorded final outcomes: the one fold the what-if
replay uses for the job it replays (:mod:`core.replay.jobs`) and for a job named as a parent
(:mod:`core.replay.dependencies`), with the rules of :mod:`core.notifications.job_alerts`.

Live keeps the streak in ``alert_states``: a row from the first final failure until a good run
ends it (the first one when the streak never alerted, else the ``recover_after_successes``-th
in a row, :func:`core.alerting.tolerate`); a job parent is down exactly while that row exists
(``dependency_parents``, docs/notifications.md, *Dependencies*). :func:`down_spans` gives those
spans by the same steps (:func:`step`) the replay of the job's own alerts takes.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from itertools import groupby
from typing import Any

from core.alerting import shorter_than
from core.clock import utc
from core.jobs.state import JobState, evolve
from core.notifications.job_alerts import (
    FinalRun,
    JobStreak,
    batch_successes,
    decide_alert,
    grow_streak,
    reaches_rules,
    recover,
    split_streaks,
)
from core.runs.bounds import TOO_SHORT

Spans = list[tuple[datetime, datetime | None]]


def judged(row: dict[str, Any], min_duration: int | None) -> str:
    """A recorded final outcome (a ``ledger_job_finals`` row) under ``min_duration``:
    ``succeeded`` or ``failed`` (:func:`core.runs.bounds.too_short`'s rule)."""
    data = row["data"]
    succeeded = row["event_type"] == "run.succeeded"
    if succeeded or data.get("error_class") == TOO_SHORT:
        return "failed" if shorter_than(data.get("duration_ms"), min_duration) else "succeeded"
    return "failed"


def final(job: JobState, row: dict[str, Any], was_failing: bool) -> FinalRun:
    """The :class:`FinalRun` the recorder handed the rules for a ``ledger_job_finals`` row,
    judged under ``job``'s ``min_duration``."""
    data = row["data"]
    finished = data.get("finished_at")
    return FinalRun(
        job_id=job.id, team_id=job.team_id, run_id=row["run_id"],
        status=judged(row, job.min_duration),
        was_failing=was_failing, scheduled_for=row["scheduled_for"],
        attempts=int(data.get("attempt") or 0),
        finished_at=utc(datetime.fromisoformat(finished)) if finished else row["occurred_at"],
        last_response={})


def step(job: JobState, streak: JobStreak | None, batch: list[dict[str, Any]],
         now: datetime) -> tuple[JobStreak | None, list[str]]:
    """One recording transaction's finals (``ledger_job_finals`` rows) under ``job``'s
    definition then: the streak after them (``None``: no ``alert_states`` row) and the alerts
    the recorder's rules say (``recovered``, ``failed``, ``still_failing``, in that order), as
    :func:`core.notifications.job_alerts.record_job_outcomes` decides them."""
    outcomes = [o for o in (final(job, r, streak is not None) for r in batch)
                if reaches_rules(o.status, o.was_failing)]
    recoveries, failures = split_streaks(outcomes)
    said: list[str] = []
    if job.id in recoveries and streak is not None:
        n, reset = batch_successes(outcomes).get(job.id, (1, False))
        streak, recovered = recover(
            replace(streak, status=job.status,
                    recover_after_successes=job.recover_after_successes), n, reset)
        if recovered:
            said.append("recovered")
    if job.id in failures:
        streak = grow_streak(streak, failures[job.id])
        streak = replace(streak, status=job.status,
                         alert_after_failures=job.alert_after_failures,
                         realert_every=job.realert_every)
        event = decide_alert(streak, now)
        if event is not None:
            said.append(event)
            streak = replace(streak, last_alert_at=now)
    return streak, said


def down_spans(job_events: list[dict[str, Any]], finals: list[dict[str, Any]]) -> Spans:
    """When a job was down as a parent: ``[(start, end or None), ...]`` (half-open, in order;
    ``None``: still down after the last of ``finals``), from its stream ``job_events`` (version
    order, its recorded definition at each batch) and every final outcome it recorded
    (``ledger_job_finals`` rows from its first run on, grouped by transaction)."""
    spans: Spans = []
    job: JobState | None = None
    streak: JobStreak | None = None
    pending = list(job_events)
    for _, rows in groupby(finals, key=lambda r: r["tx_id"]):
        batch = list(rows)
        now = batch[0]["occurred_at"]
        while pending and pending[0]["occurred_at"] <= now:
            job = evolve(job, pending.pop(0))
        if job is None:
            continue
        was_down = streak is not None
        streak, _ = step(job, streak, batch, now)
        if streak is not None and not was_down:
            spans.append((now, None))
        elif streak is None and was_down:
            spans[-1] = (spans[-1][0], now)
    return spans

