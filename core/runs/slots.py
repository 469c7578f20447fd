"""Which slots to fire, miss or skip when a due job is claimed (docs/schedules.md: catch-up and
overlap).

Pure decisions over instants (UTC): :func:`plan_slots` turns "the job was due at ``due_at`` and
it is now ``now``" into slot decisions and the next ``due_at``; :func:`apply_overlap` decides, for
the slots that should fire, which run now, which wait (``queue``) and which are skipped.

Rules (documented in docs/schedules.md, "Catch-up"), ``now`` being the claim instant:
- A slot late by at most :data:`MISFIRE_GRACE_SECONDS` is on time: it fires with trigger
  ``schedule`` (the overlap policy still applies), whatever the catch-up policy.
- Slots late beyond the grace are decided by the catch-up policy:
  ``catchup=latest``: the most recent late slot runs (trigger ``catchup``), every earlier late
  slot is recorded as missed; ``catchup=skip``: every late slot is missed;
  ``catchup=all``: every late slot runs (trigger ``catchup``), the most recent
  :data:`MAX_CATCHUP_RUNS`; older ones are missed. Catch-up runs under ``all`` are dispatched
  together, whatever the overlap policy.
- At most :data:`MAX_RECORDED_SLOTS` slots of one outage are recorded, the most recent ones; the
  next slot is always computed from ``now``, so a long outage never makes the scheduler fire a
  backlog of old slots.
- With a spread (core/schedule/spread.py) every rule reads fire times, slot + the job's
  ``offset``: a slot is due once its fire time has come, and late by ``now`` minus its fire
  time. The decision is the same as without a spread on the timeline shifted back by the
  offset; the slots returned are the slots themselves (the runs' identity).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from core.schedule import Schedule

MISFIRE_GRACE_SECONDS = 10.0
MAX_CATCHUP_RUNS = 100
MAX_RECORDED_SLOTS = 1000


@dataclass(frozen=True)
class SlotPlan:
    """The decision for one claimed job.

    Attributes:
        fire: ``(slot, trigger)`` pairs to run, oldest first; trigger is ``schedule`` or
            ``catchup``.
        missed: slots recorded as missed, oldest first.
        next_due: the next fire instant strictly after ``max(now, last slot)``, or ``None``
            when the schedule has no more (a fired one-shot).
    """

    fire: list[tuple[datetime, str]] = field(default_factory=list)
    missed: list[datetime] = field(default_factory=list)
    next_due: datetime | None = None


def _walk(schedule: Schedule, since: datetime, until: datetime) -> list[datetime]:
    """Every fire instant in ``(since, until]``, ascending (callers bound the window)."""
    found: list[datetime] = []
    while more := schedule.fires_between(since, until, MAX_RECORDED_SLOTS):
        found += more
        if len(more) < MAX_RECORDED_SLOTS:
            break
        since = more[-1]
    return found


def recent_slots(schedule: Schedule, due_at: datetime, now: datetime,
                 limit: int = MAX_RECORDED_SLOTS) -> list[datetime]:
    """The slots from ``due_at`` (included) to ``now`` (included), the most recent ``limit``.

    When more than ``limit`` slots passed, the window is found by a doubling search back from
    ``now`` (about ``log2((now - due_at) / 1 s)`` steps), so a long outage of a dense schedule
    costs a few thousand fire computations, not one per slot of the outage.
    """
    first = [due_at, *schedule.fires_between(due_at, now, limit)]
    if len(first) <= limit:
        return first
    width = timedelta(seconds=1)
    while True:
        start = now - width
        if start <= due_at:
            return [due_at, *_walk(schedule, due_at, now)][-limit:]
        found = _walk(schedule, start, now)
        if len(found) >= limit:
            return found[-limit:]
        width *= 2


def plan_slots(
    schedule: Schedule, due_at: datetime, now: datetime, catchup: str,
    offset: timedelta = timedelta(0),
) -> SlotPlan:
    """Decide what to do with a job claimed at ``now`` whose pending slot is ``due_at``.

    Every slot from ``due_at`` to ``now`` is either on time (late by at most
    :data:`MISFIRE_GRACE_SECONDS`: fires with trigger ``schedule``) or late (beyond the grace:
    the catch-up policy decides). See docs/schedules.md, "Catch-up".

    Args:
        schedule: the job's schedule.
        due_at: the fire time stored in ``due_jobs`` (UTC: the pending slot plus
            ``offset``); may be slightly after ``now`` when the scheduler claims ahead.
        now: the claim instant (UTC), read once the claim's connection was obtained.
        catchup: ``latest`` | ``skip`` | ``all``.
        offset: the job's spread offset (:func:`core.schedule.spread.offset_of`).

    Returns:
        The slots (not their fire times) to fire and miss, and the next fire time
        (``next_due``, the next slot plus ``offset``).
    """
    if offset:
        plan = _plan(schedule, due_at - offset, now - offset, catchup)
        return replace(plan, next_due=None if plan.next_due is None
                       else plan.next_due + offset)
    return _plan(schedule, due_at, now, catchup)


def _plan(schedule: Schedule, due_at: datetime, now: datetime, catchup: str) -> SlotPlan:
    cutoff = now - timedelta(seconds=MISFIRE_GRACE_SECONDS)
    if due_at >= cutoff:
        following = schedule.fires_between(due_at, now, 1) if due_at < now else []
        if not following:  # the common case: exactly one slot, on time
            return SlotPlan(fire=[(due_at, "schedule")],
                            next_due=schedule.next_fire(max(now, due_at)))
    slots = recent_slots(schedule, due_at, now)
    late = [slot for slot in slots if slot < cutoff]
    plan = SlotPlan(next_due=schedule.next_fire(max(now, slots[-1])))
    if catchup == "all":
        keep = late[len(late) - min(len(late), MAX_CATCHUP_RUNS):]
        plan.missed.extend(late[:len(late) - len(keep)])
        plan.fire.extend((slot, "catchup") for slot in keep)
    elif catchup == "latest" and late:
        plan.missed.extend(late[:-1])
        plan.fire.append((late[-1], "catchup"))
    else:
        plan.missed.extend(late)
    plan.fire.extend((slot, "schedule") for slot in slots if slot >= cutoff)
    return plan


@dataclass(frozen=True)
class OverlapDecision:
    """Per slot to fire: ``run`` now, ``queue`` (buffered until the running run ends), ``skip``."""

    run: list[tuple[datetime, str]] = field(default_factory=list)
    queue: list[tuple[datetime, str]] = field(default_factory=list)
    skip: list[tuple[datetime, str]] = field(default_factory=list)


def apply_overlap(
    fire: list[tuple[datetime, str]], policy: str, running: int, queued: int
) -> OverlapDecision:
    """Apply the overlap policy (``skip`` | ``allow`` | ``queue``) to the slots about to fire.

    Args:
        fire: slots to fire, oldest first, as from :func:`plan_slots`.
        policy: the job's overlap policy.
        running: the job's runs now running.
        queued: the job's runs queued (retries waiting, buffered slots, manual triggers).
    """
    catchup = [f for f in fire if f[1] == "catchup"]
    if policy == "allow" or len(catchup) > 1:
        return OverlapDecision(run=list(fire))
    decision = OverlapDecision()
    busy = running + queued > 0
    for slot in fire:
        if not busy:
            decision.run.append(slot)
            busy = True
        elif policy == "queue" and queued == 0 and not decision.queue:
            decision.queue.append(slot)
        else:
            decision.skip.append(slot)
    return decision
