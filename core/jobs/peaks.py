"""A team's busiest seconds over the next day (``GET /v1/schedules/peaks``, docs/schedules.md,
*Spread*): how many jobs fire in each second, counting each job's spread offset, the busiest
ones with the jobs firing then, and the jobs a spread would move (those without one).

:func:`busiest` is pure over :class:`PeakJob` values and an instant; :func:`team_peaks` reads
the team's active jobs and calls it. Rules:

- A job's fires are its fire times (slot + offset, core/schedule/spread.py) in
  ``(now, now + 1 day]``, counted in the UTC second they fall in (``10:00:00.250`` counts in
  ``10:00:00``). Paused, completed, deleted and broken jobs do not fire and are not counted.
- A job whose schedule has more than :data:`MAX_FIRES_PER_JOB` slots in the next day (on
  average more often than every 17 s) is not counted: it is listed in ``not_counted`` with
  the reason: a job that fires in most seconds raises them alike rather than making a peak,
  and walking each of its slots on every request is costly. A stored schedule that no longer
  evaluates is listed there too.
- The busiest seconds come by number of fires, most first, then by time; each lists at most
  :data:`MAX_LISTED_JOBS` jobs (by name) and how many more fire then.
- ``would_move``: the jobs without a spread that fire in one of the busiest seconds, by how
  many of their fires fall in them (most first), then by name; at most
  :data:`MAX_WOULD_MOVE`.
"""

from __future__ import annotations

import heapq
import uuid
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import islice
from typing import Any

from core.actor import Actor
from core.db import ConnectionPool
from core.queries import Q
from core.schedule import Schedule, cached_schedule
from core.schedule.model import MAX_FIRES
from core.schedule.spread import offset_seconds
from core.stored import schedule_problem

DAY = timedelta(days=1)
MAX_TOP = 100  # busiest seconds an answer may ask for
DEFAULT_TOP = 10
MAX_FIRES_PER_JOB = 5000
MAX_LISTED_JOBS = 100
MAX_WOULD_MOVE = 1000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True, slots=True, kw_only=True)
class PeakJob:
    """A job as the peaks read it: a row of ``job_peak_candidates`` (core/sql/jobs.sql)."""

    id: uuid.UUID
    name: str
    schedule: str
    timezone: str
    anchor_at: datetime
    spread: int | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> PeakJob:
        """The job in one ``job_peak_candidates`` row."""
        return cls(id=row["id"], name=row["name"], schedule=row["schedule"],
                   timezone=row["timezone"], anchor_at=row["anchor_at"], spread=row["spread"])

    @property
    def offset(self) -> int:
        """Its spread offset in seconds (``0`` without a spread)."""
        return offset_seconds(self.id, self.spread)


@dataclass(frozen=True)
class Second:
    """One of the busiest seconds: ``at`` (its start, UTC), ``fires`` (how many), ``jobs`` (at
    most :data:`MAX_LISTED_JOBS`, by name) and ``more_jobs`` (those not listed)."""

    at: datetime
    fires: int
    jobs: list[PeakJob]
    more_jobs: int


@dataclass(frozen=True)
class Peaks:
    """The answer of :func:`busiest`: the window ``(start, end]`` (UTC), the fires counted and
    the jobs they come from, the busiest ``seconds``, ``would_move`` (``(job, fires in the
    busiest seconds)``) and ``not_counted`` (``(job, reason)``)."""

    start: datetime
    end: datetime
    fires: int
    jobs_counted: int
    seconds: list[Second] = field(default_factory=list)
    would_move: list[tuple[PeakJob, int]] = field(default_factory=list)
    not_counted: list[tuple[PeakJob, str]] = field(default_factory=list)


def _slots(schedule: Schedule, since: datetime, until: datetime, limit: int) -> list[datetime]:
    """The schedule's slots in ``(since, until]``, at most ``limit + 1`` (one more tells that
    there are more than ``limit``)."""
    found: list[datetime] = []
    while len(found) <= limit:
        batch = schedule.fires_between(since, until, MAX_FIRES)
        found += batch
        if len(batch) < MAX_FIRES:
            break
        since = batch[-1]
    return found[:limit + 1]


def _group_key(job: PeakJob, schedule: Schedule) -> tuple[Any, ...]:
    """Jobs whose slots are the same instants share one walk: cron and calendar schedules by
    expression and zone, anchored ones (intervals, calendar periods) by their anchor too."""
    return (job.schedule, job.timezone, schedule.pinned())


@dataclass(frozen=True, slots=True)
class _Fires:
    """The jobs of one walk (:func:`_group_key`) that share an offset, hence their fire
    seconds: ``seconds`` (epoch seconds, ascending, a second once per fire) and ``jobs``."""

    seconds: list[int]
    jobs: list[PeakJob]


_US = timedelta(microseconds=1)


