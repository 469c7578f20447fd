"""The claim side of the scheduler (docs/architecture.md, "A run").

:func:`claim_due` takes a batch of due jobs with ``FOR UPDATE SKIP LOCKED`` and, in the same
short transaction, decides their slots (catch-up and overlap, :mod:`core.runs.slots`), inserts the
runs, appends their events and advances ``due_at``. The unique ``(job_id, scheduled_for)`` index
makes each slot fire at most once however many workers race. :func:`claim_ready` takes queued
runs (manual triggers, retries, buffered overlaps) and runs whose lease expired. Both return
:class:`core.runs.dispatch.Dispatch` objects; the HTTP requests happen after commit. Both
write the claim's duration into the metadata of the first event they append (``claim_seconds``),
which ``/metrics`` reads (docs/healthchecks.md, *Prometheus*).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from core.clock import Instant, read_now
from core.db import Connection, ConnectionPool, transaction
from core.events import Change, Head, NewEvent, append_at, append_events, to_json
from core.job_definition import JobDefinition, Request, RetryPolicy, with_objects
from core.maintenance.queries import held_alerts, live_windows, subject_tags
from core.maintenance.state import WindowState
from core.maintenance.windows import in_maintenance_until
from core.notifications.messages import job_broken_message, job_slot_message
from core.notifications.outbox import DEFAULT_MAX_ATTEMPTS, Alert, enqueue
from core.queries import Q
from core.reasons import reason_of
from core.rows import field_values
from core.runs import events as run_events
from core.runs.confirm import issue_tokens
from core.runs.dispatch import Dispatch
from core.runs.events import slot_run_id
from core.runs.registry import live_after
from core.runs.slots import apply_overlap, plan_slots
from core.schedule import Schedule, cached_schedule
from core.schedule.spread import fire_time, offset_of
from core.secrets import fetch_sealed
from core.stored import job_problem

log = logging.getLogger("cronledger.scheduler")

SKIP_REASON = "the previous run was still in flight (overlap policy skip)"
BUFFER_REASON = "buffered until the running run finishes (overlap policy queue)"
MISSED_REASON = "the scheduler was not running at the slot (catch-up policy {policy})"
# A slot inside a `suppress: runs` window (docs/ledger.md).
MAINTENANCE_REASON = "maintenance"
# Event metadata key: seconds the claim took (read by core/metrics.py; docs/healthchecks.md).
CLAIM_SECONDS = "claim_seconds"


def _timed(events: list[NewEvent], started: float) -> list[NewEvent]:
    """``events`` with the claim's duration in the metadata of the first one (``claim_seconds``:
    seconds, on the monotonic clock, from the transaction's start to now, i.e. the claim query,
    the planning and the inserts, not the commit). It rides on the claim's own inserts: no extra
    round trip, and one copy per claim (``metrics_claim_durations`` reads one sample per claim
    transaction), not one per run of a big slot."""
    if not events:
        return events
    first = events[0]
    elapsed = round(time.perf_counter() - started, 6)
    return [replace(first, metadata={**first.metadata, CLAIM_SECONDS: elapsed}), *events[1:]]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimedJob(JobDefinition):
    """A row of ``job_claim_due`` (core/sql/runs.sql): a due job as the claim reads it, its
    definition (:class:`~core.job_definition.JobDefinition`) and the fields below.

    ``due_at`` is its pending slot's fire time (UTC: the slot plus the job's spread offset,
    core/schedule/spread.py); ``spread`` the job's spread in seconds (``None``: none);
    ``running`` and ``queued`` count its runs in flight
    (the finished ones the worker names left out), for the overlap policy. The definition
    fields are as stored, unchecked: :func:`core.stored.job_problem` says whether they still
    evaluate.
    """

    job_id: uuid.UUID
    due_at: datetime
    team_id: uuid.UUID
    anchor_at: datetime
    version: int
    signing: bool
    running: int
    queued: int

    @property
    def offset(self) -> timedelta:
        """The job's spread offset (:func:`core.schedule.spread.offset_of`)."""
        return offset_of(self.job_id, self.spread)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ClaimedJob:
        """The claimed job in one ``job_claim_due`` row."""
        return cls(**with_objects(field_values(cls, row)))

    def definition_row(self) -> dict[str, Any]:
        """What :func:`core.stored.job_problem` reads, by column name."""
        return {"schedule": self.schedule, "timezone": self.timezone,
                "anchor_at": self.anchor_at, "request": self.request.to_json(),
                "retry": self.retry.to_json(), "timeout_seconds": self.timeout_seconds}


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadyRun:
    """A row of ``run_claim_ready`` (core/sql/runs.sql): a run taken for its next attempt,
    with the job's sending fields.

    ``previous_status`` is ``queued`` (ready at ``due_at``) or ``running`` (its lease expired
    at ``due_at``: sent again with the same id and attempt); the lease is the new one.
    ``spread``: the job's spread now (a slot's fire time, :meth:`fire_at`, is read with it).
    """

    id: uuid.UUID
    job_id: uuid.UUID
    team_id: uuid.UUID
    scheduled_for: datetime
    trigger: str
    attempt: int
    max_attempts: int
    lease_token: uuid.UUID
    lease_expires_at: datetime
    version: int
    previous_status: str
    due_at: datetime
    request: Request
    timeout_seconds: float
    retry: RetryPolicy
    success_statuses: list[int] | None
    secret_names: list[str]
    signing: bool
    confirm_timeout_seconds: int | None
    min_duration: int | None
    spread: int | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ReadyRun:
        """The ready run in one ``run_claim_ready`` row."""
        return cls(**with_objects(field_values(cls, row)))


    def fire_at(self) -> datetime | None:
        """The fire time of a slot's run (the slot plus the job's offset), ``None`` for a
        manual run or a job without a spread."""
        if self.trigger == "manual" or not self.spread:
            return None
        return fire_time(self.scheduled_for, offset_of(self.job_id, self.spread))


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokenJob:
    """A row of ``job_mark_broken_many`` (core/sql/jobs.sql): a job just marked broken, its
    new stream ``version``, and what its ``broken`` alert names."""

    id: uuid.UUID
    team_id: uuid.UUID
    version: int
    name: str
    channels: list[uuid.UUID]
    broken_reason: str

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> BrokenJob:
        """The job in one ``job_mark_broken_many`` row."""
        return cls(**field_values(cls, row))


