"""The advisor for a job (docs/advice.md): its final runs over the last days, each candidate
replayed with the job replay (:func:`core.replay.jobs.replay`, :func:`core.replay.jobs.side`),
judged by :func:`core.advice.rules.choose`.

Fields examined: ``alert_after_failures`` (1 to :data:`TOLERANCES`) and
``recover_after_successes`` (1 to :data:`RECOVERIES`), each with the others as they are;
``max_duration`` and ``min_duration`` from the durations of the runs that succeeded (or failed
only for being too short) when there are at least
:data:`~core.advice.rules.MIN_OBSERVATIONS` (:func:`core.advice.rules.duration_bounds`).
Every replay uses the recorded maintenance windows and the recorded outages of the job's
parents, as ``POST /v1/jobs/{id}/simulate`` does.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from core import streams
from core.actor import Actor
from core.advice.answer import (
    Advice,
    Kept,
    Suggestion,
    bound,
    constant_fields,
    examined,
    in_a_row,
    trial_key,
    window,
)
from core.advice.rules import (
    MIN_OBSERVATIONS,
    Trial,
    choose_replaying,
    counted,
    duration_bounds,
    figures,
    is_real,
    reopened,
)
from core.alerting import MAX_RUN_SECONDS
from core.db import ConnectionPool
from core.errors import InvalidInput, NotFound
from core.history.streams import JOB, events_until
from core.jobs.state import JobState, evolve
from core.replay.compare import Incident
from core.replay.dependencies import Outages, named, outages
from core.replay.jobs import recorded_runs, replay, side, skipped, slot_alerts
from core.replay.maintenance import Maintenance, recorded_and_proposed
from core.replay.proposal import Proposal, job_proposal
from core.runs.bounds import TOO_SHORT
from core.schedule import Schedule, cached_schedule
from core.stored import schedule_problem

TOLERANCES = 4
RECOVERIES = 3
PROBLEMS = ("failed", "too_long")  # the alerts a trial counts


@dataclass(frozen=True)
class JobHistory:
    """What the job advisor reads: the job's stream (version order), the final runs from the
    replay's warm-up on (``ledger_job_finals`` rows), the slots not run, the recorded
    maintenance windows and parents' outages."""

    job_events: list[dict[str, Any]]
    finals: list[dict[str, Any]]
    not_run: list[dict[str, Any]]
    maintenance: Maintenance | None
    parents: Outages | None


def _timed(row: dict[str, Any]) -> float | None:
    """A final run's duration in seconds when it reported success (succeeded, or failed only
    for being too short), else ``None``."""
    data = row["data"]
    good = row["event_type"] == "run.succeeded" or data.get("error_class") == TOO_SHORT
    ms = data.get("duration_ms")
    return ms / 1000 if good and ms is not None else None


class _Trials:
    """Replays of the job's final runs under one proposal each."""

    def __init__(self, history: JobHistory, latest: JobState, start: datetime,
                 end: datetime, now: datetime) -> None:
        self.history, self.latest = history, latest
        self.start, self.end, self.now = start, end, now
        self.schedule: Schedule | None = schedule_problem(
            cached_schedule, latest.schedule, latest.timezone, latest.anchor_at)[0]
        states: list[JobState] = []  # the job's stream holds its definition events only
        for event in history.job_events:
            states.append(evolve(states[-1] if states else None, event))
        # a proposal of values that never changed replays as the recorded one (trial_key)
        self._constant = constant_fields(states)
        self._done: dict[tuple[str, Any], Trial] = {}

    def trial(self, field_name: str, value: Any) -> Trial | None:
        """The replay with ``{field_name: value}`` over the whole window, the current value as
        any other candidate (the setting in force now, not the recorded values of the time,
        issue 32); ``None`` when the definition rules refuse the value."""
        try:
            proposal = job_proposal({field_name: value}, self.now, self.latest.definition())
        except InvalidInput:
            return None
        key = trial_key(field_name, value, proposal.overrides, self._constant)
        if key not in self._done:
            self._done[key] = self._replayed(value, proposal)
        done = self._done[key]
        return done if done.value == value else Trial(value, done.incidents, done.alerts)

    def _replayed(self, value: Any, proposal: Proposal) -> Trial:
        history = self.history
        kept, _ = skipped(history.finals, history.maintenance)
        alerts = replay(history.job_events, kept, proposal, self.start, history.maintenance,
                        None if history.parents is None else history.parents.spans,
                        self.end) + slot_alerts(
            history.job_events, history.not_run, proposal, self.start, history.maintenance)
        alerts.sort(key=lambda a: a["at"])
        _, incidents = side(alerts, self.end)
        said = sum(a["event"] in PROBLEMS and a.get("maintenance") != "suppressed"
                   and a.get("dependency") != "held" for a in alerts)
        return Trial(value, incidents, said)

    def trials(self, field_name: str, values: Sequence[Any]) -> list[Trial]:
        return [t for t in (self.trial(field_name, v) for v in values) if t is not None]

    def real(self, incident: Incident) -> bool:
        return is_real(incident, self.schedule)

    def flapped(self, previous: Incident, incident: Incident) -> bool:
        return reopened(previous, incident, self.schedule)


