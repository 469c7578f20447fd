"""Schedule engine: grammar, validation, DST rules, and properties checked against a brute-force
reference (tests/reference_cron.py) with hypothesis."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from core.schedule import Fire, InvalidSchedule, Schedule, parse_schedule
from tests.reference_cron import RefCron, reference_fires

ANCHOR = datetime(2024, 1, 1, tzinfo=UTC)
NY, PARIS, LORD_HOWE = "America/New_York", "Europe/Paris", "Australia/Lord_Howe"


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)


def parse(expression: str, timezone: str = "UTC", **kwargs) -> Schedule:
    kwargs.setdefault("anchor", ANCHOR)
    return parse_schedule(expression, timezone, **kwargs)


def fires(expression: str, timezone: str, after: datetime, count: int) -> list[tuple]:
    """(UTC ISO, local ISO, dst) triples - readable in assertion diffs."""
    return [
        (f.at.isoformat(), f.local.isoformat(), f.dst)
        for f in parse(expression, timezone, anchor=after).fires(after, count)
    ]


def at_list(expression: str, timezone: str, after: datetime, count: int) -> list[datetime]:
    return [f.at for f in parse(expression, timezone, anchor=after).fires(after, count)]


# --- grammar -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "after", "expected"),
    [
        ("0 9 * * MON-FRI", utc(2024, 1, 6), [utc(2024, 1, 8, 9), utc(2024, 1, 9, 9)]),
        ("0 0 1 JAN,jul *", utc(2024, 1, 1), [utc(2024, 7, 1), utc(2025, 1, 1)]),
        ("0 12 * * 7", utc(2024, 1, 1), [utc(2024, 1, 7, 12), utc(2024, 1, 14, 12)]),
        ("0 12 * * SUN", utc(2024, 1, 1), [utc(2024, 1, 7, 12), utc(2024, 1, 14, 12)]),
        ("0 0 ? * MON", utc(2024, 1, 1), [utc(2024, 1, 8), utc(2024, 1, 15)]),
        ("0 0 15 * ?", utc(2024, 1, 1), [utc(2024, 1, 15), utc(2024, 2, 15)]),
        ("5,10-12 3 * * *", utc(2024, 1, 1), [utc(2024, 1, 1, 3, m) for m in (5, 10, 11, 12)]),
        ("10-30/10 3 * * *", utc(2024, 1, 1), [utc(2024, 1, 1, 3, m) for m in (10, 20, 30)]),
        ("50/5 3 * * *", utc(2024, 1, 1), [utc(2024, 1, 1, 3, m) for m in (50, 55)]),
        ("5-5 3 * * *", utc(2024, 1, 1), [utc(2024, 1, 1, 3, 5), utc(2024, 1, 2, 3, 5)]),
        ("0 0 * * 1-1", utc(2024, 1, 1), [utc(2024, 1, 8), utc(2024, 1, 15)]),
        ("*/20 0 0 * * *", utc(2024, 1, 1), [utc(2024, 1, 1, 0, 0, 20), utc(2024, 1, 1, 0, 0, 40)]),
        ("0 0 L * *", utc(2024, 1, 1), [utc(2024, 1, 31), utc(2024, 2, 29), utc(2024, 3, 31)]),
        ("0 0 15W * *", utc(2024, 6, 1), [utc(2024, 6, 14), utc(2024, 7, 15)]),
        ("0 0 15W * *", utc(2024, 9, 1), [utc(2024, 9, 16), utc(2024, 10, 15)]),
        ("0 0 1W * *", utc(2024, 5, 15), [utc(2024, 6, 3), utc(2024, 7, 1)]),
        ("0 0 31W * *", utc(2024, 3, 1), [utc(2024, 3, 29), utc(2024, 5, 31)]),
        ("0 0 * * 5#2", utc(2024, 1, 1), [utc(2024, 1, 12), utc(2024, 2, 9)]),
        ("0 0 * * FRI#2", utc(2024, 1, 1), [utc(2024, 1, 12), utc(2024, 2, 9)]),
        ("0 0 * * 5L", utc(2024, 1, 1), [utc(2024, 1, 26), utc(2024, 2, 23)]),
        ("0 0 * * friL", utc(2024, 1, 1), [utc(2024, 1, 26), utc(2024, 2, 23)]),
        ("0 0 */2 * 1", utc(2024, 1, 1), [utc(2024, 1, 15), utc(2024, 1, 29), utc(2024, 2, 5)]),
        ("0 0 15 * 1#2", utc(2024, 1, 1), [utc(2024, 1, 8), utc(2024, 1, 15), utc(2024, 2, 12)]),
        ("0 0 15W * 1", utc(2024, 1, 1), [utc(2024, 1, 8), utc(2024, 1, 15), utc(2024, 1, 22)]),
        ("0 0 1W,15W * *", utc(2024, 6, 1), [utc(2024, 6, 3), utc(2024, 6, 14), utc(2024, 7, 1)]),
    ],
)
def test_cron_forms(expression: str, after: datetime, expected: list[datetime]) -> None:
    assert at_list(expression, "UTC", after, len(expected)) == expected


def test_per_minute_rule_on_clamped_nearest_weekday_skips_whole_days() -> None:
    # croniter clamps 31W to 30 April and offers all 1440 minutes of it; every one is rejected.
    schedule = parse("* * 31W * *", anchor=utc(2024, 4, 1))
    assert schedule.next_fire(utc(2024, 4, 1)) == utc(2024, 5, 31)
    assert schedule.fires_between(utc(2024, 5, 31, 23, 58), utc(2024, 7, 31), 3) == [
        utc(2024, 5, 31, 23, 59),
        utc(2024, 7, 31),
    ]


def test_or_mix_of_plain_and_last_weekday_matches_reference() -> None:
    expression, after = "0 0 1,15 * 1,5L", utc(2023, 12, 31, 12)
    expected = [at for at, _ in reference_fires(expression, "UTC", after, utc(2024, 2, 2))]
    assert expected[:3] == [utc(2024, 1, 1), utc(2024, 1, 8), utc(2024, 1, 15)]
    assert at_list(expression, "UTC", after, len(expected)) == expected


@pytest.mark.parametrize(
    ("macro", "expected"),
    [
        ("@yearly", utc(2025, 1, 1)),
        ("@annually", utc(2025, 1, 1)),
        ("@monthly", utc(2024, 6, 1)),
        ("@weekly", utc(2024, 5, 19)),
        ("@daily", utc(2024, 5, 16)),
        ("@midnight", utc(2024, 5, 16)),
        ("@hourly", utc(2024, 5, 15, 13)),
        ("@DAILY", utc(2024, 5, 16)),
    ],
)
def test_macros(macro: str, expected: datetime) -> None:
    schedule = parse(f"  {macro} ")
    assert schedule.kind == "cron" and schedule.expression == macro
    assert schedule.next_fire(utc(2024, 5, 15, 12)) == expected


@pytest.mark.parametrize(
    ("expression", "seconds"),
    [
        ("@every 90s", 90),
        ("@every 1h30m", 5400),
        ("@every 2d3h4m5s", 2 * 86400 + 3 * 3600 + 4 * 60 + 5),
        ("@every 1S", 1),
        ("30s", 30),
        ("10m", 600),
        ("1h", 3600),
        ("1d", 86400),
        ("@every 366d", 366 * 86400),
    ],
)
def test_intervals(expression: str, seconds: int) -> None:
    schedule = parse(expression)
    assert schedule.kind == "interval"
    assert schedule.interval_seconds == seconds
    assert schedule.next_fire(ANCHOR) == ANCHOR + timedelta(seconds=seconds)
    assert not schedule.is_fixed_time


def test_interval_anchored_and_never_drifts() -> None:
    anchor = utc(2024, 1, 1, 10) + timedelta(microseconds=250_000)
    schedule = parse("@every 30s", anchor=anchor)
    assert schedule.next_fire(anchor) == anchor + timedelta(seconds=30)
    assert schedule.next_fire(anchor - timedelta(hours=5)) == anchor + timedelta(seconds=30)
    assert schedule.next_fire(anchor + timedelta(seconds=29.9)) == anchor + timedelta(seconds=30)
    assert schedule.next_fire(anchor + timedelta(seconds=30)) == anchor + timedelta(seconds=60)
    far = anchor + timedelta(days=1000, seconds=7)
    assert schedule.next_fire(far) == anchor + timedelta(days=1000, seconds=30)
    assert [f.at - anchor for f in schedule.fires(far, 3)] == [
        timedelta(days=1000, seconds=s) for s in (30, 60, 90)
    ]


def test_interval_local_time_and_no_dst_flag() -> None:
    schedule = parse("@every 1h", PARIS, anchor=utc(2024, 10, 26, 23))
    got = schedule.fires(utc(2024, 10, 26, 23), 3)
    assert [f.local.isoformat() for f in got] == [
        "2024-10-27T02:00:00+02:00",
        "2024-10-27T02:00:00+01:00",
        "2024-10-27T03:00:00+01:00",
    ]
    assert [f.dst for f in got] == [None, None, None]


def test_at_with_z_offset_and_local() -> None:
    for text, zone in [
        ("@at 2026-12-01T09:00:00Z", "UTC"),
        ("@at 2026-12-01T10:00:00+01:00", "UTC"),
        ("@at 2026-12-01T10:00:00", PARIS),
        ("@at 2026-12-01t09:00:00z", "UTC"),
    ]:
        schedule = parse(text, zone, now=utc(2026, 1, 1))
        assert schedule.kind == "at" and schedule.is_fixed_time
        assert schedule.next_fire(utc(2026, 1, 1)) == utc(2026, 12, 1, 9), text


def test_at_fires_once() -> None:
    schedule = parse("@at 2026-12-01T09:00:00.123456Z")
    at = utc(2026, 12, 1, 9) + timedelta(microseconds=123456)
    assert schedule.next_fire(at - timedelta(microseconds=1)) == at
    assert schedule.next_fire(at) is None
    assert schedule.fires(utc(2026, 1, 1), 5) == [Fire(at, at, None)]
    assert schedule.fires_between(utc(2026, 1, 1), utc(2027, 1, 1), 5) == [at]
    # Without ``now`` a past instant is accepted (re-reading a stored job) and never fires.
    assert parse("@at 2020-01-01T00:00:00Z").next_fire(utc(2024, 1, 1)) is None


# --- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("0 0 30 2 *", "day-of-month 30 never occurs in February"),
        ("0 0 31 4 *", "day-of-month 31 never occurs in April"),
        ("0 0 31 4,6,9,11 *", "day-of-month 31 never occurs in April, June, September or November"),
        ("0 0 30W 2 *", "day-of-month 30W never occurs in February"),
        ("0 0 30,31 FEB ?", "day-of-month 30,31 never occurs in February"),
        ("@every 0s", "interval must be positive"),
        ("@every 0h0m", "interval must be positive"),
        ("@every -5m", "interval must be positive"),
        ("-5m", "interval must be positive"),
        ("@every 1.5s", "must use whole numbers"),
        ("@every 90", "needs a unit"),
        ("@every 30m1h", "is malformed"),
        ("@every 1h 30m", "is malformed"),
        ("@every", "interval is missing"),
        ("@every 367d", "longer than the maximum of 366 days"),
        ("* * * * * * *", "got 7"),
        ("* * * *", "got 4"),
        ("60 * * * *", "minute 60 is out of range (0-59)"),
        ("* 24 * * *", "hour 24 is out of range (0-23)"),
        ("* * 0 * *", "day-of-month 0 is out of range (1-31)"),
        ("* * 32 * *", "day-of-month 32 is out of range (1-31)"),
        ("* * * 13 *", "month 13 is out of range (1-12)"),
        ("* * * 0 *", "month 0 is out of range (1-12)"),
        ("* * * * 8", "day-of-week 8 is out of range (0-7, 0 and 7 are Sunday)"),
        ("60 * * * * *", "second 60 is out of range (0-59)"),
        ("*/0 * * * *", "minute: step 0 must be between 1 and 60"),
        ("*/61 * * * *", "minute: step 61 must be between 1 and 60"),
        ("*/x * * * *", "step 'x' must be a positive whole number"),
        ("5-1 * * * *", "minute: range '5-1' runs backwards"),
        ("* * * * FRI-MON", "day-of-week: range 'FRI-MON' runs backwards"),
        ("a * * * *", "minute: 'a' is not a valid value"),
        ("MON * * * *", "minute: 'MON' is not a valid value"),
        ("* * * JANUARY *", "month: 'JANUARY' is not a valid value"),
        ("H * * * *", "minute: 'H' is not a valid value"),
        ("1/2/3 * * * *", "not a number, name, range or step"),
        ("1,,2 * * * *", "minute: empty item in list '1,,2'"),
        ("? * * * *", "'?' is only allowed"),
        ("* * 1,? * *", "'?' is only allowed"),
        ("* * * * 1#6", "the number after # must be 1-5"),
        ("* * * * 1#0", "the number after # must be 1-5"),
        ("* * * * L", "'L' needs a day before it"),
        ("* * LW * *", "'LW' is not supported"),
        ("* * L-3 * *", "'L-3' is not supported"),
        ("* * 32W * *", "day-of-month 32W is out of range"),
        ("0 0 1W,2W,3W,4W,5W * *", "at most 4 'W' entries"),
        ("x" * 201, "201 characters long; the limit is 200"),
        ("", "schedule is empty"),
        ("   ", "schedule is empty"),
        ("*\u200b* * * *", "character that is not allowed"),
        ("@foo", "unknown schedule keyword '@foo'"),
        ("@daily 5", "@daily takes nothing after it"),
        ("hello", "'hello' is not a schedule"),
        ("@at", "instant is missing"),
        ("@at tomorrow", "is not an RFC 3339 date-time"),
        ("@at 2026-12-01", "is not an RFC 3339 date-time"),
        ("@at 2026-02-30T00:00:00Z", "is not a valid date and time"),
        ("@at 2026-12-01T09:00:00+25:00", "is not a valid date and time"),
        ("@at 2020-01-01T00:00:00Z", "@at instant 2020-01-01T00:00:00Z is not in the future"),
        ("@at 2024-06-01T00:00:00Z", "is not in the future"),
    ],
)
def test_rejected(expression: str, message: str) -> None:
    with pytest.raises(InvalidSchedule) as caught:
        parse(expression, now=utc(2024, 6, 1))
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("expression", "zone", "message"),
    [
        ("@at 2026-03-08T02:30:00", NY, "local time 2026-03-08T02:30:00 does not exist in"),
        ("@at 2026-11-01T01:30:00", NY, "local time 2026-11-01T01:30:00 is ambiguous in"),
        ("*/30 2 * 3 0#2", NY, "schedule never fires in America/New_York"),
        ("* * * * *", "Mars/Base", "unknown time zone 'Mars/Base'"),
        ("* * * * *", "europe/paris", "unknown time zone 'europe/paris'"),
        ("* * * * *", "", "time zone must be an IANA name"),
        ("* * * * *", "../../etc/passwd", "unknown time zone"),
    ],
)
def test_rejected_in_zone(expression: str, zone: str, message: str) -> None:
    with pytest.raises(InvalidSchedule) as caught:
        parse(expression, zone)
    assert message in str(caught.value)


def test_invalid_schedule_is_a_value_error() -> None:
    assert issubclass(InvalidSchedule, ValueError)


def test_naive_datetimes_rejected() -> None:
    naive = datetime(2024, 1, 1)
    with pytest.raises(ValueError, match="timezone-aware"):
        parse_schedule("* * * * *", anchor=naive)
    schedule = parse("* * * * *")
    for call in (
        lambda: schedule.next_fire(naive),
        lambda: schedule.fires(naive, 1),
        lambda: schedule.fires_between(naive, ANCHOR, 1),
        lambda: schedule.fires_between(ANCHOR, naive, 1),
    ):
        with pytest.raises(ValueError, match="timezone-aware"):
            call()


@pytest.mark.parametrize("count", [-1, 1001, True, 2.0])
def test_fire_counts_are_bounded(count) -> None:
    schedule = parse("* * * * * *")
    with pytest.raises(ValueError, match="between 0 and 1000"):
        schedule.fires(ANCHOR, count)
    with pytest.raises(ValueError, match="between 0 and 1000"):
        schedule.fires_between(ANCHOR, ANCHOR + timedelta(days=1), count)


def test_out_of_range_instants_rejected() -> None:
    with pytest.raises(ValueError, match="outside the supported range"):
        parse("* * * * *").next_fire(datetime(2500, 1, 1, tzinfo=UTC))


# --- strictly-after, sub-second, lists -----------------------------------------------------------


def test_strictly_after_keeps_sub_second_precision() -> None:
    half = timedelta(microseconds=500_000)
    assert parse("* * * * *").next_fire(utc(2024, 1, 1, 10) + half) == utc(2024, 1, 1, 10, 1)
    assert parse("* * * * *").next_fire(utc(2024, 1, 1, 10)) == utc(2024, 1, 1, 10, 1)
    just_before = utc(2024, 1, 1, 10, 1) - timedelta(microseconds=1)
    assert parse("* * * * *").next_fire(just_before) == utc(2024, 1, 1, 10, 1)
    assert parse("* * * * * *").next_fire(utc(2024, 1, 1, 10) + half) == utc(2024, 1, 1, 10, 0, 1)


def test_fires_between_is_half_open_and_returns_the_first_limit() -> None:
    schedule = parse("@hourly")
    since, until = utc(2024, 1, 1, 10), utc(2024, 1, 1, 13)
    assert schedule.fires_between(since, until, 10) == [utc(2024, 1, 1, h) for h in (11, 12, 13)]
    assert schedule.fires_between(since, until, 2) == [utc(2024, 1, 1, 11), utc(2024, 1, 1, 12)]
    assert schedule.fires_between(since, until, 0) == []
    assert schedule.fires_between(until, since, 10) == []
    assert schedule.fires_between(since, since, 10) == []


def test_schedule_is_immutable_and_reports_its_shape() -> None:
    schedule = parse("  30 2 * * *  ", PARIS)
    assert (schedule.expression, schedule.timezone, schedule.kind) == ("30 2 * * *", PARIS, "cron")
    assert schedule.interval_seconds is None and schedule.is_fixed_time
    assert not parse("*/5 2 * * *").is_fixed_time and not parse("5 * * * *").is_fixed_time
    with pytest.raises(dataclasses.FrozenInstanceError):
        schedule.expression = "* * * * *"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("expression", "zone", "description"),
    [
        ("30 2 * * *", "UTC", "At 02:30 AM"),
        ("30 2 * * *", PARIS, "At 02:30 AM (Europe/Paris)"),
        ("*/30 * * * * *", "UTC", "Every 30 seconds"),
        ("0 0 * * 5L", "UTC", "At 12:00 AM, on the last Friday of the month"),
        ("@daily", "UTC", "At 12:00 AM"),
        ("@every 90s", "UTC", "Every 90 seconds"),
        ("@every 1h30m", "UTC", "Every 1 hour 30 minutes"),
        ("1d", "UTC", "Every 1 day"),
        ("@at 2026-12-01T10:00:00", PARIS, "Once at 2026-12-01T09:00:00Z (Europe/Paris)"),
    ],
)
def test_describe(expression: str, zone: str, description: str) -> None:
    assert parse(expression, zone).describe() == description


def test_describe_states_the_and_rule_for_star_fields() -> None:
    assert "or on Monday" in parse("0 0 1 * 1").describe()
    described = parse("0 0 */2 * 1").describe()
    assert "only on Monday" in described and "or on" not in described


# --- DST: fixed-time jobs (Vixie cron) -----------------------------------------------------------


def test_gap_collapses_several_fixed_slots_into_one_fire() -> None:
    assert fires("15,45 2 * * *", NY, utc(2024, 3, 9, 12), 3) == [
        ("2024-03-10T07:00:00+00:00", "2024-03-10T03:00:00-04:00", "gap"),
        ("2024-03-11T06:15:00+00:00", "2024-03-11T02:15:00-04:00", None),
        ("2024-03-11T06:45:00+00:00", "2024-03-11T02:45:00-04:00", None),
    ]


def test_gap_slot_and_gap_end_slot_fire_once() -> None:
    assert fires("0,30 2,3 * * *", NY, utc(2024, 3, 10, 6), 2) == [
        ("2024-03-10T07:00:00+00:00", "2024-03-10T03:00:00-04:00", "gap"),
        ("2024-03-10T07:30:00+00:00", "2024-03-10T03:30:00-04:00", None),
    ]


def test_fold_fixed_time_fires_first_occurrence_only_new_york() -> None:
    assert fires("30 1 * * *", NY, utc(2024, 11, 2, 12), 2) == [
        ("2024-11-03T05:30:00+00:00", "2024-11-03T01:30:00-04:00", "fold"),
        ("2024-11-04T06:30:00+00:00", "2024-11-04T01:30:00-05:00", None),
    ]


def test_fold_fixed_time_after_inside_the_fold() -> None:
    # After the first 01:30 (EDT) has fired, the second 01:30 (EST) must not fire.
    assert at_list("30 1 * * *", NY, utc(2024, 11, 3, 5, 30), 1) == [utc(2024, 11, 4, 6, 30)]
    assert at_list("30 1 * * *", NY, utc(2024, 11, 3, 6, 10), 1) == [utc(2024, 11, 4, 6, 30)]
    assert at_list("30 1 * * *", NY, utc(2024, 11, 3, 5, 10), 1) == [utc(2024, 11, 3, 5, 30)]


def test_fold_and_gap_fixed_time_paris() -> None:
    assert fires("30 2 * * *", PARIS, utc(2024, 10, 26, 12), 2) == [
        ("2024-10-27T00:30:00+00:00", "2024-10-27T02:30:00+02:00", "fold"),
        ("2024-10-28T01:30:00+00:00", "2024-10-28T02:30:00+01:00", None),
    ]
    assert fires("0 2 * * *", PARIS, utc(2024, 3, 30, 12), 1) == [
        ("2024-03-31T01:00:00+00:00", "2024-03-31T03:00:00+02:00", "gap"),
    ]


def test_lord_howe_half_hour_dst() -> None:
    # Spring forward 2024-10-06 02:00 -> 02:30 (+10:30 -> +11); fall back 2024-04-07 02:00 -> 01:30.
    assert fires("15 2 * * *", LORD_HOWE, utc(2024, 10, 5), 2) == [
        ("2024-10-05T15:30:00+00:00", "2024-10-06T02:30:00+11:00", "gap"),
        ("2024-10-06T15:15:00+00:00", "2024-10-07T02:15:00+11:00", None),
    ]
    assert fires("45 1 * * *", LORD_HOWE, utc(2024, 4, 6), 2) == [
        ("2024-04-06T14:45:00+00:00", "2024-04-07T01:45:00+11:00", "fold"),
        ("2024-04-07T15:15:00+00:00", "2024-04-08T01:45:00+10:30", None),
    ]


def test_midnight_gap_and_fold_cairo() -> None:
    # 2023-04-28 00:00 -> 01:00 and 2023-10-26 24:00 -> 23:00 (Egypt).
    assert fires("0 0 * * *", "Africa/Cairo", utc(2023, 4, 27), 2) == [
        ("2023-04-27T22:00:00+00:00", "2023-04-28T01:00:00+03:00", "gap"),
        ("2023-04-28T21:00:00+00:00", "2023-04-29T00:00:00+03:00", None),
    ]
    assert fires("30 23 * * *", "Africa/Cairo", utc(2023, 10, 26), 2) == [
        ("2023-10-26T20:30:00+00:00", "2023-10-26T23:30:00+03:00", "fold"),
        ("2023-10-27T21:30:00+00:00", "2023-10-27T23:30:00+02:00", None),
    ]


def test_midnight_gap_sao_paulo_2018() -> None:
    assert fires("0 0 * * *", "America/Sao_Paulo", utc(2018, 11, 3, 12), 1) == [
        ("2018-11-04T03:00:00+00:00", "2018-11-04T01:00:00-02:00", "gap"),
    ]
    assert at_list("0 * * * *", "America/Sao_Paulo", utc(2018, 11, 4, 2, 30), 1) == [
        utc(2018, 11, 4, 3)
    ]


def test_six_field_fixed_time_follows_minute_and_hour() -> None:
    assert at_list("*/20 30 1 * * *", NY, utc(2024, 11, 3, 5), 4) == [
        utc(2024, 11, 3, 5, 30),
        utc(2024, 11, 3, 5, 30, 20),
        utc(2024, 11, 3, 5, 30, 40),
        utc(2024, 11, 4, 6, 30),
    ]
    assert fires("*/20 30 2 * * *", NY, utc(2024, 3, 10, 6), 2)[0] == (
        "2024-03-10T07:00:00+00:00",
        "2024-03-10T03:00:00-04:00",
        "gap",
    )


# --- DST: wildcard jobs (real elapsed time) ------------------------------------------------------


def test_fold_wildcard_fires_in_both_occurrences() -> None:
    got = fires("*/15 * * * *", NY, utc(2024, 11, 3, 4, 50), 9)
    assert [local for _, local, _ in got] == [
        "2024-11-03T01:00:00-04:00",
        "2024-11-03T01:15:00-04:00",
        "2024-11-03T01:30:00-04:00",
        "2024-11-03T01:45:00-04:00",
        "2024-11-03T01:00:00-05:00",
        "2024-11-03T01:15:00-05:00",
        "2024-11-03T01:30:00-05:00",
        "2024-11-03T01:45:00-05:00",
        "2024-11-03T02:00:00-05:00",
    ]
    assert [dst for *_, dst in got] == ["fold"] * 8 + [None]
    assert [at for at, *_ in got] == sorted(at for at, *_ in got)


def test_fold_wildcard_after_inside_each_occurrence() -> None:
    assert at_list("*/15 * * * *", NY, utc(2024, 11, 3, 5, 40), 2) == [
        utc(2024, 11, 3, 5, 45),
        utc(2024, 11, 3, 6),
    ]
    assert at_list("*/15 * * * *", NY, utc(2024, 11, 3, 6, 20), 2) == [
        utc(2024, 11, 3, 6, 30),
        utc(2024, 11, 3, 6, 45),
    ]


def test_fold_wildcard_hour_paris_and_lord_howe() -> None:
    assert fires("0 * * * *", PARIS, utc(2024, 10, 26, 23, 30), 3) == [
        ("2024-10-27T00:00:00+00:00", "2024-10-27T02:00:00+02:00", "fold"),
        ("2024-10-27T01:00:00+00:00", "2024-10-27T02:00:00+01:00", "fold"),
        ("2024-10-27T02:00:00+00:00", "2024-10-27T03:00:00+01:00", None),
    ]
    assert fires("*/20 1 * * *", LORD_HOWE, utc(2024, 4, 6, 14), 3) == [
        ("2024-04-06T14:20:00+00:00", "2024-04-07T01:20:00+11:00", None),
        ("2024-04-06T14:40:00+00:00", "2024-04-07T01:40:00+11:00", "fold"),
        ("2024-04-06T15:10:00+00:00", "2024-04-07T01:40:00+10:30", "fold"),
    ]


def test_gap_wildcard_skips_missing_times() -> None:
    assert at_list("*/15 2 * * *", NY, utc(2024, 3, 9, 12), 1) == [utc(2024, 3, 11, 6)]
    assert fires("30 * * * *", PARIS, utc(2024, 3, 31, 0), 2) == [
        ("2024-03-31T00:30:00+00:00", "2024-03-31T01:30:00+01:00", None),
        ("2024-03-31T01:30:00+00:00", "2024-03-31T03:30:00+02:00", None),
    ]
    assert at_list("0 * * * *", LORD_HOWE, utc(2024, 10, 5, 15), 2) == [
        utc(2024, 10, 5, 16),
        utc(2024, 10, 5, 17),
    ]


# --- properties against the brute-force reference ------------------------------------------------

ZONES = [
    "UTC",
    NY,
    PARIS,
    LORD_HOWE,
    "Asia/Kathmandu",
    "America/Sao_Paulo",
    "Africa/Cairo",
    "Pacific/Chatham",
    "Europe/London",
    "America/Havana",
    "America/Santiago",
]
# A short run here; tests/long/test_properties.py runs these properties at full length.
PROPERTY = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@cache
def transitions(zone_name: str) -> tuple[datetime, ...]:
    """Exact UTC instants (whole minutes) of the zone's offset changes, 2015-2030."""
    zone, found = ZoneInfo(zone_name), []
    day = utc(2015, 1, 1)
    while day < utc(2031, 1, 1):
        offset = day.astimezone(zone).utcoffset()
        if (day + timedelta(days=1)).astimezone(zone).utcoffset() != offset:
            low, high = 0, 24 * 60  # minutes into the day: offset(low) is the old one
            while high - low > 1:
                middle = (low + high) // 2
                if (day + timedelta(minutes=middle)).astimezone(zone).utcoffset() == offset:
                    low = middle
                else:
                    high = middle
            found.append(day + timedelta(minutes=high))
        day += timedelta(days=1)
    return tuple(found)