@dataclass
class _Batch:
    """Rows and events accumulated for one claim transaction."""

    now: datetime
    worker_id: str
    lease_margin: float
    runs: list[dict[str, Any]] = field(default_factory=list)
    starts: dict[uuid.UUID, tuple[NewEvent, Dispatch | None]] = field(default_factory=dict)
    advance: list[tuple[uuid.UUID, datetime]] = field(default_factory=list)
    finished_jobs: list[ClaimedJob] = field(default_factory=list)
    broken: list[tuple[ClaimedJob, str]] = field(default_factory=list)
    maintenance: list[WindowState] = field(default_factory=list)  # suppress: runs windows
    tags: dict[uuid.UUID, tuple[str, ...]] = field(default_factory=dict)  # of the jobs
    # Slots that did not run and alert (the job's ``alert_on``): run id -> (job, reason).
    alerting: dict[uuid.UUID, tuple[ClaimedJob, str]] = field(default_factory=dict)

    def add_run(self, job: ClaimedJob, slot: datetime, trigger: str, status: str,
                reason: str | None = None) -> None:
        run_id = slot_run_id(job.job_id, slot)
        running = status == "running"
        attempts = job.retry.attempts
        lease_token = uuid.uuid4() if running else None
        fire = fire_time(slot, job.offset) if job.spread else None
        lease_expires = (max(self.now, fire or slot) + timedelta(
            seconds=job.timeout_seconds + self.lease_margin)) if running else None
        finished = self.now if status in ("skipped", "missed") else None
        values = (run_id, job.job_id, job.team_id, slot, trigger, status,
                  1 if running else 0, attempts, None, lease_expires, lease_token,
                  self.worker_id if running else None, reason, 1, self.now, finished)
        self.runs.append(dict(zip(_RUN_COLUMNS, values, strict=True)))
        common: dict[str, Any] = {"job_id": job.job_id, "scheduled_for": slot, "trigger": trigger,
                  "max_attempts": attempts, "fire_at": fire,
                  "metadata": {"actor": f"worker:{self.worker_id}"}}
        team_id = job.team_id
        if running:
            event = run_events.started(run_id, team_id, 1, self.now, attempt=1,
                                       worker_id=self.worker_id, **common)
        elif status == "queued":
            event = run_events.queued(run_id, team_id, 1, self.now, available_at=None,
                                      reason=reason, **common)
        else:
            event = run_events.not_run(status, run_id, team_id, 1, self.now, reason=reason,
                                       finished_at=self.now, **common)
        dispatch = Dispatch(
            run_id=run_id, job_id=job.job_id, team_id=job.team_id, scheduled_for=slot,
            trigger=trigger, attempt=1, max_attempts=attempts, lease_token=lease_token,
            version=1, lease_expires_at=lease_expires, fire_at=fire, **_job_sending(job),
        ) if lease_token is not None else None  # a lease is taken exactly when it runs
        self.starts[run_id] = (event, dispatch)
        if job.alert_on and status in ("skipped", "missed"):
            kind = "held" if reason == MAINTENANCE_REASON else status
            if kind in job.alert_on:
                self.alerting[run_id] = (job, kind)


