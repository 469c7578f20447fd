"""The busiest seconds of the next day (core/jobs/peaks.py) on a known set of jobs: every
expected answer below is counted by hand from the schedules and the pinned offsets."""

from __future__ import annotations

import dataclasses
import random
import uuid
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from typing import Any

import pytest

from core.jobs.peaks import (
    _EPOCH as EPOCH,
)
from core.jobs.peaks import (
    DAY,
    MAX_FIRES_PER_JOB,
    MAX_LISTED_JOBS,
    MAX_WOULD_MOVE,
    PeakJob,
    Peaks,
    Second,
    _slots,
    busiest,
)
from core.schedule import Schedule, cached_schedule
from core.schedule.spread import offset_seconds
from core.stored import schedule_problem
from tests.unit.instants import utc

NOW = utc("2026-12-01T10:00:00Z")
ANCHOR = utc("2026-11-01T00:00:00Z")
ONE = uuid.UUID("00000000-0000-0000-0000-000000000001")  # offset 80 s in 15 minutes
OTHER = uuid.UUID("6f1c2b4e-9a0d-4c1e-8f3a-2b5d7e9c1a04")  # offset 60 s in 15 minutes


def job(name: str, schedule: str, spread: int | None = None,
        job_id: uuid.UUID | None = None) -> PeakJob:
    return PeakJob(id=job_id or uuid.uuid5(ONE, name), name=name, schedule=schedule,
                   timezone="UTC", anchor_at=ANCHOR, spread=spread)


def at(text: str) -> datetime:
    return utc(f"2026-12-{text}Z")


JOBS = [
    job("a", "0 * * * *"), job("b", "0 * * * *"), job("c", "0 * * * *"),
    job("half", "*/30 * * * *"),  # :00 and :30
    job("spread one", "0 * * * *", 900, ONE),  # hh:01:20
    job("spread other", "0 * * * *", 900, OTHER),  # hh:01:00
    job("nightly", "0 3 * * *"),  # 03:00 tomorrow, one more in that hour
]


def test_offsets_of_the_known_set() -> None:
    assert offset_seconds(ONE, 900) == 80 and offset_seconds(OTHER, 900) == 60


def test_the_busiest_seconds_of_a_known_set() -> None:
    found = busiest(JOBS, NOW, top=3)
    assert (found.start, found.end) == (NOW, NOW + timedelta(days=1))
    # (10:00, next 10:00]: 24 hours x (3 + 1) at :00, 24 at :30, 24 + 24 spread, 1 nightly.
    assert found.fires == 24 * 4 + 24 + 48 + 1 and found.jobs_counted == 7
    # 03:00 has five fires (a, b, c, half, nightly); every other hour four; earliest first.
    assert [(s.at, s.fires) for s in found.seconds] == [
        (at("02T03:00:00"), 5), (at("01T11:00:00"), 4), (at("01T12:00:00"), 4)]
    assert [j.name for j in found.seconds[0].jobs] == ["a", "b", "c", "half", "nightly"]
    assert found.seconds[0].more_jobs == 0
    # The spread jobs are not in the peaks: only the ones without a spread would move.
    assert [(j.name, n) for j, n in found.would_move] == [
        ("a", 3), ("b", 3), ("c", 3), ("half", 3), ("nightly", 1)]
    assert found.not_counted == []


def test_spread_fires_count_at_slot_plus_offset() -> None:
    only = [j for j in JOBS if j.spread]
    found = busiest(only, NOW, top=48)
    assert {s.at.strftime("%M:%S") for s in found.seconds} == {"01:00", "01:20"}
    assert found.seconds[0].at == at("01T10:01:00")  # 10:00's fire time is after now
    assert all(s.fires == 1 for s in found.seconds) and found.would_move == []


def test_a_fire_counts_in_its_second_and_ties_go_to_the_earliest() -> None:
    # Every 90 s from 00:00:00.5: 10:00:00.5 is after now and counts in 10:00:00.
    late = job("late", "@every 90s from 2026-12-01T00:00:00.5Z")
    found = busiest([late], NOW, top=2)
    assert [(s.at, s.fires) for s in found.seconds] == [
        (at("01T10:00:00"), 1), (at("01T10:01:30"), 1)]


def test_dense_and_broken_jobs_are_listed_not_counted() -> None:
    dense = job("every second", "* * * * * *")
    broken = PeakJob(id=uuid.uuid5(ONE, "broken"), name="broken", schedule="0 * * * *",
                     timezone="Mars/Olympus", anchor_at=ANCHOR, spread=None)
    found = busiest([dense, broken, JOBS[0]], NOW, top=1)
    reasons = {j.name: why for j, why in found.not_counted}
    assert reasons["every second"].startswith(f"its schedule has more than {MAX_FIRES_PER_JOB}")
    assert "Mars/Olympus" in reasons["broken"]
    assert found.jobs_counted == 1 and found.seconds[0].fires == 1


def test_no_jobs_no_peaks() -> None:
    found = busiest([], NOW)
    assert found.seconds == [] and found.fires == 0 and found.would_move == []


# The straightforward count (the module's first version): every job's fire times one by one,
# every second's jobs, every busiest second's jobs scanned again. The oracle of the one below.