def test_transition_helper_finds_real_transitions() -> None:
    assert utc(2024, 3, 10, 7) in transitions(NY) and utc(2024, 11, 3, 6) in transitions(NY)
    assert utc(2024, 10, 5, 15, 30) in transitions(LORD_HOWE)
    assert transitions("Asia/Kathmandu") == ()


@st.composite
def near_transition(
    draw,
    zone: str,
    before: timedelta,
    after: timedelta,
    unit: timedelta,
    close: timedelta | None = None,
):
    """``(transition, instant)``: an instant near one of the zone's offset changes, or, for zones
    without any, ``(None, any instant in 2020-2030)``."""
    known = transitions(zone)
    if known:
        transition = base = draw(st.sampled_from(known))
    else:
        transition = None
        base = utc(2020, 1, 1) + draw(st.integers(0, 11 * 365)) * timedelta(days=1)
    if close is not None and draw(st.sampled_from([True, True, False])):
        before = close  # start just before the change, so it is among the first fires
    offset = draw(st.integers(-(before // unit), after // unit)) * unit
    jitter = draw(st.sampled_from([0, 0, 1, 250_000, 999_999]))
    return transition, base + offset + timedelta(microseconds=jitter)


def _hot_hours(zone: str, transition: datetime | None, instant: datetime) -> list[int]:
    """Local hours worth firing at: around the transition read with BOTH offsets (so the hours of
    a gap, which no real instant has, are included), else around ``instant``."""
    tz, centre = ZoneInfo(zone), transition or instant
    offsets = {(centre + timedelta(hours=h)).astimezone(tz).utcoffset() for h in (-3, 3)}
    walls = {
        centre.replace(tzinfo=None) + o + timedelta(minutes=m)
        for o in offsets
        for m in range(-60, 61, 30)
    }
    return sorted({wall.hour for wall in walls})


def _hour_field(draw, zone: str, transition: datetime | None, instant: datetime) -> str:
    """Half the time exactly the wall hour(s) a transition skips or repeats; else a random field
    biased to the hours around it."""
    hot = _hot_hours(zone, transition, instant)
    if transition is not None and draw(st.sampled_from([True, False])):
        tz = ZoneInfo(zone)
        offsets = sorted(
            {
                (transition + d).astimezone(tz).utcoffset()
                for d in (-timedelta(hours=3), timedelta(hours=3))
            }
        )
        first = transition.replace(tzinfo=None) + offsets[0]
        last = transition.replace(tzinfo=None) + offsets[-1] - timedelta(minutes=1)
        return ",".join(str(h) for h in sorted({first.hour, last.hour}))
    return draw(field(0, 23, hot))


@st.composite
def field(draw, low: int, high: int, hot: list[int] | None = None, max_step: int = 10) -> str:
    """A plain cron field: *, N, A-B, */S, N/S, A-B/S or a list of those."""
    value = st.sampled_from(hot) if hot else st.integers(low, high)
    max_step = min(max_step, high - low + 1)

    def item() -> st.SearchStrategy[str]:
        pair = st.tuples(value, st.integers(low, high)).map(sorted)
        return st.one_of(
            value.map(str),
            pair.map(lambda ab: f"{ab[0]}-{ab[1]}"),
            st.tuples(pair, st.integers(1, max_step)).map(lambda t: f"{t[0][0]}-{t[0][1]}/{t[1]}"),
            st.tuples(value, st.integers(1, max_step)).map(lambda t: f"{t[0]}/{t[1]}"),
        )

    return draw(
        st.one_of(
            st.just("*"),
            st.integers(1, max_step).map(lambda s: f"*/{s}"),
            item(),
            st.lists(item(), min_size=2, max_size=3).map(",".join),
        )
    )


#: True two times in three (an integer range would be drawn as 0 far more often than that).
MOSTLY = st.sampled_from([True, True, False])


@st.composite
def day_of_month(draw) -> str:
    if draw(MOSTLY):
        return "*"
    specials = st.sampled_from(["L", "?", "1W", "15W", "31W", "30W", "1,15,L", "1W,15W", "*/2"])
    return draw(st.one_of(specials, field(1, 31), st.integers(1, 31).map(lambda n: f"{n}W")))


@st.composite
def day_of_week(draw) -> str:
    if draw(MOSTLY):
        return "*"
    nth = st.tuples(st.integers(0, 7), st.integers(1, 5)).map(lambda t: f"{t[0]}#{t[1]}")
    last = st.integers(0, 7).map(lambda d: f"{d}L")
    named = st.sampled_from(["MON-FRI", "SAT,SUN", "?", "FRI#2", "friL", "1,5L", "0,3#1", "*/2"])
    # '*' spans 0-6 in day-of-week (7 is only an alias of Sunday), hence steps up to 7
    return draw(st.one_of(field(0, 7, max_step=7), nth, last, named))


@st.composite
def month(draw, instant: datetime) -> str:
    if draw(MOSTLY):
        return "*"
    return draw(st.one_of(field(1, 12), st.just(str(instant.month)), st.just("JAN-JUN,NOV")))


def _compare_with_reference(
    expression: str, zone: str, after: datetime, until: datetime, limit: int
) -> None:
    expected = reference_fires(expression, zone, after, until)[:limit]
    event(f"reference fires: {'yes' if expected else 'no'}")
    for flag in sorted({str(dst) for _, dst in expected}):
        event(f"dst flag seen: {flag}")
    try:
        schedule = parse_schedule(expression, zone, anchor=after)
    except InvalidSchedule as exc:
        # Only "never occurs"/"never fires" rejections may come from valid syntax.
        assert "never" in str(exc), (expression, str(exc))
        assert expected == []
        return
    got = schedule.fires(after, len(expected))
    assert [(f.at, f.dst) for f in got] == expected, (expression, zone, after)
    assert schedule.fires_between(after, until, limit) == [at for at, _ in expected]
    following = schedule.next_fire(after)
    if expected:
        assert following == expected[0][0]
        assert [f.local for f in got] == [at.astimezone(ZoneInfo(zone)) for at, _ in expected]
    else:
        assert following is None or following > until, (expression, zone, after, following)


@PROPERTY
@given(data=st.data())
def test_five_fields_match_reference_across_dst(data) -> None:
    """Every day matches, the transition is always in the window: gap and fold paths."""
    zone = data.draw(st.sampled_from([z for z in ZONES if transitions(z)]), label="zone")
    transition, after = data.draw(
        near_transition(zone, timedelta(hours=3), timedelta(0), timedelta(minutes=1)), label="after"
    )
    hour = _hour_field(data.draw, zone, transition, after)
    expression = f"{data.draw(field(0, 59))} {hour} * * *"
    note(expression)
    _compare_with_reference(expression, zone, after, after + timedelta(hours=27), 100)


@PROPERTY
@given(data=st.data())
def test_five_fields_with_day_rules_match_reference(data) -> None:
    zone = data.draw(st.sampled_from(ZONES), label="zone")
    transition, after = data.draw(
        near_transition(
            zone, timedelta(hours=26), timedelta(hours=1), timedelta(minutes=1), timedelta(hours=3)
        ),
        label="after",
    )
    expression = " ".join(
        [
            data.draw(field(0, 59)),
            _hour_field(data.draw, zone, transition, after),
            data.draw(day_of_month()),
            data.draw(month(after)),
            data.draw(day_of_week()),
        ]
    )
    note(expression)
    _compare_with_reference(expression, zone, after, after + timedelta(hours=30), 100)


@settings(PROPERTY, max_examples=6)  # stepping every second is the slow part
@given(data=st.data())
def test_six_fields_match_reference_around_dst(data) -> None:
    zone = data.draw(st.sampled_from(ZONES), label="zone")
    transition, after = data.draw(
        near_transition(
            zone,
            timedelta(minutes=35),
            timedelta(minutes=5),
            timedelta(seconds=1),
            timedelta(minutes=3),
        ),
        label="after",
    )
    minutes = st.one_of(field(0, 59), st.sampled_from(["0", "30", "45", "*/15", "0-59", "10-20"]))
    expression = " ".join(
        [
            data.draw(field(0, 59)),
            data.draw(minutes),
            _hour_field(data.draw, zone, transition, after),
            "*",
            "*",
            data.draw(st.sampled_from(["*", "*", "?", "0-6"])),
        ]
    )
    note(expression)
    _compare_with_reference(expression, zone, after, after + timedelta(minutes=45), 300)


def _check_days_against_reference(expression: str, after: datetime, count: int) -> None:
    """Compare the first ``count`` fires of a ``M H dom month dow`` expression in UTC with the
    reference's day rule, scanning up to 4 years day by day."""
    minute, hour = (int(part) for part in expression.split()[:2])
    reference = RefCron.parse(expression)
    expected, day = [], after.date()
    while len(expected) < count and day < after.date() + timedelta(days=4 * 366):
        at = datetime(day.year, day.month, day.day, hour, minute, tzinfo=UTC)
        if at > after and reference.day_matches(day):
            expected.append(at)
        day += timedelta(days=1)
    try:
        schedule = parse_schedule(expression, "UTC", anchor=after)
    except InvalidSchedule as exc:
        assert "never" in str(exc), (expression, str(exc))
        assert not any(
            reference.day_matches(after.date() + timedelta(days=n)) for n in range(28 * 366)
        )
        return
    assert [f.at for f in schedule.fires(after, len(expected))] == expected, expression
    if len(expected) < count:  # the scan ended: nothing more within the 4 years scanned
        beyond = schedule.fires(after, len(expected) + 1)[len(expected) :]
        assert not beyond or beyond[0].at.date() >= day, expression


@PROPERTY
@given(data=st.data())
def test_day_rules_match_reference_over_years(data) -> None:
    """Day-of-month/day-of-week/month rules, far apart fires: compared day by day in UTC."""
    _, after = data.draw(near_transition("UTC", timedelta(0), timedelta(0), timedelta(minutes=1)))
    hour, minute = data.draw(st.integers(0, 23)), data.draw(st.integers(0, 59))
    expression = (
        f"{minute} {hour} {data.draw(day_of_month())} {data.draw(month(after))} "
        f"{data.draw(day_of_week())}"
    )
    note(expression)
    _check_days_against_reference(expression, after, 5)


@PROPERTY
@given(data=st.data())
def test_month_edge_day_rules_match_reference(data) -> None:
    """W, L, # and DL near month ends, where nearest-weekday and clamping mistakes show."""
    _, after = data.draw(near_transition("UTC", timedelta(0), timedelta(0), timedelta(minutes=1)))
    nearest = st.integers(1, 31).map(lambda n: f"{n}W")
    dom = data.draw(
        st.one_of(
            nearest,
            st.lists(nearest, min_size=2, max_size=3).map(",".join),
            st.sampled_from(["L", "1W", "30W", "31W", "29W", "L,1W", "*", "?"]),
        )
    )
    dow = data.draw(
        st.one_of(
            st.sampled_from(["*", "*", "?", "*/2", "1-5"]),
            st.tuples(st.integers(0, 6), st.integers(1, 5)).map(lambda t: f"{t[0]}#{t[1]}"),
            st.integers(0, 7).map(lambda d: f"{d}L"),
        )
    )
    expression = f"0 12 {dom} * {dow}"
    note(expression)
    _check_days_against_reference(expression, after, 12)


@PROPERTY
@given(
    anchor=st.datetimes(
        min_value=datetime(2000, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC)
    ),
    period=st.integers(1, 366 * 86400),
    offset=st.integers(-(10**9), 10**10),
)
def test_interval_property(anchor: datetime, period: int, offset: int) -> None:
    after = anchor + timedelta(microseconds=offset * 7)
    step = timedelta(seconds=period)
    schedule = parse_schedule(f"@every {period}s", anchor=anchor)
    got = schedule.next_fire(after)
    k, rest = divmod(got - anchor, step)
    assert rest == timedelta(0) and k >= 1  # on the anchor's grid, never the anchor itself
    assert got > after and (k == 1 or got - step <= after)  # and the first such instant


@PROPERTY
@given(data=st.data())
def test_fires_chain_is_consistent(data) -> None:
    zone = data.draw(st.sampled_from(ZONES))
    _, after = data.draw(
        near_transition(zone, timedelta(hours=3), timedelta(hours=1), timedelta(minutes=1))
    )
    expression = data.draw(
        st.sampled_from(
            [
                "*/15 * * * *",
                "30 1 * * *",
                "0,30 2 * * *",
                "*/7 1-3 * * *",
                "0 0 * * *",
                "*/10 */2 * * * *",
                "0 30 2 * * *",
                "@hourly",
                "45 23 * * *",
            ]
        )
    )
    schedule = parse_schedule(expression, zone, anchor=after)
    listed = schedule.fires(after, 12)
    cursor, chained = after, []
    for _ in listed:
        cursor = schedule.next_fire(cursor)
        chained.append(cursor)
    assert [f.at for f in listed] == chained
    assert all(a < b for a, b in zip(chained, chained[1:], strict=False))
    assert all(f.local == f.at.astimezone(ZoneInfo(zone)) for f in listed)
    assert all(f.at.tzinfo is UTC for f in listed)
    # A fire is found again from just before it.
    for fire in listed[:3]:
        assert schedule.next_fire(fire.at - timedelta(microseconds=1)) == fire.at


def test_validation_window_covers_rare_dates() -> None:
    # Feb 29 that is also a Sunday: 2032, then 2060 - both found, no false "never".
    schedule = parse_schedule("0 0 29 2 */7", anchor=utc(2033, 1, 1))
    assert schedule.next_fire(utc(2033, 1, 1)) == utc(2060, 2, 29)
    assert date(2060, 2, 29).weekday() == 6