def _job_sending(job: ClaimedJob | ReadyRun) -> dict[str, Any]:
    """The :class:`Dispatch` fields that come from the job (both claims select them)."""
    return {"request": job.request, "timeout_seconds": job.timeout_seconds,
            "retry": job.retry,
            "success_statuses": tuple(job.success_statuses) if job.success_statuses
            else None,
            "secret_names": tuple(job.secret_names), "signing": job.signing,
            "confirm_timeout_seconds": job.confirm_timeout_seconds,
            "min_duration": job.min_duration}


async def _attach_sealed(conn: Connection,
                         dispatches: list[Dispatch]) -> list[Dispatch]:
    """Attach the sealed secrets the dispatches need, read in the claim's transaction.

    Jobs without secrets or signing (most of them) cost nothing: no query runs unless at least
    one dispatch needs one, and then one query per kind covers the whole batch.
    """
    needy = [d for d in dispatches if d.secret_names or d.signing]
    if not needy:
        return dispatches
    secrets, signing = await fetch_sealed(
        conn, [(d.team_id, name) for d in needy for name in d.secret_names],
        [d.job_id for d in needy if d.signing])
    return [
        replace(d, secrets={n: secrets[(d.team_id, n)] for n in d.secret_names
                            if (d.team_id, n) in secrets},
                signing_key=signing.get(d.job_id))
        if d.secret_names or d.signing else d
        for d in dispatches
    ]


_RUN_COLUMNS = ("id", "job_id", "team_id", "scheduled_for", "trigger", "status", "attempt",
                "max_attempts", "available_at", "lease_expires_at", "lease_token", "worker_id",
                "reason", "version", "created_at", "finished_at")


def _plan_job(batch: _Batch, job: ClaimedJob) -> None:
    """Add the runs of one claimed job and its next ``due_at`` to ``batch``.

    A job whose stored definition no longer evaluates (or that raises anything while being
    planned) adds nothing but an entry in ``batch.broken``: the rest of the batch goes on
    (docs/operations.md, "Poison items").
    """
    marks = (len(batch.runs), len(batch.starts), len(batch.advance), len(batch.finished_jobs))
    try:
        schedule, problem = job_problem(job.definition_row(), cached_schedule)
        if schedule is None:
            batch.broken.append((job, problem or "the stored definition does not evaluate"))
            return
        _plan_slots(batch, job, schedule)
    except Exception as exc:  # noqa: BLE001 - one row must not abort the claim for the others
        log.exception("job %s could not be planned; marking it broken", job.job_id)
        del batch.runs[marks[0]:]
        for run_id in list(batch.starts)[marks[1]:]:
            del batch.starts[run_id]
        del batch.advance[marks[2]:]
        del batch.finished_jobs[marks[3]:]
        batch.broken.append((job, f"planning its slots failed: {reason_of(exc)}"))


