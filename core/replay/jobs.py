"""What-if replay of a job's alert rules: its recorded final run outcomes through the rules of
:mod:`core.notifications.job_alerts`.

The recorder decides a job's alerts once per recording transaction (a batch): the batch's final
outcomes are split with :func:`~core.notifications.job_alerts.split_streaks`, the successes
that end an alerted streak say ``recovered`` (:func:`~core.notifications.job_alerts.recover`,
after ``recover_after_successes`` in a row),
failures grow the streak (:func:`~core.notifications.job_alerts.grow_streak`, what
``alert_state_job_fail`` writes) and :func:`~core.notifications.job_alerts.decide_alert` says
``failed`` / ``still_failing``. The replay groups the recorded ``run.succeeded`` /
``run.failed`` events by the transaction that appended them and applies the same functions
(:func:`core.replay.streak.step`, also how a job named as a parent is down),
with the job's definition as its stream had it at the batch (:func:`core.jobs.state.evolve`)
under the proposal's overrides (``alert_after_failures``, ``recover_after_successes``,
``realert_every`` …).

The run-time bounds and ``alert_on`` replay too (docs/notifications.md, *Run-time bounds of
jobs*, *Slots that did not run*): under the definition of the batch, a recorded success whose
``duration_ms`` is under ``min_duration`` counts as a failure and a failure recorded
``too_short`` that the bound no longer catches as a success (the retries it would have made or
spared are not known: the recorded attempt decides); a final run whose end came later than its
start plus ``max_duration`` (the bound in force then: :func:`overran_under`) says
``too_long`` at that instant (runs still going at the window's end are not judged); a slot
recorded ``skipped`` or ``missed`` says its reason (``held`` for maintenance) when
``alert_on`` names it.

A streak may begin before the window: the replay starts at the last success recorded before
``from`` (every streak ends at a success), or at the job's first run (also when
``recover_after_successes`` above 1 was ever in force or is proposed: a success may not end a
streak then), and lists only the alerts
from ``from`` on. What happened is the alerts queued for the job (``notifications``), which
exist only for a job with channels. Nothing is written.

Maintenance (:mod:`core.replay.maintenance`): an alert inside a ``suppress: alerts`` window is
held (``"maintenance": "suppressed"``, no incident opens; job alerts are not released at the
close, as live). A ``suppress: runs`` window skips the slots inside it: the recorded outcomes of
those slots are dropped from the replay and counted as ``outcomes.would_skip``. A replay cannot
bring back slots a recorded ``runs`` window skipped (no outcome was recorded).
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from itertools import groupby
from typing import Any

from core import streams
from core.actor import Actor
from core.coerce import instant
from core.db import Connection, ConnectionPool, one_row
from core.dependencies import check_proposed
from core.errors import NotFound
from core.history.streams import JOB, events_until
from core.jobs.state import JobState, evolve
from core.notifications.job_alerts import JobStreak
from core.queries import Q
from core.replay.compare import incidents, listed, summary
from core.replay.dependencies import Parents, hold, named, outages
from core.replay.maintenance import Maintenance, recorded_and_proposed
from core.replay.proposal import Proposal, job_proposal
from core.replay.streak import step
from core.replay.window import replay_window
from core.runs.claim import MAINTENANCE_REASON

MAX_LISTED = 1000  # alerts listed per side; the summary counts them all
OPENS, CLOSES = ("failed",), ("recovered",)


def fire_time(row: dict[str, Any]) -> datetime:
    """When a recorded run's slot was to fire: the ``fire_at`` its first event names (the slot
    plus its job's spread offset then, docs/schedules.md, *Spread*), else its slot."""
    scheduled: datetime = row["scheduled_for"]  # runs.scheduled_for: timestamptz NOT NULL
    return instant(row.get("fire_at")) or scheduled


def overran(row: dict[str, Any], max_duration: int | None) -> datetime | None:
    """When a recorded final run passed its start plus ``max_duration`` (seconds) while still
    going (the instant :func:`core.runs.bounds.alert_overruns` says ``too_long``), or
    ``None``. Its start: its fire time (:func:`fire_time`) plus the first attempt's lateness,
    as the run row keeps it."""
    finished = instant(row["data"].get("finished_at"))
    if max_duration is None or finished is None:
        return None
    started = fire_time(row) + timedelta(milliseconds=row["data"].get("lateness_ms") or 0)
    deadline = started + timedelta(seconds=max_duration)
    return deadline if finished > deadline else None


