"""Which slots to fire, miss or skip when a due job is claimed (DESIGN 4: catch-up and overlap).

Pure decisions over instants (UTC): :func:`plan_slots` turns "the job was due at ``due_at`` and
it is now ``now``" into slot decisions and the next ``due_at``; :func:`apply_overlap` decides, for
the slots that should fire, which run now, which wait (``queue``) and which are skipped.

Rules (documented in docs/schedules.md):
- A slot late by at most :data:`MISFIRE_GRACE_SECONDS` is on time and fires normally.
- ``catchup=latest``: the most recent due slot runs (trigger ``catchup`` when it is late beyond
  the grace), every earlier one is recorded as missed.
- ``catchup=skip``: slots late beyond the grace are all missed; an on-time slot still fires.
- ``catchup=all``: every missed slot runs, the most recent :data:`MAX_CATCHUP_RUNS`; older ones
  are missed. Catch-up runs are dispatched together, whatever the overlap policy.
- At most :data:`MAX_RECORDED_SLOTS` slots of one outage are recorded; the next slot is always
  computed from ``now``, so a long outage never makes the scheduler fire a backlog of old slots.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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


def latest_fire_at_or_before(schedule: Schedule, t: datetime, since: datetime) -> datetime:
    """The last fire instant in ``(since, t]``, found by a doubling search back from ``t``.

    ``since`` must be earlier than a known fire instant ``<= t``; the search takes at most about
    ``log2((t - since) / 1 s)`` steps.
    """
    width = timedelta(seconds=1)
    start = max(t - width, since)
    while not (found := schedule.fires_between(start, t, MAX_RECORDED_SLOTS)):
        if start == since:
            raise ValueError("no fire instant in the given window")
        width *= 2
        start = max(t - width, since)
    while len(found) == MAX_RECORDED_SLOTS:  # a dense schedule: walk on to the end
        more = schedule.fires_between(found[-1], t, MAX_RECORDED_SLOTS)
        if not more:
            break
        found = more
    return found[-1]


def plan_slots(
    schedule: Schedule, due_at: datetime, now: datetime, catchup: str
) -> SlotPlan:
    """Decide what to do with a job claimed at ``now`` whose pending slot is ``due_at``.

    Args:
        schedule: the job's schedule.
        due_at: the slot stored in ``due_jobs`` (UTC); may be slightly after ``now`` when the
            scheduler claims ahead.
        now: the claim instant (UTC).
        catchup: ``latest`` | ``skip`` | ``all``.
    """
    if due_at >= now - timedelta(seconds=MISFIRE_GRACE_SECONDS):
        following = schedule.fires_between(due_at, now, 1) if due_at < now else []
        if not following:  # the common case: exactly one slot, on time
            return SlotPlan(fire=[(due_at, "schedule")],
                            next_due=schedule.next_fire(max(now, due_at)))
    slots = [due_at, *schedule.fires_between(due_at, now, MAX_RECORDED_SLOTS)]
    latest = slots[-1]
    if len(slots) > MAX_RECORDED_SLOTS:
        latest = latest_fire_at_or_before(schedule, now, slots[-1])
        slots = slots[:MAX_RECORDED_SLOTS - 1]
    else:
        slots = slots[:-1]
    on_time = latest >= now - timedelta(seconds=MISFIRE_GRACE_SECONDS)
    plan = SlotPlan(next_due=schedule.next_fire(now))
    if catchup == "all":
        keep = slots[len(slots) - min(len(slots), MAX_CATCHUP_RUNS - 1):]
        plan.missed.extend(slots[:len(slots) - len(keep)])
        plan.fire.extend((slot, "catchup") for slot in keep)
    else:
        plan.missed.extend(slots)
    if on_time:
        plan.fire.append((latest, "schedule"))
    elif catchup == "skip":
        plan.missed.append(latest)
    else:
        plan.fire.append((latest, "catchup"))
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
