"""Property: the English description the engine shows for a cron expression
(``Schedule.describe()``, cron-descriptor's text) read back as words gives the same next fires.

"Complete" descriptions (docs/schedules.md, *Schedules in words*): those in which
cron-descriptor names every restricted field exactly, so that the sentence alone determines the
schedule. The generator below produces exactly the expressions whose descriptions are complete
and which the phrase reader claims to read back:

* time: one minute at one to four hours (``At 07:00 AM and 07:00 PM``); one time with seconds
  (``At 09:30:15 AM``); ``*/N`` seconds or minutes with N dividing 60; every minute; minute M
  of every hour, or of every N hours with N dividing 24 as wall-clock hours (``45 0-21/3``: ``At
  45 minutes past the hour, every 3 hours, between 12:00 AM and 09:59 PM``; the words "every 3
  hours" alone are elapsed time); minute periods and minutes past the hour within an hour
  range (``between 09:00 AM and 05:59 PM``);
* day of month: any, one to three days, ``L``; month: any, one to three months, a range;
* day of week: any, one to three days, a range, ``D#K``, ``DL``; with a day of the month too
  (cron's OR, which cron-descriptor says as ", or on"), one to three plain days only: before a
  range, ``D#K`` or ``DL`` cron-descriptor drops the "or", and the sentence reads as AND.

Left out because the sentence blurs them (cron-descriptor says "every 15 minutes, starting at
5 minutes past the hour", "between day 1 and 7 of the month", lists of minutes at lists of
hours) or because the reader refuses them on purpose (``W``).
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, note, settings
from hypothesis import strategies as st

from core.schedule import InvalidSchedule, parse_schedule
from core.schedule.vocab import ENGLISH, FRENCH
from core.schedule.words import looks_like_words

ANCHOR = datetime(2026, 3, 1, tzinfo=UTC)
STARTS = (datetime(2026, 1, 14, 12, 0, tzinfo=UTC), datetime(2026, 10, 24, 22, 0, tzinfo=UTC))
ZONES = ("UTC", "Europe/Paris", "America/New_York", "Australia/Sydney")
DIVISORS_60 = (2, 3, 4, 5, 6, 10, 12, 15, 20, 30)
DIVISORS_24 = (2, 3, 4, 6, 8, 12)


def _values(low: int, high: int, most: int) -> st.SearchStrategy[str]:
    return st.lists(st.integers(low, high), min_size=1, max_size=most, unique=True).map(
        lambda v: ",".join(str(x) for x in sorted(v)))


def _range(low: int, high: int) -> st.SearchStrategy[str]:
    return st.tuples(st.integers(low, high), st.integers(low, high)).filter(
        lambda p: p[0] < p[1]).map(lambda p: f"{p[0]}-{p[1]}")


_hours_window = st.one_of(st.just("*"), _range(0, 23))
TIMES = st.one_of(
    st.tuples(st.integers(0, 59), _values(0, 23, 4)).map(lambda t: f"{t[0]} {t[1]}"),
    st.tuples(st.integers(1, 59), st.integers(0, 59), st.integers(0, 23)).map(
        lambda t: f"{t[0]} {t[1]} {t[2]}"),
    st.sampled_from(DIVISORS_60).map(lambda n: f"*/{n} * *"),
    st.tuples(st.sampled_from(DIVISORS_60), _hours_window).map(lambda t: f"*/{t[0]} {t[1]}"),
    _hours_window.map(lambda h: f"* {h}"),
    st.tuples(st.integers(0, 59), _hours_window).map(lambda t: f"{t[0]} {t[1]}"),
    # hour steps as wall-clock times (0-22/2); the words "every 2 hours" alone are elapsed
    # time (docs/schedules.md), so the description of '*/2' does not read back as it
    st.tuples(st.integers(0, 59), st.sampled_from(DIVISORS_24)).map(
        lambda t: f"{t[0]} 0-{24 - t[1]}/{t[1]}"),
)
DOMS = st.one_of(_values(1, 28, 3), st.just("L"))
MONTHS = st.one_of(st.just("*"), _values(1, 12, 3), _range(1, 12))
DOWS = st.one_of(
    st.just("*"), _values(0, 6, 3), _range(0, 6),
    st.tuples(st.integers(0, 6), st.integers(1, 5)).map(lambda t: f"{t[0]}#{t[1]}"),
    st.integers(0, 6).map(lambda d: f"{d}L"),
)
#: (day of month, day of week): with both restricted, cron-descriptor says "or" only before
#: plain weekdays ("on day 1 of the month, or on Monday"; a range or ``1#2`` loses it).
DAYS = st.one_of(
    st.tuples(st.just("*"), DOWS),
    st.tuples(DOMS, st.one_of(st.just("*"), _values(0, 6, 3))),
)


def _fires(expression: str, zone: str) -> list[list[datetime]]:
    schedule = parse_schedule(expression, zone, anchor=ANCHOR)
    return [[f.at for f in schedule.fires(start, 6)] for start in STARTS]


@settings(max_examples=15, deadline=None, derandomize=True)  # 300 in tests/long
@given(time=TIMES, days=DAYS, month=MONTHS)
def test_the_description_read_back_fires_the_same(time: str, days: tuple[str, str],
                                                  month: str) -> None:
    expression = f"{time} {days[0]} {month} {days[1]}"
    description = parse_schedule(expression, "UTC", anchor=ANCHOR).describe()
    note(f"{expression!r} is described as {description!r}")
    assert looks_like_words(description)
    read = parse_schedule(description, "UTC", anchor=ANCHOR)
    note(f"read back as {read.expression!r}")
    for zone in ZONES:
        assert _fires(read.expression, zone) == _fires(expression, zone), zone


_WORDS = sorted({*ENGLISH.words, *FRENCH.words, "9am", "17:30", "9h30", "25h", "0", "32nd",
                 "1st", "15", "2", "7", "90", "à", "L", "*", "@every"} - {"_"})
_PHRASE = st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12).map(" ".join)


@settings(max_examples=30, deadline=None, derandomize=True)  # 2000 in tests/long
@given(text=st.one_of(_PHRASE, st.text(max_size=60)))
def test_any_text_is_read_or_refused_with_a_message(text: str) -> None:
    """No input makes the reader fail otherwise than with InvalidSchedule (a 422), and
    whatever it reads is a valid canonical schedule."""
    try:
        schedule = parse_schedule(text, "Europe/Paris", anchor=ANCHOR, now=ANCHOR)
    except InvalidSchedule as exc:
        assert str(exc)
        return
    assert schedule.kind == "oncalendar" or not looks_like_words(schedule.expression)
    again = parse_schedule(schedule.expression, "Europe/Paris", anchor=ANCHOR, now=ANCHOR)
    assert again.kind == schedule.kind and again.expression == schedule.expression