def _plan_slots(batch: _Batch, job: ClaimedJob, schedule: Schedule) -> None:
    offset = job.offset
    plan = plan_slots(schedule, job.due_at, batch.now, job.catchup, offset)
    reason = MISSED_REASON.format(policy=job.catchup)
    for slot in plan.missed:
        batch.add_run(job, slot, "schedule", "missed", reason)
    fire = plan.fire
    if batch.maintenance:
        windows = [w for w in batch.maintenance if w.team_id == job.team_id]
        # A window holds the slots whose fire time it covers (docs/schedules.md, *Spread*).
        held = {slot for slot, _ in fire
                if in_maintenance_until(windows, "job", job.job_id, fire_time(slot, offset),
                                        tags=batch.tags.get(job.job_id, ())) is not None}
        for slot, trigger in fire:
            if slot in held:
                batch.add_run(job, slot, trigger, "skipped", MAINTENANCE_REASON)
        fire = [(slot, trigger) for slot, trigger in fire if slot not in held]
    decision = apply_overlap(fire, job.overlap, job.running, job.queued)
    for slot, trigger in decision.run:
        batch.add_run(job, slot, trigger, "running")
    for slot, trigger in decision.queue:
        batch.add_run(job, slot, trigger, "queued", BUFFER_REASON)
    for slot, trigger in decision.skip:
        batch.add_run(job, slot, trigger, "skipped", SKIP_REASON)
    if plan.next_due is None:
        batch.finished_jobs.append(job)
    else:
        batch.advance.append((job.job_id, plan.next_due))