def _oracle(jobs: list[PeakJob], now: datetime, top: int) -> Peaks:
    by_id = {j.id: j for j in jobs}
    uncounted: list[tuple[PeakJob, str]] = []
    groups: dict[tuple[Any, ...], tuple[Schedule, list[PeakJob]]] = {}
    for j in jobs:
        schedule, problem = schedule_problem(cached_schedule, j.schedule, j.timezone,
                                             j.anchor_at)
        if schedule is None:
            uncounted.append((j, problem or "its stored schedule does not evaluate"))
            continue
        groups.setdefault((j.schedule, j.timezone, schedule.pinned()),
                          (schedule, []))[1].append(j)
    seconds: dict[uuid.UUID, list[int]] = {}
    dense = (f"its schedule has more than {MAX_FIRES_PER_JOB} slots a day: it raises most "
             "seconds alike")
    for schedule, members in groups.values():
        reach = timedelta(seconds=max(j.offset for j in members))
        ahead = _slots(schedule, now, now + DAY, MAX_FIRES_PER_JOB)
        before = _slots(schedule, now - reach, now, MAX_FIRES_PER_JOB) if reach else []
        if len(ahead) > MAX_FIRES_PER_JOB or len(before) > MAX_FIRES_PER_JOB:
            uncounted += [(j, dense) for j in members]
            continue
        for j in members:
            offset = timedelta(seconds=j.offset)
            seconds[j.id] = [int((s + offset - EPOCH) // timedelta(seconds=1))
                             for s in before + ahead if now < s + offset <= now + DAY]
    per_second: Counter[int] = Counter()
    firing: dict[int, set[uuid.UUID]] = defaultdict(set)
    for job_id, instants in seconds.items():
        per_second.update(instants)
        for second in instants:
            firing[second].add(job_id)
    ranked = sorted(per_second.items(), key=lambda item: (-item[1], item[0]))[:top]
    listed: list[Second] = []
    in_peaks: Counter[uuid.UUID] = Counter()
    for second, fires in ranked:
        names = sorted((by_id[j] for j in firing[second]), key=lambda j: (j.name, str(j.id)))
        listed.append(Second(EPOCH + timedelta(seconds=second), fires,
                             names[:MAX_LISTED_JOBS], max(0, len(names) - MAX_LISTED_JOBS)))
        for job_id in firing[second]:
            in_peaks[job_id] += sum(1 for s in seconds[job_id] if s == second)
    movable = sorted(((by_id[j], n) for j, n in in_peaks.items() if not by_id[j].spread),
                     key=lambda item: (-item[1], item[0].name, str(item[0].id)))
    return Peaks(now, now + DAY, sum(per_second.values()), len(seconds), listed,
                 movable[:MAX_WOULD_MOVE], uncounted)


SCHEDULES = [
    "0 * * * *", "*/15 * * * *", "30 2 * * *", "0 3 * * *", "*/30 * * * *", "5 */2 * * *",
    "0 9 * * mon-fri", "15,45 * * * *", "30 1 * * *", "*/7 * * * *", "0 0 1 * *",
    "@every 90s from 2026-12-01T00:00:00.5Z", "@every 1h", "@every 47m", "@every 3d at 09:00",
    "Mon..Fri 09:00", "*-*-* 02:30", "* * * * * *", "*/10 * * * * *", "not a schedule",
]
ZONES = ["UTC", "Europe/London", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata",
         "Mars/Olympus"]
SPREADS = [None, None, None, 30, 60, 300, 900, 3600, 7200, 86400]
# Instants around daylight-saving changes (New York 2026-11-01, London 2026-10-25, Lord Howe
# 2026-10-04) and a plain one with a fraction of a second.
NOWS = [utc("2026-10-31T18:30:00Z"), utc("2026-10-24T23:59:59Z"),
        utc("2026-10-03T12:00:00Z"), utc("2026-12-01T10:00:00.250Z")]


def _generated(rng: random.Random, n: int, names: int) -> list[PeakJob]:
    return [PeakJob(id=uuid.UUID(int=rng.getrandbits(128)), name=f"job {rng.randrange(names)}",
                    schedule=rng.choice(SCHEDULES), timezone=rng.choice(ZONES),
                    anchor_at=ANCHOR + timedelta(microseconds=rng.randrange(10**12)),
                    spread=rng.choice(SPREADS))
            for _ in range(n)]


# Seeds of the normal suite: every instant of NOWS once (seed % 4), teams of 1 and 10 jobs
# with few and many names, the cheapest such seeds (together about 0.6 s of CPU, where
# (1, 2, 3, 4, 6) took about 4 s; 21 for NOWS[1], as every seed of 0-15 that has it costs
# 1 to 5 s); tests/long/test_properties.py runs the first 16 seeds (the oracle is slow: up
# to 5 s a seed, for teams of 60 and 150 jobs).
QUICK_SEEDS = (2, 8, 10, 15, 21)


@pytest.mark.parametrize("seed", QUICK_SEEDS)
def test_the_count_equals_the_straightforward_one_on_generated_jobs(seed: int) -> None:
    """Generated teams (many jobs per schedule and zone, names shared, spreads up to a day,
    daylight-saving changes, anchors with fractions of a second, dense and broken schedules):
    every field of the answer is the oracle's, for small and large ``top``."""
    rng = random.Random(seed)
    jobs = _generated(rng, rng.choice([1, 10, 60, 150]), rng.choice([3, 1000]))
    now = NOWS[seed % len(NOWS)]
    for top in (3, 100):
        assert busiest(jobs, now, top) == _oracle(jobs, now, top), (seed, top)


def test_more_than_the_listed_jobs_in_a_second_equals_the_straightforward_count() -> None:
    rng = random.Random(99)
    jobs = [dataclasses.replace(j, schedule="0 * * * *", timezone="UTC",
                                spread=None)
            for j in _generated(rng, 1200, 50)]
    found = busiest(jobs, NOW, 100)
    assert found == _oracle(jobs, NOW, 100)
    assert any(s.more_jobs for s in found.seconds) and len(found.would_move) == MAX_WOULD_MOVE
