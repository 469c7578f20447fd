"""Job commands: decide the events, append them, update the inline projections, one transaction.

Each command locks the job's projection row, derives the events from the request and the current
state (:mod:`core.jobs.decide`), appends them with the expected stream version and writes
``jobs`` and ``due_jobs`` in the same transaction (:mod:`core.streams`, with :data:`JOB`), then
NOTIFYs the schedulers (delivered at commit).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from core.actor import Actor
from core.channels.queries import check_new_channels
from core.crypto import KeyRing
from core.db import Connection, ConnectionPool, transaction
from core.dependencies import check_depends_on, refuse_delete_with_dependents
from core.errors import Conflict
from core.events import append_events, notify_wakeup, to_json
from core.jobs.decide import (
    CreateJob,
    DeleteJob,
    PauseJob,
    UpdateJob,
    broken_conflict,
    decide_create,
    decide_delete,
    decide_pause,
    decide_update,
    next_fire,
)
from core.jobs.state import JobState, evolve
from core.maintenance.queries import held_alerts
from core.notifications.released import release_subject
from core.queries import Q
from core.runs import events as run_events
from core.runs.events import new_run_id
from core.schedule.spread import offset_of
from core.secrets import set_signing_secret
from core.streams import StreamKind, append, execute, lock

_SCHEDULE_FIELDS = ("schedule", "timezone", "anchor_at")


async def _sync_due(
    conn: Connection,
    before: JobState | None,
    after: JobState,
    now: datetime,
) -> None:
    """Keep ``due_jobs`` in step: a row only for active jobs that are not broken, recomputed
    when timing changed or the job was just repaired. A change of ``spread`` alone keeps the
    pending slot and moves its fire time by the change of offset (docs/schedules.md,
    *Spread*): an edit neither drops nor repeats a slot."""
    if after.status != "active" or after.broken_at is not None:
        await conn.execute(Q["due_job_delete"], {"job_id": after.id})
        return
    unchanged = (
        before is not None
        and before.status == "active"
        and before.broken_at is None
        and all(getattr(before, k) == getattr(after, k) for k in _SCHEDULE_FIELDS)
    )
    if unchanged:
        assert before is not None
        if before.spread != after.spread:
            shift = offset_of(after.id, after.spread) - offset_of(before.id, before.spread)
            await conn.execute(Q["due_job_shift"], {"job_id": after.id,
                                                    "seconds": shift.total_seconds()})
        return  # keep the pending slot: an edit must not drop or repeat it
    due_at = next_fire(after, now)
    if due_at is None:
        await conn.execute(Q["due_job_delete"], {"job_id": after.id})
    else:
        await conn.execute(Q["due_job_set"], {"job_id": after.id, "due_at": due_at})


async def _write(conn: Connection, before: JobState | None, after: JobState,
                 now: datetime) -> JobState:
    """Write ``jobs`` and keep ``due_jobs`` in step (:data:`core.streams.Write`)."""
    await conn.execute(Q["job_upsert"], after.upsert_params())
    await _sync_due(conn, before, after, now)
    await notify_wakeup(conn, "jobs")
    return after


# The job stream for :mod:`core.streams`. ``job_lock`` (core/sql/jobs.sql) takes the ``jobs``
# row before anything touches its ``due_jobs`` row: the lock order of commands and claims.
JOB = StreamKind("job", "job", Q["job_lock"], JobState.from_row, evolve, _write)


async def create_job(
    pool: ConnectionPool, actor: Actor, fields: dict[str, Any], now: datetime,
    keyring: KeyRing | None = None,
) -> uuid.UUID:
    """Create a job from ``fields`` (the body of ``POST /v1/jobs``); returns its id.

    Intervals are anchored to ``now``, the creation instant (UTC). A ``signing_secret`` in
    ``fields`` is stored encrypted with ``keyring``; the events only say ``signing: true``.

    Raises:
        InvalidInput: when the definition is not acceptable.
        Unavailable: a signing secret is given and no secret key is configured.
    """
    created = decide_create(CreateJob(fields, now))
    definition = created.definition
    signing_secret = fields.get("signing_secret")
    job_id = uuid.uuid4()
    async with transaction(pool) as conn:
        await check_new_channels(conn, actor.team_id, definition["channels"], [])
        await check_depends_on(conn, actor.team_id, job_id, definition["depends_on"], [])
        if signing_secret is not None:
            await set_signing_secret(conn, keyring or KeyRing([]), actor.team_id, job_id,
                                     signing_secret, now)
        await append(conn, JOB, actor, job_id, None, created.events, now)
    return job_id


async def update_job(
    pool: ConnectionPool,
    actor: Actor,
    job_id: uuid.UUID,
    fields: dict[str, Any],
    now: datetime,
    expected_version: int | None = None,
    keyring: KeyRing | None = None,
) -> None:
    """Apply a partial update (``PATCH``): fields absent from ``fields`` keep their value.

    ``request`` and ``retry`` are merged key by key. A schedule or time zone change re-anchors
    intervals at ``now`` and recomputes the next fire time; other changes keep the pending slot.
    ``signing_secret``: a string sets or replaces the job's signing secret (``job.updated``
    with ``signing: true``), ``None`` removes it. A broken job (docs/api.md) whose patched
    definition is valid is repaired: ``job.repaired`` follows, and its next slot is armed.

    Raises:
        NotFound: no such job for this team.
        ConcurrencyConflict: ``expected_version`` is given and is not the current version.
        InvalidInput: the resulting definition is not acceptable.
        Unavailable: a signing secret is given and no secret key is configured.
    """
    async with transaction(pool) as conn:
        before = await lock(conn, JOB, actor, job_id, expected_version)
        update = decide_update(before, UpdateJob(fields, now))
        await check_new_channels(conn, actor.team_id, update.definition["channels"],
                                 before.channels)
        await check_depends_on(conn, actor.team_id, job_id, update.definition["depends_on"],
                               before.depends_on)
        if update.set_signing:
            await set_signing_secret(conn, keyring or KeyRing([]), actor.team_id, job_id,
                                     fields.get("signing_secret"), now)
        if update.events:
            await append(conn, JOB, actor, job_id, before, update.events, now)
        if [str(p) for p in update.definition["depends_on"]] != [
                str(p) for p in before.depends_on]:  # no parent down now: what it owes goes out
            await release_subject(conn, job_id, now, hold=held_alerts)


async def set_paused(
    pool: ConnectionPool, actor: Actor, job_id: uuid.UUID, paused: bool, now: datetime
) -> None:
    """Pause or resume a job. Idempotent: pausing a paused job appends nothing.

    A resumed job fires at its next slot after ``now``; slots that passed while it was paused
    are neither fired nor recorded as missed.

    Resuming a broken job (``broken_at`` set, docs/api.md) whose stored definition evaluates
    again (say the time zone is back in the tz database) repairs it (``job.repaired``); one
    that still does not evaluate is refused.

    Raises:
        NotFound: no such job for this team.
        Conflict: the job is completed, or resuming a one-shot whose instant has passed, or
            resuming a broken job whose definition still does not evaluate.
    """
    async with transaction(pool) as conn:
        await execute(conn, JOB, actor, job_id, decide_pause, PauseJob(paused, now), now)


async def delete_job(
    pool: ConnectionPool, actor: Actor, job_id: uuid.UUID, now: datetime
) -> None:
    """Delete a job: it stops firing, queued runs are cancelled, its history stays readable.

    Raises:
        NotFound: no such job for this team.
        Conflict: live monitors or jobs depend on it (``depends_on``).
    """
    async with transaction(pool) as conn:
        before = await lock(conn, JOB, actor, job_id)
        await refuse_delete_with_dependents(conn, actor.team_id, job_id, "job")
        await append(conn, JOB, actor, job_id, before, decide_delete(before, DeleteJob()), now)
        await set_signing_secret(conn, KeyRing([]), actor.team_id, job_id, None, now)
        cur = await conn.execute(
            Q["run_cancel_queued"], {"job_id": job_id, "reason": "job deleted", "now": now}
        )
        cancelled = await cur.fetchall()
        await append_events(conn, [
            run_events.not_run("skipped", row["id"], row["team_id"], row["version"], now,
                               job_id=row["job_id"], scheduled_for=row["scheduled_for"],
                               trigger=row["trigger"], reason="job deleted", finished_at=now)
            for row in cancelled])


async def trigger_job(
    pool: ConnectionPool, actor: Actor, job_id: uuid.UUID, now: datetime
) -> uuid.UUID:
    """Queue a manual run of the job now (also for a paused job); returns the run id.

    Raises:
        NotFound: no such job for this team.
        Conflict: the job is completed or broken (docs/api.md).
    """
    async with transaction(pool) as conn:
        job = await lock(conn, JOB, actor, job_id)
        if job.status == "completed":
            raise Conflict(f"job {job_id} is completed")
        if job.broken_at is not None:
            raise broken_conflict(job)
        run_id = new_run_id()
        await conn.execute(Q["run_insert_many"], {"rows": to_json([{
            "id": run_id, "job_id": job_id, "team_id": actor.team_id, "scheduled_for": now,
            "trigger": "manual", "status": "queued", "attempt": 0,
            "max_attempts": job.retry.attempts, "available_at": now,
            "lease_expires_at": None, "lease_token": None, "worker_id": None, "reason": None,
            "version": 1, "created_at": now, "finished_at": None,
        }])})
        await append_events(conn, [run_events.queued(
            run_id, actor.team_id, 1, now, job_id=job_id, scheduled_for=now, trigger="manual",
            max_attempts=job.retry.attempts, available_at=now,
            metadata=actor.metadata())])
        await notify_wakeup(conn, "runs")
    return run_id