def advise(history: JobHistory, latest: JobState, days: int, now: datetime) -> Advice:
    """The advice for a job whose recorded history is ``history`` and whose definition is
    ``latest``, over the ``days`` days before ``now``, or since its schedule last changed in
    them (:func:`core.advice.answer.window`; docs/advice.md)."""
    span = window(history.job_events, days, now)
    start, during = span.start, span.during
    runs = [r for r in history.finals if r["occurred_at"] >= start]
    if len(runs) < MIN_OBSERVATIONS:
        return Advice("job", latest.id, start, now, days, len(runs),
                      f"too little history: {counted(len(runs), 'finished run')} {span.last}, "
                      f"at least "
                      f"{MIN_OBSERVATIONS} are needed", schedule_changed_at=span.changed)
    trials = _Trials(history, latest, start, now, now)
    failed = sum(r["event_type"] == "run.failed" for r in runs)
    seen = f"{counted(len(runs), 'finished run')} {during}, {failed} of them failed"
    found: list[Suggestion | Kept] = []
    for name, top, word in (("alert_after_failures", TOLERANCES, "failed runs"),
                            ("recover_after_successes", RECOVERIES, "good runs")):
        current = getattr(latest, name)
        flaps = name == "recover_after_successes"
        verdict = choose_replaying(sorted({*range(1, top + 1), current}),
                                   partial(trials.trial, name), current, trials.real,
                                   trials.flapped if flaps else None)
        found.append(examined(name, verdict, seen, in_a_row(word),
                              "flap" if flaps else "false alarm"))
    timed = [d for d in (_timed(r) for r in runs) if d is not None]
    if len(timed) >= MIN_OBSERVATIONS:
        upper, lower = duration_bounds(timed, MAX_RUN_SECONDS)
        said = ("{n} good runs {during} took p50 {p50:g} s, p95 {p95:g} s, longest "
                "{max:g} s, shortest {low:g} s").format(n=len(timed), during=during,
                                                        low=min(timed), **figures(timed))
        found += [bound(trials, "max_duration", latest.max_duration, upper, said, max(timed)),
                  bound(trials, "min_duration", latest.min_duration, lower, said, min(timed))]
    return Advice("job", latest.id, start, now, days, len(runs), None,
                  [f for f in found if isinstance(f, Suggestion)],
                  [f for f in found if isinstance(f, Kept)], span.changed)


async def advise_job(pool: ConnectionPool, actor: Actor, job_id: uuid.UUID, days: int,
                     now: datetime) -> Advice:
    """``GET /v1/jobs/{id}/advice``: :func:`advise` over what the job recorded up to ``now``,
    read as ``POST /v1/jobs/{id}/simulate`` reads it. Reads only.

    Raises:
        NotFound: no such job for this team, or a deleted one.
    """
    start = now - timedelta(days=days)
    async with pool.connection() as conn:
        job_events = await events_until(conn, JOB, job_id, actor.team_id, now)
        latest = streams.fold(evolve, job_events)
        if latest is None or latest.status == "deleted":
            raise NotFound(f"job {job_id} not found")
        # the replay starts at the job's first run: a candidate recover_after_successes
        # above 1 means a success need not end a streak (core/replay/jobs.py:counts_successes)
        finals, not_run = await recorded_runs(conn, job_id, actor.team_id,
                                              job_events[0]["occurred_at"], start, now)
        _, maintenance = await recorded_and_proposed(conn, "job", job_id, actor.team_id,
                                                     Proposal(), start, now)
        states: list[JobState | None] = [None]
        for event in job_events:
            states.append(evolve(states[-1], event))
        parents = await outages(conn, actor.team_id, named(states), now)  # as ever named
    history = JobHistory(job_events, finals, not_run, maintenance, parents)
    return await asyncio.to_thread(advise, history, latest, days, now)  # CPU-bound: off the loop