def overran_under(row: dict[str, Any], bounds: list[tuple[datetime, int | None]]
                  ) -> datetime | None:
    """:func:`overran` under the ``max_duration`` in force at each instant: ``bounds`` is
    ``[(since, max_duration), ...]`` in order, each in force until the next. The live pass
    reads the bound in force when it runs (:func:`core.runs.bounds.alert_overruns`), so a run
    passes its bound at its start plus the bound, or at the edit that put a bound it had
    already passed in force; ``None`` when it ended first."""
    finished = instant(row["data"].get("finished_at"))
    for n, (since, bound) in enumerate(bounds):
        deadline = overran(row, bound)
        if deadline is None or finished is None:
            continue
        at = max(deadline, since)
        if (n + 1 == len(bounds) or at < bounds[n + 1][0]) and finished > at:
            return at
    return None


def skipped(finals: list[dict[str, Any]], maintenance: Maintenance | None
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(kept, skipped)``: the outcomes whose fire time (:func:`fire_time`, as the claim
    judges it) a ``suppress: runs`` window covers."""
    if maintenance is None:
        return finals, []
    kept: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    for row in finals:
        slot = row["scheduled_for"]
        (dropped if slot is not None and maintenance.skips(fire_time(row))
         else kept).append(row)
    return kept, dropped


def replay(job_events: list[dict[str, Any]], finals: list[dict[str, Any]],
           proposal: Proposal, start: datetime,
           maintenance: Maintenance | None = None,
           spans: dict[uuid.UUID, list[tuple[datetime, datetime | None]]] | None = None,
           end: datetime | None = None) -> list[dict[str, Any]]:
    """The alerts ``{"at", "event", "maintenance": suppressed|None}`` the job's rules (under
    ``proposal``) give for the recorded final outcomes ``finals`` (rows of
    ``ledger_job_finals``, those :func:`skipped` already dropped), from ``start`` on, alerts
    held by ``maintenance`` marked, and those the recorded outages ``spans`` of the parents
    its ``depends_on`` named at each instant hold (``"dependency": "held"``) or release by
    ``end`` (:mod:`core.replay.dependencies`).

    Args:
        job_events: the job's stream in version order (its definition at each batch).
    """
    rules = _JobRules(job_events, proposal, start, maintenance,
                      None if spans is None else Parents(spans))
    for _, rows in groupby(finals, key=lambda r: r["tx_id"]):
        rules.batch(list(rows))
    return rules.answer(end)


class _JobRules:
    """The state of one :func:`replay`: the job as of each batch, its failure streak, the
    alerts said, and a problem alert a parent holds (``held_at``, by ``holding``)."""

    def __init__(self, job_events: list[dict[str, Any]], proposal: Proposal, start: datetime,
                 maintenance: Maintenance | None, parents: Parents | None) -> None:
        self.proposal, self.start = proposal, start
        self.maintenance, self.parents = maintenance, parents
        self.alerts: list[dict[str, Any]] = []
        self.late: list[dict[str, Any]] = []  # too_long, said while the run went on
        self.streak: JobStreak | None = None
        self.job: JobState | None = None
        self.held_at: datetime | None = None  # a problem alert a parent holds, not released
        self.holding: list[uuid.UUID] = []  # the parents that held it (a recovery's held_by)
        self.pending = list(job_events)
        self.bounds: list[tuple[datetime, int | None]] = []  # max_duration from each instant
        job: JobState | None = None
        for event in job_events:
            job = proposal.apply(evolve(job, event))
            self.bounds.append((event["occurred_at"], job.max_duration))

    def _held(self, at: datetime) -> str | None:
        return "suppressed" if self.maintenance is not None and self.maintenance.holds(at) \
            else None

    def release(self, until: datetime | None) -> None:
        """The held problem alert, released when its parents are all back by ``until``."""
        held_at, parents = self.held_at, self.parents
        free = None if held_at is None or parents is None else parents.free_at(held_at)
        if free is None or (until is not None and free > until):
            return
        self.holding = []
        if self.streak is not None and free >= self.start:
            self.alerts.append({"at": free, "event": "failed", "dependency": "released",
                                "maintenance": self._held(free)})
        self.held_at = None

    def _edits(self, until: datetime) -> None:
        """The job's recorded events up to ``until`` (inclusive), each at its instant: an
        edit of ``depends_on`` releases at once a hold the new list leaves no parent down
        for (live: :func:`core.notifications.released.release_subject`)."""
        while self.pending and self.pending[0]["occurred_at"] <= until:
            event = self.pending.pop(0)
            at = event["occurred_at"]
            self.release(at)
            self.job = self.proposal.apply(evolve(self.job, event))
            if self.parents is not None and not self.parents.names(self.job.depends_on):
                self.parents.follow(at, self.job.depends_on)
                self.release(at)

    def batch(self, batch: list[dict[str, Any]]) -> None:
        """The finals one transaction recorded, under the job's definition then."""
        now = batch[0]["occurred_at"]
        self._edits(now)
        self.release(now)
        job = self.job
        if job is None:
            return
        for row in batch:
            at = overran_under(row, self.bounds)
            if at is not None and at >= self.start:
                self.late.append({"at": at, "event": "too_long"})
        self.streak, said = step(job, self.streak, batch, now)  # live's streak, one fold
        self._say(now, said)

    def _say(self, now: datetime, said: list[str]) -> None:
        """The alerts of ``said`` at ``now``: held by maintenance or a down parent as live."""
        held = self._held(now)
        for event in said:
            alert: dict[str, Any] = {"at": now, "event": event, "maintenance": held}
            down = self.parents.down_at(now) if self.parents is not None else []
            if event == "recovered" and self.held_at is not None:
                alert, self.held_at = hold(alert, self.holding), None  # back while held
                self.holding = []
            elif event != "recovered" and down:
                alert, self.held_at = hold(alert, down), self.held_at or now
                self.holding = list(dict.fromkeys(self.holding + down))  # its open holds
            if now >= self.start:
                self.alerts.append(alert)

    def answer(self, end: datetime | None) -> list[dict[str, Any]]:
        """The alerts, by instant, with the held problem alert released by ``end``."""
        if end is not None:
            self._edits(end)
        self.release(end)
        alerts = self.alerts + [{**a, "maintenance": self._held(a["at"])} for a in self.late]
        return sorted(alerts, key=lambda a: a["at"])