def _fire_seconds(jobs: list[PeakJob], now: datetime
                  ) -> tuple[list[_Fires], int, list[tuple[PeakJob, str]]]:
    """The countable jobs' fire times in ``(now, now + 1 day]`` as epoch seconds, one
    :class:`_Fires` per walk and offset (a day's slots are computed once per walk, each
    offset's fires are a contiguous run of them); how many jobs are counted; and the jobs not
    counted with the reason."""
    uncounted: list[tuple[PeakJob, str]] = []
    groups: dict[tuple[Any, ...], tuple[Schedule, list[PeakJob]]] = {}
    for job in jobs:
        schedule, problem = schedule_problem(cached_schedule, job.schedule, job.timezone,
                                             job.anchor_at)
        if schedule is None:
            uncounted.append((job, problem or "its stored schedule does not evaluate"))
            continue
        groups.setdefault(_group_key(job, schedule), (schedule, []))[1].append(job)
    fires: list[_Fires] = []
    counted = 0
    dense = (f"its schedule has more than {MAX_FIRES_PER_JOB} slots a day: it raises most "
             "seconds alike")
    now_us, end_us = (now - _EPOCH) // _US, (now + DAY - _EPOCH) // _US
    for schedule, members in groups.values():
        by_offset: dict[int, list[PeakJob]] = {}
        for job in members:
            by_offset.setdefault(job.offset, []).append(job)
        reach = timedelta(seconds=max(by_offset))
        ahead = _slots(schedule, now, now + DAY, MAX_FIRES_PER_JOB)
        before = _slots(schedule, now - reach, now, MAX_FIRES_PER_JOB) if reach else []
        if len(ahead) > MAX_FIRES_PER_JOB or len(before) > MAX_FIRES_PER_JOB:
            uncounted += [(job, dense) for job in members]
            continue
        counted += len(members)
        # Exact instants in microseconds; an offset is whole seconds, so a fire's second is
        # its slot's (floored) plus the offset.
        slots_us = [(s - _EPOCH) // _US for s in before + ahead]
        slot_seconds = [us // 1_000_000 for us in slots_us]
        for offset, sharing in by_offset.items():
            shift = offset * 1_000_000
            lo = bisect_right(slots_us, now_us - shift)  # now < slot + offset
            hi = bisect_right(slots_us, end_us - shift)  # slot + offset <= now + 1 day
            fires.append(_Fires([second + offset for second in slot_seconds[lo:hi]], sharing))
    return fires, counted, uncounted


def busiest(jobs: list[PeakJob], now: datetime, top: int = DEFAULT_TOP) -> Peaks:
    """The busiest ``top`` seconds of ``(now, now + 1 day]`` (module docstring). The fires
    are counted per walk and offset (:func:`_fire_seconds`); which jobs fire when is worked out
    for the busiest seconds only (tests/unit/test_peaks.py checks it against the
    straightforward per-job count)."""
    fires, counted, uncounted = _fire_seconds(jobs, now)
    per_second: Counter[int] = Counter()
    for run in fires:
        if len(run.jobs) == 1:
            per_second.update(run.seconds)
        else:
            for second, times in Counter(run.seconds).items():
                per_second[second] += times * len(run.jobs)
    ranked = heapq.nsmallest(top, per_second.items(), key=lambda item: (-item[1], item[0]))
    wanted = {second for second, _ in ranked}
    # Each run that fires in a busiest second, its jobs in listing order (by name, then id:
    # the ids' text computed once per job); a second's listing merges its runs' lists.
    hit_runs = [(run, hits) for run in fires
                if (hits := Counter(second for second in run.seconds if second in wanted))]
    order = {job.id: (job.name, str(job.id)) for run, _ in hit_runs for job in run.jobs}
    firing: dict[int, list[list[PeakJob]]] = {second: [] for second in wanted}
    in_peaks: Counter[uuid.UUID] = Counter()
    movable: dict[uuid.UUID, PeakJob] = {}
    for run, hits in hit_runs:
        listing = sorted(run.jobs, key=lambda j: order[j.id])
        for second in hits:
            firing[second].append(listing)
        total = sum(hits.values())
        for job in run.jobs:
            in_peaks[job.id] += total
            if not job.spread:
                movable[job.id] = job
    listed: list[Second] = []
    for second, n in ranked:
        firing_jobs = sum(len(listing) for listing in firing[second])
        names = list(islice(heapq.merge(*firing[second], key=lambda j: order[j.id]),
                            MAX_LISTED_JOBS))
        listed.append(Second(_EPOCH + timedelta(seconds=second), n, names,
                             max(0, firing_jobs - MAX_LISTED_JOBS)))
    would_move = sorted(((job, in_peaks[job.id]) for job in movable.values()),
                        key=lambda item: (-item[1], *order[item[0].id]))
    return Peaks(now, now + DAY, sum(per_second.values()), counted, listed,
                 would_move[:MAX_WOULD_MOVE], uncounted)


async def team_peaks(pool: ConnectionPool, actor: Actor, now: datetime,
                     top: int = DEFAULT_TOP) -> Peaks:
    """:func:`busiest` over the team's active jobs that are not broken, from ``now`` (UTC)."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["job_peak_candidates"], {"team_id": actor.team_id})
        jobs = [PeakJob.from_row(row) for row in await cur.fetchall()]
    return busiest(jobs, now, top)
