"""The busiest seconds of the next day (core/jobs/peaks.py) on a known set of jobs: every
expected answer below is counted by hand from the schedules and the pinned offsets."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from core.jobs.peaks import MAX_FIRES_PER_JOB, PeakJob, busiest
from core.schedule.spread import offset_seconds
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