async def mark_jobs_broken(conn: Connection, broken: list[tuple[uuid.UUID, str]],
                           now: datetime, actor: str,
                           max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> list[uuid.UUID]:
    """Mark jobs broken in the caller's transaction: ``job.broken`` ``{"reason"}`` on each
    job's stream (metadata ``{"actor": actor}``), ``broken_at``/``broken_reason`` on the row,
    no ``due_jobs`` row (it is not claimed again until repaired), and a ``broken`` alert on the
    job's channels. Jobs already broken, paused, completed or deleted are left alone.

    Args:
        broken: ``(job_id, reason)`` pairs.
        now: the instant recorded (UTC).
        actor: e.g. ``worker:<id>``.

    Returns:
        The ids of the jobs newly marked broken.
    """
    if not broken:
        return []
    ids = [job_id for job_id, _ in broken]
    # The jobs rows before their due_jobs rows: the order of every command and claim
    # (`job_lock` in core/sql/jobs.sql).
    cur = await conn.execute(Q["job_mark_broken_many"], {
        "job_ids": ids, "reasons": [reason for _, reason in broken], "now": now})
    jobs = [BrokenJob.from_row(row) for row in await cur.fetchall()]
    await conn.execute(Q["due_job_delete_many"], {"job_ids": ids})
    await append_at(conn, [
        (Head.written("job", job.id, job.team_id, job.version, changes), changes)
        for job in jobs for changes in [[("job.broken", {"reason": job.broken_reason})]]],
        now, {"actor": actor})
    alerts = [Alert(job.team_id, "job", job.id, "broken", job.channels,
                    job_broken_message(job_id=job.id, job_name=job.name,
                                       reason=job.broken_reason, now=now),
                    {"reason": "broken", "broken_reason": job.broken_reason})
              for job in jobs if job.channels]
    if alerts:
        await enqueue(conn, alerts, now, max_attempts, hold=held_alerts)
    for job in jobs:
        log.error("job %s marked broken: %s", job.id, job.broken_reason)
    return [job.id for job in jobs]


async def _alert_not_run(conn: Connection, batch: _Batch,
                         inserted: set[uuid.UUID], max_attempts: int) -> None:
    """Alert the slots this claim recorded as not run whose job's ``alert_on`` names their
    reason (``skipped``: overlap policy; ``missed``: catch-up policy; ``held``: a ``suppress:
    runs`` maintenance window), one alert per slot, through the outbox like a failure's
    (recorded in ``alerts``, rule ``{"reason": "alert_on: <reason>", "alert_on": reason, "run_id",
    "scheduled_for", "why"}``; docs/notifications.md, *Slots that did not run*). A slot
    another worker recorded first (not in ``inserted``) is not alerted twice. Claims with no
    such slot (every job without ``alert_on``) run no query here."""
    slots = [(run["id"], run) for run in batch.runs
             if run["id"] in batch.alerting and run["id"] in inserted]
    if not slots:
        return
    cur = await conn.execute(Q["job_alert_targets"], {
        "job_ids": sorted({batch.alerting[run_id][0].job_id for run_id, _ in slots})})
    targets = {row["id"]: row for row in await cur.fetchall()}
    alerts = []
    for run_id, run in slots:
        job, kind = batch.alerting[run_id]
        target = targets.get(job.job_id)
        if target is None or not target["channels"]:
            continue  # nowhere to send it: like a failure, no record without a channel
        alerts.append(Alert(
            job.team_id, "job", job.job_id, kind, target["channels"],
            job_slot_message(job_id=job.job_id, job_name=target["name"], run_id=run_id,
                             reason=kind, scheduled_for=run["scheduled_for"],
                             why=run["reason"], now=batch.now),
            {"reason": f"alert_on: {kind}", "alert_on": kind, "run_id": run_id,
             "scheduled_for": run["scheduled_for"], "why": run["reason"]}))
    if alerts:
        await enqueue(conn, alerts, batch.now, max_attempts, hold=held_alerts)


async def _complete_jobs(conn: Connection, batch: _Batch) -> list[NewEvent]:
    """One-shot jobs that fired their only slot become ``completed`` (job stream event)."""
    if not batch.finished_jobs:
        return []
    ids = [job.job_id for job in batch.finished_jobs]
    await conn.execute(Q["due_job_delete_many"], {"job_ids": ids})
    cur = await conn.execute(Q["job_complete_many"], {"job_ids": ids, "now": batch.now})
    completed: list[Change] = [("job.completed", {})]
    return [
        event for row in await cur.fetchall()
        for event in Head.written("job", row["id"], row["team_id"], row["version"],
                                  completed).events(completed, batch.now,
                                                    {"actor": f"worker:{batch.worker_id}"})
    ]


async def claim_due(
    pool: ConnectionPool, now: Instant, *, limit: int, lookahead: float,
    worker_id: str, lease_margin: float, finished: Sequence[uuid.UUID] = (),
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
) -> tuple[int, list[Dispatch]]:
    """Claim up to ``limit`` jobs due by ``now + lookahead`` seconds and record their slots.

    A job with a run in flight and an overlap policy other than ``allow`` is claimed at its
    slot, not ahead of it: the policy is decided at the slot (docs/schedules.md, "Overlap").

    At most a fair share is taken: ``ceil(due / live workers)`` of the rows due by then, the
    live workers being ``worker_id`` and the others in the registry (:mod:`core.runs.registry`),
    so that workers woken together for a big slot split it.

    A claimed job whose stored definition no longer evaluates is marked broken in the same
    transaction (:func:`mark_jobs_broken`, its alerts with ``max_attempts`` delivery attempts)
    and fires nothing; the other jobs of the batch are planned as usual.

    Args:
        now: the claim instant (UTC), or the clock to read it from once the connection is
            obtained (what the worker passes: a wait for the pool must not age the instant
            that catch-up, lateness and the lease are decided with).
        finished: runs the caller knows have finished (exchange over, final outcome) although
            their results are not recorded yet: the overlap policy does not count them as in
            flight.

    Returns:
        ``(claimed, dispatches)``: how many due rows were claimed, and the attempts to send now
        (each with its lease). A slot already recorded by another worker yields nothing.
    """
    async with transaction(pool) as conn:
        started = time.perf_counter()
        now = read_now(now)
        batch = _Batch(now, worker_id, lease_margin)
        cur = await conn.execute(Q["job_claim_due"], {
            "horizon": now + timedelta(seconds=lookahead), "limit": limit,
            "finished": list(finished), "worker_id": worker_id,
            "live_after": live_after(now), "now": now})
        jobs = [ClaimedJob.from_row(row) for row in await cur.fetchall()]
        if not jobs:
            return 0, []
        batch.maintenance = await live_windows(conn, [job.team_id for job in jobs], now,
                                               "runs")
        if batch.maintenance:
            batch.tags = await subject_tags(conn, "job", [job.job_id for job in jobs])
        for job in jobs:
            _plan_job(batch, job)
        cur = await conn.execute(Q["run_insert_many"], {"rows": to_json(batch.runs)})
        inserted = {row["id"] for row in await cur.fetchall()}
        events = [batch.starts[run["id"]][0] for run in batch.runs if run["id"] in inserted]
        events += await _complete_jobs(conn, batch)
        await append_events(conn, _timed(events, started))
        await _alert_not_run(conn, batch, inserted, max_attempts)
        await mark_jobs_broken(conn, [(job.job_id, reason) for job, reason in batch.broken],
                               now, f"worker:{worker_id}", max_attempts)
        if batch.advance:
            await conn.execute(Q["due_job_advance"], {
                "job_ids": [job_id for job_id, _ in batch.advance],
                "due_at": [due for _, due in batch.advance]})
        dispatches = await _attach_sealed(conn, [
            d for run_id, (_, d) in batch.starts.items() if d and run_id in inserted])
        dispatches = await issue_tokens(conn, dispatches)
    return len(jobs), dispatches


async def claim_ready(
    pool: ConnectionPool, now: Instant, *, limit: int, worker_id: str, lease_margin: float,
    mine: Sequence[uuid.UUID] = (),
) -> list[Dispatch]:
    """Claim queued runs that are ready and running runs whose lease expired.

    ``now`` is the claim instant (UTC) or the clock to read it from once the connection is
    obtained (see :func:`claim_due`). ``mine``: runs whose exchange the caller has finished and
    is still recording; they are not taken over even if their lease expired meanwhile.

    A run taken over after a lease expiry keeps its id and attempt number, so the receiver sees
    the same ``Idempotency-Key``; its ``run.started`` event says ``redispatch: true``.
    """
    async with transaction(pool) as conn:
        started = time.perf_counter()
        now = read_now(now)
        cur = await conn.execute(Q["run_claim_ready"], {
            "now": now, "limit": limit, "worker_id": worker_id, "lease_margin": lease_margin,
            "mine": list(mine)})
        rows = [ReadyRun.from_row(row) for row in await cur.fetchall()]
        events = [
            run_events.started(
                row.id, row.team_id, row.version, now, job_id=row.job_id,
                scheduled_for=row.scheduled_for, trigger=row.trigger,
                attempt=row.attempt, max_attempts=row.max_attempts, worker_id=worker_id,
                redispatch=row.previous_status == "running",
                metadata={"actor": f"worker:{worker_id}"})
            for row in rows
        ]
        await append_events(conn, _timed(events, started))
        return await issue_tokens(conn, await _attach_sealed(conn, [
            Dispatch(run_id=r.id, job_id=r.job_id, team_id=r.team_id,
                     scheduled_for=r.scheduled_for, trigger=r.trigger,
                     attempt=r.attempt, max_attempts=r.max_attempts,
                     lease_token=r.lease_token, version=r.version, due_at=r.due_at,
                     lease_expires_at=r.lease_expires_at, fire_at=r.fire_at(),
                     **_job_sending(r))
            for r in rows
        ]))


async def next_wakeup(pool: ConnectionPool) -> datetime | None:
    """The earliest instant with scheduler work (due slot, ready run, lease expiry), if any."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["scheduler_next_wakeup"])
        row = await cur.fetchone()
    return row["wake_at"] if row else None