async def recorded_runs(conn: Connection, job_id: uuid.UUID, team_id: uuid.UUID,
                        finals_from: datetime, start: datetime, end: datetime
                        ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What a job's replay reads of its runs: the final outcomes recorded from
    ``finals_from`` to ``end`` (``ledger_job_finals``, the streak's warm-up included) and the
    slots recorded as not run from ``start`` to ``end`` (``ledger_job_not_run``)."""
    params = {"job_id": job_id, "team_id": team_id}
    cur = await conn.execute(Q["ledger_job_finals"], {**params, "from": finals_from, "to": end})
    finals = await cur.fetchall()
    cur = await conn.execute(Q["ledger_job_not_run"], {**params, "from": start, "to": end})
    return finals, await cur.fetchall()


def slot_alerts(job_events: list[dict[str, Any]], not_run: list[dict[str, Any]],
                proposal: Proposal, start: datetime,
                maintenance: Maintenance | None = None) -> list[dict[str, Any]]:
    """The alerts of slots recorded as not run (rows of ``ledger_job_not_run``) whose reason
    the job's ``alert_on`` (as of the slot's record, under ``proposal``) names, from ``start``
    on: ``{"at", "event": skipped|missed|held, "maintenance"}``, one per instant and reason
    (the slots one claim recorded together are listed once, as the queued side lists them)."""
    alerts: list[dict[str, Any]] = []
    said: set[tuple[datetime, str]] = set()
    job: JobState | None = None
    pending = list(job_events)
    for row in not_run:
        at = row["occurred_at"]
        while pending and pending[0]["occurred_at"] <= at:
            job = proposal.apply(evolve(job, pending.pop(0)))
        if job is None or at < start:
            continue
        kind = "held" if row["data"].get("reason") == MAINTENANCE_REASON \
            else row["event_type"].removeprefix("run.")
        if kind in job.alert_on and (at, kind) not in said:  # one per instant, as listed
            said.add((at, kind))
            held = maintenance is not None and maintenance.holds(at)
            alerts.append({"at": at, "event": kind,
                           "maintenance": "suppressed" if held else None})
    return alerts


def counts_successes(job_events: list[dict[str, Any]], proposal: Proposal) -> bool:
    """Whether the job had, or the proposal gives it, ``recover_after_successes`` above 1 at
    some point: then a success need not end a streak, and the replay starts at the job's
    first run instead of the last success before the window."""
    def asked(data: dict[str, Any]) -> int:
        return int(data.get("recover_after_successes")
                   or (data.get("changes") or {}).get("recover_after_successes") or 1)
    return proposal.overrides.get("recover_after_successes", 1) > 1 or any(
        asked(e["data"] or {}) > 1 for e in job_events)


def queued_alert(row: dict[str, Any]) -> dict[str, Any]:
    """An alert as queued (a ``ledger_alerts_queued`` row), marked as the replay marks it:
    ``maintenance`` suppressed (a window held it), ``dependency`` held (with the ``held_by``
    recorded) or released."""
    alert = {"at": row["at"], "event": row["event"],
             "maintenance": "suppressed" if row["suppressed"] and not row["held"] else None}
    if row["held"]:
        alert["dependency"] = "held"
        alert["held_by"] = list(row["held_by"] or [])
    elif row["released"]:
        alert["dependency"] = "released"
    return alert


def side(alerts: list[dict[str, Any]], end: datetime) -> tuple[dict[str, Any], list[Any]]:
    """One side of the answer (``{"alerts", "truncated"}``) and its incidents."""
    shown, cut = listed(alerts, MAX_LISTED)
    changes = [(a["at"], a["event"] in OPENS, "failures") for a in alerts
               if a["event"] in OPENS + CLOSES and a.get("maintenance") != "suppressed"
               and a.get("dependency") != "held"]
    return {"alerts": shown, "truncated": cut}, incidents(changes, end)


async def simulate_job(pool: ConnectionPool, actor: Actor, job_id: uuid.UUID,
                       changes: dict[str, Any], start: datetime | None,
                       end: datetime | None, now: datetime) -> dict[str, Any]:
    """``POST /v1/jobs/{id}/simulate``: the job's alerts under the proposal ``changes``
    (:func:`core.replay.proposal.job_proposal`) over ``[start, end]`` (read by
    :func:`core.replay.window.replay_window` once the job is found: the id first,
    docs/api.md, *The OpenAPI document*), next to the alerts queued. Reads only.

    Returns:
        ``{"changes", "simulated": {"alerts", "truncated"}, "actual": {...}, "outcomes":
        {"succeeded", "failed"} (final outcomes recorded in the window), "would_skip" (those
        a ``suppress: runs`` window drops), "summary", "from", "to"}`` (the window).

    Raises:
        NotFound: no such job for this team (a deleted one can still be replayed).
        InvalidInput: a window or a proposal the job definition rules refuse.
    """
    async with pool.connection() as conn:
        job_events = await events_until(conn, JOB, job_id, actor.team_id, now)
        if not job_events:
            raise NotFound(f"job {job_id} not found")
        start, end = replay_window(start, end, now)
        current = streams.fold(evolve, job_events)
        proposal = job_proposal(changes, now, current.definition() if current else None)
        cur = await conn.execute(Q["ledger_job_last_success_before"], {
            "job_id": job_id, "team_id": actor.team_id, "before": start})
        last = one_row(await cur.fetchone(), "ledger_job_last_success_before")  # max(): a row
        warm = last["at"] or job_events[0]["occurred_at"]
        if counts_successes(job_events, proposal):  # a success may not end the streak
            warm = job_events[0]["occurred_at"]
        finals, not_run = await recorded_runs(conn, job_id, actor.team_id,
                                              min(warm, start), start, end)
        cur = await conn.execute(Q["ledger_alerts_queued"], {
            "subject_type": "job", "subject_id": job_id, "team_id": actor.team_id,
            "from": start, "to": end})
        queued = [queued_alert(r) for r in await cur.fetchall()]
        _, maintenance = await recorded_and_proposed(
            conn, "job", job_id, actor.team_id, proposal, start, end)
        assert current is not None  # job_events is not empty
        states: list[JobState | None] = [None]
        for event in job_events:
            states.append(evolve(states[-1], event))
        if "depends_on" in proposal.overrides:
            await check_proposed(conn, actor.team_id, job_id, proposal.overrides["depends_on"])
            states.append(proposal.apply(current))
        parents = await outages(conn, actor.team_id, named(states), end)
    kept, dropped = skipped(finals, maintenance)
    spans = None if parents is None else parents.spans
    replayed = replay(job_events, kept, proposal, start, maintenance, spans, end) + slot_alerts(
        job_events, not_run, proposal, start, maintenance)
    simulated, proposed = side(sorted(replayed, key=lambda a: a["at"]), end)
    actual, happened = side(queued, end)
    in_window = [r for r in finals if r["occurred_at"] >= start]
    return {"changes": proposal.shown(), "simulated": simulated, "actual": actual,
            "outcomes": {"succeeded": sum(r["event_type"] == "run.succeeded" for r in in_window),
                         "failed": sum(r["event_type"] == "run.failed" for r in in_window),
                         "would_skip": sum(r["occurred_at"] >= start for r in dropped)},
            "summary": summary(proposed, happened), "from": start, "to": end}
