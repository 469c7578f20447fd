"""A job's load spread (core/schedule/spread.py, docs/schedules.md *Spread*): offsets stable
across processes, different across jobs, uniform over the window; the spread's bounds; the
catch-up rules read at slot + offset (core/runs/slots.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections import Counter
from datetime import datetime, timedelta

import pytest

from core.errors import FieldErrors
from core.runs.slots import plan_slots
from core.schedule import parse_schedule
from core.schedule.spread import (
    MAX_SPREAD_SECONDS,
    describe_spread,
    next_fire_time,
    normalize_spread,
    offset_seconds,
    shortest_gap,
)
from tests.unit.instants import utc

NOW = utc("2026-12-01T10:00:00Z")
ONE = uuid.UUID("00000000-0000-0000-0000-000000000001")
OTHER = uuid.UUID("6f1c2b4e-9a0d-4c1e-8f3a-2b5d7e9c1a04")
NAMESPACE = uuid.UUID("2d5f0b1c-7a43-4e8b-9c61-0f3e2a1b4c5d")


def ids(count: int) -> list[uuid.UUID]:
    """``count`` distinct ids, the same on every run (no random source)."""
    return [uuid.uuid5(NAMESPACE, str(i)) for i in range(count)]


def test_offsets_are_pinned_values() -> None:
    # SHA-256 of the id: these numbers are the same in every process, release and machine; a
    # change of the derivation would move every spread job's fire times and fails here.
    assert offset_seconds(ONE, 900) == 80
    assert offset_seconds(OTHER, 900) == 60
    assert offset_seconds(ONE, 86400) == 41480
    assert offset_seconds(OTHER, 86400) == 31560


def test_offsets_do_not_depend_on_the_process_hash_seed() -> None:
    code = ("import uuid; from core.schedule.spread import offset_seconds; "
            f"print([offset_seconds(uuid.uuid5(uuid.UUID('{NAMESPACE}'), str(i)), 3600) "
            "for i in range(50)])")
    outputs = {subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                              text=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout
               for seed in ("1", "2", "12345")}
    assert outputs == {str([offset_seconds(i, 3600) for i in ids(50)]) + "\n"}


def test_no_spread_is_offset_zero() -> None:
    assert offset_seconds(ONE, None) == 0
    assert offset_seconds(ONE, 0) == 0
    assert describe_spread(ONE, None) == ""


@pytest.mark.parametrize("spread", [1, 2, 7, 60, 900, 3600, MAX_SPREAD_SECONDS])
def test_offsets_stay_inside_the_window(spread: int) -> None:
    offsets = [offset_seconds(i, spread) for i in ids(2000)]
    assert min(offsets) >= 0
    assert max(offsets) < spread


def test_offsets_differ_across_jobs() -> None:
    # 1,000 jobs over a one-hour window: a collision-free map would give 1,000 values; by the
    # birthday bound about 130 pairs collide, so at least 850 distinct values is expected.
    offsets = [offset_seconds(i, 3600) for i in ids(1000)]
    assert len(set(offsets)) >= 850


def test_offsets_are_uniform_chi_square() -> None:
    # 30,000 ids over a 15-minute window in 30 buckets of 30 s: chi-square with 29 degrees of
    # freedom; 58.3 is its 0.1 % critical value (a uniform source passes 999 times in 1,000,
    # and the ids are fixed, so the verdict never changes from run to run).
    count, buckets, spread = 30_000, 30, 900
    hits = Counter(offset_seconds(i, spread) * buckets // spread for i in ids(count))
    expected = count / buckets
    chi2 = sum((hits.get(b, 0) - expected) ** 2 / expected for b in range(buckets))
    assert chi2 < 58.3, (chi2, sorted(hits.items()))
    # ...and no bucket strays more than 10 % from its share.
    assert max(abs(hits.get(b, 0) - expected) for b in range(buckets)) < 0.1 * expected


def test_a_thousand_hourly_jobs_stop_landing_on_the_same_second() -> None:
    hourly = parse_schedule("0 * * * *", "UTC", anchor=NOW)
    after = utc("2026-12-01T10:30:00Z")  # the 10:00 slot's window (to 10:15) is over
    fires = Counter(next_fire_time(hourly, after, timedelta(seconds=offset_seconds(i, 900)))
                    for i in ids(1000))
    assert max(fires.values()) <= 6  # 1,000 jobs over 900 seconds (without spread: 1,000)
    assert min(fires) >= utc("2026-12-01T11:00:00Z")
    assert max(fires) < utc("2026-12-01T11:15:00Z")


def errors_of(value: object, expression: str | None = "0 * * * *", zone: str = "UTC",
              now: datetime = NOW) -> tuple[int | None, list[str]]:
    errors = FieldErrors()
    schedule = parse_schedule(expression, zone, anchor=now) if expression else None
    got = normalize_spread(value, schedule, now, errors)
    return got, [f"{e.field}: {e.message}" for e in errors.items]


@pytest.mark.parametrize(("value", "seconds"), [
    (None, None), (0, None), ("0s", None), (1, 1), (900, 900), ("15m", 900), (" 1h ", 3600),
    (900.0, 900)])
def test_spread_values_read(value: object, seconds: int | None) -> None:
    assert errors_of(value) == (seconds, [])


@pytest.mark.parametrize("value", [-1, 1.5, "15 minutes", "", True, [], MAX_SPREAD_SECONDS + 1,
                                   "2d"])
def test_spread_values_refused_name_the_field(value: object) -> None:
    got, problems = errors_of(value, None)
    assert got is None
    assert len(problems) == 1 and problems[0].startswith("spread: must be a duration")


def test_spread_longer_than_the_shortest_interval_is_refused() -> None:
    assert errors_of("1h", "0 * * * *") == (3600, [])
    got, problems = errors_of("61m", "0 * * * *")
    assert got is None and problems == [
        "spread: must be at most the schedule's shortest interval between slots (3600 s): a "
        "slot's window ends before the next slot"]
    # 0 and 10 past the hour: the shortest interval is 10 minutes, not the hour.
    assert errors_of("11m", "0,10 * * * *")[1] != []
    assert errors_of("10m", "0,10 * * * *") == (600, [])


def test_the_shortest_interval_sees_daylight_saving_time() -> None:
    # 01:00 and 03:00 in Paris are 2 h apart but for the night clocks spring forward
    # (29 March 2027): 01:00 CET is 00:00 UTC, 03:00 CEST is 01:00 UTC.
    paris = parse_schedule("0 1,3 * * *", "Europe/Paris", anchor=NOW)
    assert shortest_gap(paris, NOW) == 3600
    assert errors_of("61m", "0 1,3 * * *", "Europe/Paris")[1] != []
    assert errors_of("1h", "0 1,3 * * *", "Europe/Paris") == (3600, [])


def test_a_one_shot_is_bounded_by_the_maximum_only() -> None:
    assert errors_of("1d", "@at 2027-01-01T00:00:00Z") == (86400, [])


# -- the catch-up rules read at slot + offset ---------------------------------------------------
OFFSET = timedelta(seconds=432)  # 7m12s
HOURLY = parse_schedule("0 * * * *", "UTC", anchor=NOW)


def test_a_slot_fires_at_its_fire_time_on_time() -> None:
    due = utc("2026-12-01T11:07:12Z")  # the 11:00 slot's fire time
    plan = plan_slots(HOURLY, due, due, "latest", OFFSET)
    assert plan.fire == [(utc("2026-12-01T11:00:00Z"), "schedule")]
    assert plan.missed == []
    assert plan.next_due == utc("2026-12-01T12:07:12Z")


def test_lateness_is_measured_from_the_fire_time() -> None:
    # 11:07:20 is 7m20s after the slot but 8 s after its fire time: on time, not a catch-up.
    plan = plan_slots(HOURLY, utc("2026-12-01T11:07:12Z"), utc("2026-12-01T11:07:20Z"),
                      "skip", OFFSET)
    assert plan.fire == [(utc("2026-12-01T11:00:00Z"), "schedule")]
    # 11 s after the fire time: late beyond the 10 s grace, so catchup=skip misses it.
    plan = plan_slots(HOURLY, utc("2026-12-01T11:07:12Z"), utc("2026-12-01T11:07:23Z"),
                      "skip", OFFSET)
    assert plan.fire == [] and plan.missed == [utc("2026-12-01T11:00:00Z")]
    assert plan.next_due == utc("2026-12-01T12:07:12Z")


def test_an_outage_is_caught_up_by_fire_times() -> None:
    # Down from 11:05 to 14:05: the 11:00, 12:00 and 13:00 slots fired (11:07:12, 12:07:12,
    # 13:07:12) during the outage; 14:00's fire time (14:07:12) has not come yet.
    plan = plan_slots(HOURLY, utc("2026-12-01T11:07:12Z"), utc("2026-12-01T14:05:00Z"),
                      "latest", OFFSET)
    assert plan.missed == [utc("2026-12-01T11:00:00Z"), utc("2026-12-01T12:00:00Z")]
    assert plan.fire == [(utc("2026-12-01T13:00:00Z"), "catchup")]
    assert plan.next_due == utc("2026-12-01T14:07:12Z")


def test_claimed_ahead_of_the_fire_time() -> None:
    plan = plan_slots(HOURLY, utc("2026-12-01T11:07:12Z"), utc("2026-12-01T11:07:11.5Z"),
                      "latest", OFFSET)
    assert plan.fire == [(utc("2026-12-01T11:00:00Z"), "schedule")]
    assert plan.next_due == utc("2026-12-01T12:07:12Z")


def test_describe_spread_names_the_offset() -> None:
    assert describe_spread(ONE, 900) == ", each slot fired 1m20s after it (spread 15m)"


def test_a_replayed_run_starts_at_its_fire_time() -> None:
    from core.replay.jobs import fire_time, overran

    slot, fire = utc("2026-12-01T11:00:00Z"), utc("2026-12-01T11:07:12Z")
    row = {"scheduled_for": slot, "fire_at": fire,
           "data": {"lateness_ms": 500, "finished_at": "2026-12-01T11:08:00Z"}}
    assert fire_time(row) == fire and fire_time({**row, "fire_at": None}) == slot
    # Started at 11:07:12.5: past a 40 s max_duration at 11:07:52.5, not past 60 s.
    assert overran(row, 40) == utc("2026-12-01T11:07:52.5Z")
    assert overran(row, 60) is None
