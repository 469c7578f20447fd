"""Rebuild of the ``jobs`` and ``due_jobs`` inline projections from the log.

``jobs`` rows are :func:`core.jobs.state.fold` over each job stream. ``due_jobs`` is derived by
replaying what the live system did to it, in log order:

- ``job.created`` (active), ``job.resumed``, and a ``job.updated`` that changed the schedule or
  time zone (it carries ``anchor_at``) of an active job: the next fire strictly after the
  event's ``occurred_at`` (``core.jobs.commands._sync_due``);
- the first event of a slot run (trigger ``schedule`` or ``catchup``): the next fire strictly
  after ``max(occurred_at, scheduled_for)``, which is how the claim advanced ``due_at``
  (:func:`core.runs.slots.plan_slots`);
- ``job.paused``, ``job.deleted``, ``job.completed``, ``job.broken``: no row (``job.repaired``
  of an active job: the next fire after it, as ``_sync_due`` does);
- a ``job.updated`` that changed ``spread`` alone: the pending fire time moves by the change of
  offset, as ``_sync_due`` does.

Every due instant is a fire time, a slot plus the job's spread offset
(core/schedule/spread.py).

A stored schedule that no longer evaluates (docs/operations.md, "Poison items") gives no row
either: the live scheduler marks such a job broken at its next claim, instead of the rebuild
failing.

So a slot that was due but not yet claimed stays due after a rebuild (the scheduler then fires
or records it by the job's catch-up policy) instead of being silently dropped, as recomputing
"the next fire after now" would do.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from core.db import Connection
from core.jobs.state import JobState, evolve
from core.projections.common import Skipped
from core.queries import Q
from core.reasons import reason_of
from core.schedule import cached_schedule
from core.schedule.spread import next_fire_time, offset_of

TABLES = ("jobs", "due_jobs")
_TIMING = ("schedule", "timezone", "anchor_at")


def _next_fire(state: JobState, after: datetime) -> datetime | None:
    try:
        schedule = cached_schedule(state.schedule, state.timezone, state.anchor_at)
        return next_fire_time(schedule, after, offset_of(state.id, state.spread))
    except Exception:  # noqa: BLE001 - a poison job must not stop the rebuild
        return None


class JobReplay:
    """Job states and their pending slot, folded from job events and slot-run events."""

    def __init__(self, due: dict[uuid.UUID, datetime | None] | None = None) -> None:
        self.states: dict[uuid.UUID, JobState] = {}
        self.due: dict[uuid.UUID, datetime | None] = dict(due or {})

    def apply(self, event: dict[str, Any]) -> None:
        """Apply one event (``stream_type`` ``job``, or the first event of a slot run). An
        event before the prune snapshot (``tail`` false) only folds the job's state: its effect
        on ``due_jobs`` is in the snapshot's ``due`` already."""
        if event["stream_type"] == "job":
            self._job_event(event)
        elif event.get("tail", True):
            self._slot_event(event)

    def _job_event(self, event: dict[str, Any]) -> None:
        job_id = event["stream_id"]
        before = self.states.get(job_id)
        after = self.states[job_id] = evolve(before, event)
        if not event.get("tail", True):
            return
        if after.status != "active" or after.broken_at is not None:
            self.due[job_id] = None
        elif not (before is not None and before.status == "active"
                  and before.broken_at is None
                  and all(getattr(before, k) == getattr(after, k) for k in _TIMING)):
            self.due[job_id] = _next_fire(after, event["occurred_at"])
        elif before.spread != after.spread and self.due.get(job_id) is not None:
            due = self.due[job_id]
            assert due is not None
            self.due[job_id] = due + (offset_of(job_id, after.spread)
                                      - offset_of(job_id, before.spread))

    def _slot_event(self, event: dict[str, Any]) -> None:
        data = event["data"]
        job_id = uuid.UUID(data["job_id"])
        state = self.states.get(job_id)
        if state is None or state.status != "active" or state.broken_at is not None:
            return
        slot = datetime.fromisoformat(data["scheduled_for"])
        fire = slot + offset_of(job_id, state.spread)
        self.due[job_id] = _next_fire(state, max(event["occurred_at"], fire))


async def rebuild(conn: Connection, skipped: Skipped | None = None,
                  due: dict[uuid.UUID, datetime | None] | None = None,
                  snapshot: str | None = None) -> int:
    """Write ``jobs`` and ``due_jobs`` from the log into the (emptied) tables. An event that
    cannot be folded is left out and appended to ``skipped`` as ``(global_position, reason)``.
    Job streams are kept whole; after a prune (``snapshot``: its ``pg_snapshot`` text) the
    ``due_jobs`` rows start from ``due`` (the snapshot's) and only later events move them.

    Returns:
        The number of jobs written.
    """
    replay = JobReplay(due)
    async with conn.cursor(name="cronledger_rebuild_jobs") as cur:
        cur.itersize = 5000
        await cur.execute(Q["rebuild_job_events"], {"snapshot": snapshot})
        async for event in cur:
            try:
                replay.apply(event)
            except Exception as exc:  # noqa: BLE001 - a poison event must not stop the rebuild
                if skipped is not None:
                    skipped.append((event["global_position"], reason_of(exc)))
    async with conn.cursor() as cur:
        await cur.executemany(Q["job_upsert"],
                              [s.upsert_params() for s in replay.states.values()])
        await cur.executemany(Q["due_job_set"], [
            {"job_id": job_id, "due_at": due} for job_id, due in replay.due.items()
            if due is not None])
    return len(replay.states)
