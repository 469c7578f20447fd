"""A description never claims "every N" of fires that are not N apart, and one that reads as
a phrase reads as the same schedule (issue 26, the outside verifier's F5)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest

from core.schedule import InvalidSchedule, parse_schedule

ANCHOR = datetime(2026, 1, 20, 10, 17, tzinfo=UTC)
_UNIT = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}

SCHEDULES = [
    # steps whose fires are not that far apart all round (the last to the first is shorter)
    "0 12 */10 * *", "0 0 */31 * *", "0 0 */2 * *", "*/25 * * * *", "*:0/25", "*:0/59",
    "*:*:0/45", "*/7 * * * * *", "0 */5 * * *", "0 0 * * */2", "0 0 1 */5 *", "40/25 * * * *",
    # steps that are (kept as "every N")
    "*/20 * * * *", "*/15 * * * *", "*/30 * * * * *", "*:0/15", "*:*:0/20",
    # several ordinals of weekdays
    "0 0 * * 2#2,2#4", "0 0 * * 1#1,5L", "0 0 * * 1L,5L", "0 9 * * 1#1,5#1", "0 0 * * 5#1,5L",
    "0 0 * * 0,3#2", "0 0 * * 2#2",
]


def _fires(schedule, start: datetime, count: int) -> list[datetime]:
    return [fire.at for fire in schedule.fires(start, count)]


@pytest.mark.parametrize("expression", SCHEDULES)
def test_every_n_is_said_only_of_fires_n_apart(expression):
    schedule = parse_schedule(expression, "UTC", anchor=ANCHOR)
    description = schedule.describe()
    claims = re.findall(r"(?i)\bevery (\d+) (second|minute|hour|day)s\b", description)
    if len(claims) != 1:
        return
    (n, unit), = claims
    gaps = {b - a for a, b in pairwise(_fires(schedule, ANCHOR, 400))}
    assert gaps == {timedelta(seconds=int(n) * _UNIT[unit])}, (expression, description, gaps)


@pytest.mark.parametrize("expression", SCHEDULES)
def test_a_description_that_reads_reads_as_the_same_schedule(expression):
    schedule = parse_schedule(expression, "UTC", anchor=ANCHOR)
    description = schedule.describe()
    try:
        again = parse_schedule(description, "UTC", anchor=ANCHOR)
    except InvalidSchedule:
        return  # it does not claim a reading
    for start in (ANCHOR, datetime(2026, 2, 27, tzinfo=UTC), datetime(2026, 12, 30, tzinfo=UTC)):
        assert _fires(again, start, 60) == _fires(schedule, start, 60), (expression, description)


@pytest.mark.parametrize(("expression", "words"), [
    ("0 0 * * 2#2,2#4", "the second and fourth Tuesday of the month"),
    ("0 0 * * 1#1,5L", "the first Monday and the last Friday of the month"),
    ("0 12 */10 * *", "day 1, 11, 21, and 31"),
    ("*/25 * * * *", "0, 25, and 50 minutes"),
    ("*:0/25", "minute 0, 25 and 50"),
])
def test_descriptions_name_what_fires(expression, words):
    assert words in parse_schedule(expression, "UTC", anchor=ANCHOR).describe()
