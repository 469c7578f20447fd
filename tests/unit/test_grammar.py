"""Schedule grammar of ``core/schedule/grammar.py`` and ``core/schedule/fields.py``.

Rules checked (docs/schedules.md, "Grammar", "Cron fields", "Intervals", "One-shot",
"Validation"):

- which form a string is: 5-field cron, 6-field cron with **seconds first**, the macros
  (``@yearly``/``@annually`` = ``0 0 1 1 *`` ... ``@hourly`` = ``0 * * * *``), intervals
  (``@every 1h30m``, bare ``90s``/``10m``) and one-shots (``@at <RFC 3339>``);
- field values, names, ``*``, ``N``, ``A-B`` (A <= B), ``*/S``, ``N/S``, ``A-B/S``, lists, ``?``,
  ``L``, ``NW``, ``D#K``, ``DL``, and what is rejected (``LW``, ``L-3``, bare ``L`` in
  day-of-week, ``H``, 7 fields, backwards ranges);
- intervals: whole numbers, units d h m s largest first, 1 s to 366 days; zero, negative,
  fractional and unitless values rejected;
- "Every rejection names the problem": the messages of the Validation table, verbatim;
- "Validation is bounded by construction: the string is capped at 200 characters".

Expected values are written by hand from those rules, never computed by the code under test.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.schedule import InvalidSchedule, parse_schedule
from core.schedule.fields import parse_cron
from core.schedule.grammar import parse_at, parse_interval, split_form
from tests.unit.instants import utc

NOW = utc("2026-12-01T10:00:00Z")
ALL_MINUTES = frozenset(range(60))

# --- which form a string is --------------------------------------------------------------
FORM_ROWS = [
    ("30 2 * * *", ("cron", "30 2 * * *")),
    ("  30 2 * * *\t", ("cron", "30 2 * * *")),
    ("30\t2 * * *   *", ("cron", "30\t2 * * *   *")),
    ("*/30 * * * * *", ("cron", "*/30 * * * * *")),
    ("@yearly", ("cron", "0 0 1 1 *")),
    ("@annually", ("cron", "0 0 1 1 *")),
    ("@monthly", ("cron", "0 0 1 * *")),
    ("@weekly", ("cron", "0 0 * * 0")),
    ("@daily", ("cron", "0 0 * * *")),
    ("@midnight", ("cron", "0 0 * * *")),
    ("@hourly", ("cron", "0 * * * *")),
    ("@DAILY", ("cron", "0 0 * * *")),
    ("@every 90s", ("interval", "90s")),
    ("@every 1h30m", ("interval", "1h30m")),
    ("90s", ("interval", "90s")),
    ("10m", ("interval", "10m")),
    ("-5m", ("interval", "-5m")),
    ("@at 2026-12-01T09:00:00Z", ("at", "2026-12-01T09:00:00Z")),
]


@pytest.mark.parametrize(("text", "expected"), FORM_ROWS)
def test_split_form(text: str, expected: tuple[str, str]) -> None:
    assert split_form(text) == expected


SPLIT_ERRORS = [
    ("", "schedule is empty"),
    ("  \t ", "schedule is empty"),
    ("*" * 201, "schedule is 201 characters long; the limit is 200"),
    ("0 0 * * * \u00e9", "schedule contains a character that is not allowed: '\u00e9'"),
    ("0 0 * *\n*", "schedule contains a character that is not allowed: '\\n'"),
    ("@daily 5", "@daily takes nothing after it, got '5'"),
    ("@reboot", "unknown schedule keyword '@reboot'; expected one of @yearly, @annually, "
                "@monthly, @weekly, @daily, @midnight, @hourly, @every or @at"),
    ("daily", "'daily' is not a schedule: expected cron fields, an @keyword or an interval "
              "like 30s"),
]


@pytest.mark.parametrize(("text", "message"), SPLIT_ERRORS)
def test_split_form_rejects(text: str, message: str) -> None:
    with pytest.raises(InvalidSchedule) as info:
        split_form(text)
    assert str(info.value) == message


def test_split_form_rejects_a_non_string() -> None:
    with pytest.raises(InvalidSchedule, match="^schedule must be a string$"):
        split_form(None)  # type: ignore[arg-type]


# --- hostile input: bounded, rejected with the documented error ----------------------------
HOSTILE = [
    ("*" * 100_000, "schedule is 100000 characters long; the limit is 200"),
    ("1," * 50_000 + "1 * * * *", "schedule is 100009 characters long; the limit is 200"),
    ("@every " + "9" * 10_000 + "s", "schedule is 10008 characters long; the limit is 200"),
    (" " * 300 + "* * * * *" + " " * 300, None),  # stripped to 9 characters: accepted
]


@pytest.mark.parametrize(("text", "message"), HOSTILE, ids=["stars", "list", "digits", "pad"])
def test_hostile_input_is_bounded(text: str, message: str | None) -> None:
    if message is None:
        assert parse_schedule(text, anchor=NOW).kind == "cron"
        return
    with pytest.raises(InvalidSchedule) as info:
        parse_schedule(text, anchor=NOW)
    assert str(info.value) == message


def test_longest_accepted_expression_is_200_characters() -> None:
    at_limit = ",".join(["1"] * 95 + ["10"]) + " * * * *"  # 95 + 2 + 95 commas + 8 = 200
    over = ",".join(["1"] * 94 + ["10", "10"]) + " * * * *"  # 94 + 4 + 95 commas + 8 = 201
    assert (len(at_limit), len(over)) == (200, 201)
    assert parse_schedule(at_limit, anchor=NOW).kind == "cron"
    assert parse_cron(at_limit).minutes == frozenset({1, 10})
    with pytest.raises(InvalidSchedule) as info:
        parse_schedule(over, anchor=NOW)
    assert str(info.value) == "schedule is 201 characters long; the limit is 200"


def test_huge_step_and_value_digits_are_rejected_as_out_of_range() -> None:
    with pytest.raises(InvalidSchedule, match=r"^minute: step 9{150} must be between 1 and 60$"):
        parse_cron("*/" + "9" * 150 + " * * * *")
    with pytest.raises(InvalidSchedule, match=r"^minute 9{150} is out of range \(0-59\)$"):
        parse_cron("9" * 150 + " * * * *")


# --- cron fields: accepted values ---------------------------------------------------------
def minute_set(text: str) -> frozenset[int]:
    return parse_cron(f"{text} * * * *").minutes


@pytest.mark.parametrize(("field", "expected"), [
    ("*", ALL_MINUTES),
    ("0", frozenset({0})),
    ("59", frozenset({59})),
    ("5-5", frozenset({5})),
    ("10-13", frozenset({10, 11, 12, 13})),
    ("*/15", frozenset({0, 15, 30, 45})),
    ("*/60", frozenset({0})),
    ("*/1", ALL_MINUTES),
    ("5/20", frozenset({5, 25, 45})),
    ("50/3", frozenset({50, 53, 56, 59})),
    ("10-20/5", frozenset({10, 15, 20})),
    ("10-21/5", frozenset({10, 15, 20})),
    ("1,2,3", frozenset({1, 2, 3})),
    ("3,1,3", frozenset({1, 3})),
    ("0-4,30-59/10,7", frozenset({0, 1, 2, 3, 4, 7, 30, 40, 50})),
    ("0-59", ALL_MINUTES),
])
def test_minute_field_values(field: str, expected: frozenset[int]) -> None:
    assert minute_set(field) == expected


@pytest.mark.parametrize(("expression", "attribute", "expected"), [
    ("0 0 * * *", "hours", frozenset({0})),
    ("0 */6 * * *", "hours", frozenset({0, 6, 12, 18})),
    ("0 9-17 * * *", "hours", frozenset(range(9, 18))),
    ("0 0 1 JAN,mar *", "months", frozenset({1, 3})),
    ("0 0 1 jun-AUG *", "months", frozenset({6, 7, 8})),
    ("0 0 1 */4 *", "months", frozenset({1, 5, 9})),
    ("0 0 1 12 *", "months", frozenset({12})),
    ("0 0 * * 1-5", "dow_days", frozenset({1, 2, 3, 4, 5})),
    ("0 0 * * MON-FRI", "dow_days", frozenset({1, 2, 3, 4, 5})),
    ("0 0 * * sun", "dow_days", frozenset({0})),
    ("0 0 * * 7", "dow_days", frozenset({0})),
    ("0 0 * * 0,7", "dow_days", frozenset({0})),
    ("0 0 * * 5-7", "dow_days", frozenset({5, 6, 0})),
    ("0 0 * * FRI-7,0-MON", "dow_days", frozenset({5, 6, 0, 1})),
    ("0 0 * * */2", "dow_days", frozenset({0, 2, 4, 6})),
    ("0 0 * * *", "dow_days", frozenset(range(7))),
    ("0 0 1,15 * *", "dom_days", frozenset({1, 15})),
    ("0 0 */10 * *", "dom_days", frozenset({1, 11, 21, 31})),
    ("0 0 L * *", "dom_days", frozenset()),
    ("*/30 * * * * *", "seconds", frozenset({0, 30})),
    ("0 * * * * *", "seconds", frozenset({0})),
    ("30 2 * * *", "seconds", frozenset({0})),
])
def test_field_values(expression: str, attribute: str, expected: frozenset[int]) -> None:
    spec = parse_cron(expression)
    value = {
        "dow_days": lambda: spec.dow.days,
        "dom_days": lambda: spec.dom.days,
    }.get(attribute, lambda: getattr(spec, attribute))()
    assert value == expected


@pytest.mark.parametrize(("expression", "has_seconds", "seconds", "minutes", "hours"), [
    ("30 2 * * *", False, {0}, {30}, {2}),
    ("*/30 * * * * *", True, {0, 30}, ALL_MINUTES, set(range(24))),
    ("0 30 2 * * *", True, {0}, {30}, {2}),
    ("15 0 */12 * * *", True, {15}, {0}, {0, 12}),
])
def test_six_fields_are_seconds_first(expression: str, has_seconds: bool, seconds: set[int],
                                      minutes: set[int], hours: set[int]) -> None:
    spec = parse_cron(expression)
    assert (spec.has_seconds, spec.seconds, spec.minutes, spec.hours) == \
        (has_seconds, seconds, minutes, hours)


def test_six_field_fires_every_thirty_seconds() -> None:
    # croniter's default would read the 6th field as trailing seconds (every second).
    schedule = parse_schedule("*/30 * * * * *", anchor=NOW)
    assert schedule.fires_between(NOW, NOW + timedelta(minutes=1), 10) == [
        utc("2026-12-01T10:00:30Z"), utc("2026-12-01T10:01:00Z")]


@pytest.mark.parametrize(("expression", "last", "nearest", "nth", "dow_last"), [
    ("0 0 L * *", True, (), frozenset(), frozenset()),
    ("0 0 l * *", True, (), frozenset(), frozenset()),
    ("0 0 1,L * *", True, (), frozenset(), frozenset()),
    ("0 0 15W * *", False, (15,), frozenset(), frozenset()),
    ("0 0 1W,31w * *", False, (1, 31), frozenset(), frozenset()),
    ("0 0 1W,2W,3W,4W * *", False, (1, 2, 3, 4), frozenset(), frozenset()),
    ("0 0 * * 5#2", False, (), frozenset({(5, 2)}), frozenset()),
    ("0 0 * * FRI#5", False, (), frozenset({(5, 5)}), frozenset()),
    ("0 0 * * 7#1", False, (), frozenset({(0, 1)}), frozenset()),
    ("0 0 * * 5L", False, (), frozenset(), frozenset({5})),
    ("0 0 * * FRIL", False, (), frozenset(), frozenset({5})),
    ("0 0 * * 7L", False, (), frozenset(), frozenset({0})),
])
def test_quartz_extensions(expression: str, last: bool, nearest: tuple[int, ...],
                           nth: frozenset, dow_last: frozenset) -> None:
    spec = parse_cron(expression)
    assert (spec.dom.last, spec.dom.nearest, spec.dow.nth, spec.dow.last) == \
        (last, nearest, nth, dow_last)


@pytest.mark.parametrize(("expression", "day_or"), [
    ("0 0 1 * 1", True),        # both restricted: OR
    ("0 0 1-31 * 4", True),     # 1-31 is a restriction
    ("0 0 29 2 1", True),
    ("0 0 */2 * 1", False),     # starts with '*': AND
    ("0 0 ? * MON", False),     # '?' counts as '*'
    ("0 0 1 * ?", False),
    ("0 0 1 * *", False),
    ("0 0 * * 1", False),
    ("0 0 L * 5L", True),
])
def test_day_fields_or_rule(expression: str, day_or: bool) -> None:
    assert parse_cron(expression).day_or is day_or


@pytest.mark.parametrize(("expression", "fixed"), [
    ("30 2 * * *", True),
    ("0,30 1 * * *", True),
    ("0-59 2 * * *", True),
    ("*/20 30 1 * * *", True),   # the seconds field does not matter
    ("*/15 * * * *", False),
    ("30 * * * *", False),
    ("* 2 * * *", False),
    ("*/15 2 * * *", False),
])
def test_fixed_time_or_wildcard(expression: str, fixed: bool) -> None:
    assert parse_cron(expression).is_fixed_time is fixed


@pytest.mark.parametrize(("expression", "fires"), [
    # 2026-12-01 is a Tuesday
    ("0 0 L * *", ["2026-12-31T00:00:00Z", "2027-01-31T00:00:00Z", "2027-02-28T00:00:00Z"]),
    # last Friday: Dec 25 2026, Jan 29 2027, Feb 26 2027
    ("0 0 * * 5L", ["2026-12-25T00:00:00Z", "2027-01-29T00:00:00Z", "2027-02-26T00:00:00Z"]),
    # second Friday: Dec 11 2026, Jan 8 2027, Feb 12 2027
    ("0 0 * * 5#2", ["2026-12-11T00:00:00Z", "2027-01-08T00:00:00Z", "2027-02-12T00:00:00Z"]),
    # 1W: Jan 1 2027 is a Friday; May 1 2027 is a Saturday -> Monday May 3
    ("0 0 1W 1,5 *", ["2027-01-01T00:00:00Z", "2027-05-03T00:00:00Z", "2028-01-03T00:00:00Z"]),
    # 31W: Oct 31 2027 is a Sunday -> Friday Oct 29; months without a 31st never fire
    ("0 0 31W 4,10 *", ["2027-10-29T00:00:00Z", "2028-10-31T00:00:00Z", "2029-10-31T00:00:00Z"]),
    # the 1st and every Monday (OR): Dec 1 (Tue), Dec 7 (Mon), Dec 14 (Mon)
    ("0 0 1 * 1", ["2026-12-07T00:00:00Z", "2026-12-14T00:00:00Z", "2026-12-21T00:00:00Z"]),
    # odd days that are Mondays (AND): Dec 7, Dec 21, Jan 11
    ("0 0 */2 * 1", ["2026-12-07T00:00:00Z", "2026-12-21T00:00:00Z", "2027-01-11T00:00:00Z"]),
    ("@weekly", ["2026-12-06T00:00:00Z", "2026-12-13T00:00:00Z", "2026-12-20T00:00:00Z"]),
    ("@yearly", ["2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z", "2029-01-01T00:00:00Z"]),
    ("0 0 29 2 *", ["2028-02-29T00:00:00Z", "2032-02-29T00:00:00Z", "2036-02-29T00:00:00Z"]),
])
def test_extension_fires(expression: str, fires: list[str]) -> None:
    schedule = parse_schedule(expression, anchor=NOW)
    assert [f.at for f in schedule.fires(NOW, 3)] == [utc(x) for x in fires]


# --- cron fields: rejected, with the message the user sees --------------------------------
CRON_ERRORS = [
    ("61 * * * *", "minute 61 is out of range (0-59)"),
    ("60 * * * *", "minute 60 is out of range (0-59)"),
    ("0 24 * * *", "hour 24 is out of range (0-23)"),
    ("0 0 32 * *", "day-of-month 32 is out of range (1-31)"),
    ("0 0 0 * *", "day-of-month 0 is out of range (1-31)"),
    ("0 0 * 13 *", "month 13 is out of range (1-12)"),
    ("0 0 * 0 *", "month 0 is out of range (1-12)"),
    ("0 0 * * 8", "day-of-week 8 is out of range (0-7, 0 and 7 are Sunday)"),
    ("60 * * * * *", "second 60 is out of range (0-59)"),
    ("0 0-60 * * *", "hour 60 is out of range (0-23)"),
    ("*/0 * * * *", "minute: step 0 must be between 1 and 60"),
    ("*/61 * * * *", "minute: step 61 must be between 1 and 60"),
    ("0 */25 * * *", "hour: step 25 must be between 1 and 24"),
    ("*/x * * * *", "minute: step 'x' must be a positive whole number"),
    ("*/ * * * *", "minute: step '' must be a positive whole number"),
    ("*/-1 * * * *", "minute: step '-1' must be a positive whole number"),
    ("* * * * * * *", "expected 5 fields (minute hour day-of-month month day-of-week) or 6 "
                      "with seconds first, got 7"),
    ("* * * *", "expected 5 fields (minute hour day-of-month month day-of-week) or 6 "
                "with seconds first, got 4"),
    ("0 0 * * FRI-MON", "day-of-week: range 'FRI-MON' runs backwards; write it as a list, "
                        "e.g. 'FRI-7,0-MON'"),
    ("30-10 * * * *", "minute: range '30-10' runs backwards; write it as a list, "
                      "e.g. '30-59,0-10'"),
    ("0 0 * DEC-JAN *", "month: range 'DEC-JAN' runs backwards; write it as a list, "
                        "e.g. 'DEC-12,1-JAN'"),
    ("1,,2 * * * *", "minute: empty item in list '1,,2'"),
    ("1, * * * *", "minute: empty item in list '1,'"),
    ("? * * * *", "minute: '?' is only allowed alone, in day-of-month or day-of-week"),
    ("0 0 ?,1 * *", "day-of-month: '?' is only allowed alone, in day-of-month or day-of-week"),
    ("0 0 * ? *", "month: '?' is only allowed alone, in day-of-month or day-of-week"),
    ("H * * * *", "minute: 'H' is not a valid value"),
    ("R * * * *", "minute: 'R' is not a valid value"),
    ("0 0 * FOO *", "month: 'FOO' is not a valid value"),
    ("0 0 * * MONDAY", "day-of-week: 'MONDAY' is not a valid value"),
    ("0 JAN * * *", "hour: 'JAN' is not a valid value"),
    ("1.5 * * * *", "minute: '1.5' is not a number, name, range or step"),
    ("1-2-3 * * * *", "minute: '1-2-3' is not a number, name, range or step"),
    ("1/2/3 * * * *", "minute: '1/2/3' is not a number, name, range or step"),
    ("0 0 * * MON#6", "day-of-week 'MON#6': the number after # must be 1-5"),
    ("0 0 * * 1#0", "day-of-week '1#0': the number after # must be 1-5"),
    ("0 0 * * 8#1", "day-of-week 8 is out of range (0-7, 0 and 7 are Sunday)"),
    ("0 0 * * L", "day-of-week: 'L' needs a day before it, e.g. 5L (last Friday)"),
    ("0 0 LW * *", "day-of-month: 'LW' is not supported (use L or NW)"),
    ("0 0 L-3 * *", "day-of-month: 'L-3' is not supported (use L or NW)"),
    ("0 0 32W * *", "day-of-month 32W is out of range (1-31)"),
    ("0 0 0W * *", "day-of-month 0W is out of range (1-31)"),
    ("0 0 1W,2W,3W,4W,5W * *", "day-of-month: at most 4 'W' entries are allowed"),
    ("0 0 5L * *", "day-of-month: '5L' is not a valid value"),
    ("0 0 * * 5W", "day-of-week: '5W' is not a valid value"),
]


@pytest.mark.parametrize(("expression", "message"), CRON_ERRORS)
def test_cron_rejections(expression: str, message: str) -> None:
    with pytest.raises(InvalidSchedule) as info:
        parse_schedule(expression, anchor=NOW)
    assert str(info.value) == message


NEVER_ERRORS = [
    ("0 0 30 2 *", "day-of-month 30 never occurs in February"),
    ("0 0 31 4 *", "day-of-month 31 never occurs in April"),
    ("0 0 31 4,6 *", "day-of-month 31 never occurs in April or June"),
    ("0 0 31 2,4,6 *", "day-of-month 31 never occurs in February, April or June"),
    ("0 0 30,31 2 *", "day-of-month 30,31 never occurs in February"),
    ("0 0 30 2 ?", "day-of-month 30 never occurs in February"),
    ("0 0 31W 4 *", "day-of-month 31W never occurs in April"),
]


@pytest.mark.parametrize(("expression", "message"), NEVER_ERRORS)
def test_dates_that_never_occur(expression: str, message: str) -> None:
    with pytest.raises(InvalidSchedule) as info:
        parse_schedule(expression, anchor=NOW)
    assert str(info.value) == message


def test_invalid_schedule_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="^minute 61 is out of range"):
        parse_schedule("61 * * * *", anchor=NOW)


def test_dst_gap_only_wildcard_never_fires() -> None:
    # the second Sunday of March is the US spring-forward day: 02:00-02:59 does not exist
    with pytest.raises(InvalidSchedule) as info:
        parse_schedule("*/30 2 * 3 0#2", "America/New_York", anchor=NOW)
    assert str(info.value) == (
        "schedule never fires in America/New_York: every matching local time falls in a DST "
        "gap, and wildcard jobs skip those")


@pytest.mark.parametrize(("zone", "message"), [
    ("Mars/Base", "unknown time zone 'Mars/Base'"),
    ("europe/paris", "unknown time zone 'europe/paris'"),
    ("", "time zone must be an IANA name such as 'Europe/Paris'"),
])
def test_unknown_zone(zone: str, message: str) -> None:
    with pytest.raises(InvalidSchedule) as info:
        parse_schedule("0 0 * * *", zone, anchor=NOW)
    assert str(info.value) == message


# --- intervals ----------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "seconds", "label"), [
    ("1s", 1, "1 second"),
    ("90s", 90, "90 seconds"),
    ("10m", 600, "10 minutes"),
    ("90m", 5400, "90 minutes"),
    ("1h30m", 5400, "1 hour 30 minutes"),
    ("2d3h", 2 * 86400 + 3 * 3600, "2 days 3 hours"),
    ("1d1h1m1s", 86400 + 3600 + 60 + 1, "1 day 1 hour 1 minute 1 second"),
    ("1d", 86400, "1 day"),
    ("366d", 366 * 86400, "366 days"),
    ("365d23h59m59s", 366 * 86400 - 1, "365 days 23 hours 59 minutes 59 seconds"),
    ("0h5m", 300, "5 minutes"),
])
def test_interval_accepted(text: str, seconds: int, label: str) -> None:
    interval = parse_interval(text)
    assert (interval.period, interval.label) == (timedelta(seconds=seconds), label)


INTERVAL_ERRORS = [
    ("@every 0s", "interval must be positive"),
    ("@every -5m", "interval must be positive"),
    ("-5m", "interval must be positive"),
    ("@every 0h0m", "interval must be positive"),
    ("0s", "interval must be positive"),
    ("@every", "interval is missing after @every (e.g. '@every 90s')"),
    ("@every 90", "interval '90' needs a unit: s, m, h or d (e.g. '90s')"),
    ("90", "interval '90' needs a unit: s, m, h or d (e.g. '90s')"),
    ("@every 1.5s", "interval '1.5s' must use whole numbers (e.g. '1m30s' rather than '1.5m')"),
    ("1,5m", "interval '1,5m' must use whole numbers (e.g. '1m30s' rather than '1.5m')"),
    ("@every 30m1h", "interval '30m1h' is malformed: use whole numbers with units d, h, m, s, "
                     "largest first (e.g. '1h30m')"),
    ("@every 1h1h", "interval '1h1h' is malformed: use whole numbers with units d, h, m, s, "
                    "largest first (e.g. '1h30m')"),
    ("@every 5x", "interval '5x' is malformed: use whole numbers with units d, h, m, s, "
                  "largest first (e.g. '1h30m')"),
    ("@every 1w", "interval '1w' is malformed: use whole numbers with units d, h, m, s, "
                  "largest first (e.g. '1h30m')"),
    ("@every 1h 30m", "interval '1h 30m' is malformed: use whole numbers with units d, h, m, "
                      "s, largest first (e.g. '1h30m')"),
    ("@every 367d", "interval '367d' is longer than the maximum of 366 days"),
    ("@every 366d1s", "interval '366d1s' is longer than the maximum of 366 days"),
    ("@every 8785h", "interval '8785h' is longer than the maximum of 366 days"),
]


@pytest.mark.parametrize(("expression", "message"), INTERVAL_ERRORS)
def test_interval_rejections(expression: str, message: str) -> None:
    with pytest.raises(InvalidSchedule) as info:
        parse_schedule(expression, anchor=NOW)
    assert str(info.value) == message


@pytest.mark.parametrize(("expression", "seconds"), [
    ("10m", 600.0), ("@every 10m", 600.0), ("@every 1h30m", 5400.0), ("90s", 90.0),
])
def test_interval_schedule(expression: str, seconds: float) -> None:
    schedule = parse_schedule(expression, anchor=NOW)
    assert (schedule.kind, schedule.interval_seconds) == ("interval", seconds)


def test_interval_keeps_sub_second_anchor() -> None:
    anchor = utc("2026-12-01T10:00:00.25Z")
    schedule = parse_schedule("30s", anchor=anchor)
    assert [f.at for f in schedule.fires(anchor, 2)] == [
        utc("2026-12-01T10:00:30.25Z"), utc("2026-12-01T10:01:00.25Z")]


# --- one-shot @at -------------------------------------------------------------------------
UTC_ZONE, NEW_YORK, PARIS = ZoneInfo("UTC"), ZoneInfo("America/New_York"), ZoneInfo("Europe/Paris")


@pytest.mark.parametrize(("text", "zone", "expected"), [
    ("2026-12-01T09:00:00Z", UTC_ZONE, "2026-12-01T09:00:00Z"),
    ("2026-12-01T09:00:00z", UTC_ZONE, "2026-12-01T09:00:00Z"),
    ("2026-12-01t09:00:00Z", UTC_ZONE, "2026-12-01T09:00:00Z"),
    ("2026-12-01T10:00:00+01:00", UTC_ZONE, "2026-12-01T09:00:00Z"),
    ("2026-12-01T04:00:00-05:00", PARIS, "2026-12-01T09:00:00Z"),
    ("2026-12-01T09:00:00.123456Z", UTC_ZONE, "2026-12-01T09:00:00.123456Z"),
    ("2026-12-01T09:00:00.5Z", UTC_ZONE, "2026-12-01T09:00:00.5Z"),
    ("2026-12-01T10:00:00", PARIS, "2026-12-01T09:00:00Z"),          # CET, UTC+1
    ("2026-07-01T10:00:00", PARIS, "2026-07-01T08:00:00Z"),          # CEST, UTC+2
    ("2026-03-08T03:30:00", NEW_YORK, "2026-03-08T07:30:00Z"),       # just after the gap
])
def test_at_accepted(text: str, zone: ZoneInfo, expected: str) -> None:
    assert parse_at(text, zone, None) == utc(expected)


AT_ERRORS = [
    ("2026-03-08T02:30:00", NEW_YORK, None,
     "local time 2026-03-08T02:30:00 does not exist in America/New_York because of a DST "
     "change; give an offset or Z"),
    ("2026-11-01T01:30:00", NEW_YORK, None,
     "local time 2026-11-01T01:30:00 is ambiguous in America/New_York because of a DST "
     "change; give an offset or Z"),
    ("2020-01-01T00:00:00Z", UTC_ZONE, NOW,
     "@at instant 2020-01-01T00:00:00Z is not in the future"),
    ("2026-12-01T10:00:00Z", UTC_ZONE, NOW,
     "@at instant 2026-12-01T10:00:00Z is not in the future"),
    ("", UTC_ZONE, None, "instant is missing after @at (e.g. '@at 2026-12-01T09:00:00Z')"),
    ("tomorrow", UTC_ZONE, None,
     "'tomorrow' is not an RFC 3339 date-time such as 2026-12-01T09:00:00Z"),
    ("2026-12-01", UTC_ZONE, None,
     "'2026-12-01' is not an RFC 3339 date-time such as 2026-12-01T09:00:00Z"),
    ("2026-12-01T09:00:00.1234567Z", UTC_ZONE, None,
     "'2026-12-01T09:00:00.1234567Z' is not an RFC 3339 date-time such as 2026-12-01T09:00:00Z"),
    ("2026-12-01T09:00Z", UTC_ZONE, None,
     "'2026-12-01T09:00Z' is not an RFC 3339 date-time such as 2026-12-01T09:00:00Z"),
    ("2026-02-30T00:00:00Z", UTC_ZONE, None, "'2026-02-30T00:00:00Z' is not a valid date and time"),
    ("2026-12-01T25:00:00Z", UTC_ZONE, None, "'2026-12-01T25:00:00Z' is not a valid date and time"),
    ("2500-01-01T00:00:00Z", UTC_ZONE, None,
     "@at instant 2500-01-01T00:00:00+00:00 is outside the supported range 1900-2399"),
]


@pytest.mark.parametrize(("text", "zone", "now", "message"), AT_ERRORS)
def test_at_rejections(text: str, zone: ZoneInfo, now: datetime | None, message: str) -> None:
    with pytest.raises(InvalidSchedule) as info:
        parse_at(text, zone, now)
    assert str(info.value) == message


def test_at_schedule_fires_once() -> None:
    schedule = parse_schedule("@at 2026-12-01T10:05:00Z", anchor=NOW, now=NOW)
    at = datetime(2026, 12, 1, 10, 5, tzinfo=UTC)
    assert (schedule.kind, schedule.next_fire(NOW), schedule.next_fire(at)) == ("at", at, None)


def test_naive_instants_raise_value_error() -> None:
    with pytest.raises(ValueError, match="must be timezone-aware"):
        parse_schedule("* * * * *", anchor=datetime(2026, 12, 1, 10, 0))
