"""Phrases are read exactly or refused (issue 26): the examples that were read wrongly, the
anchored calendar periods, windows with both ends included, and suggestions that read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest

from core.schedule import InvalidSchedule, parse_schedule
from core.schedule.words import PhraseError

ANCHOR = datetime(2026, 3, 20, 10, 0, tzinfo=UTC)  # a Friday, 11:00 in Paris


def _local(schedule: str, zone: str, count: int, anchor: datetime = ANCHOR) -> list[datetime]:
    parsed = parse_schedule(schedule, zone, anchor=anchor)
    return [f.at.astimezone(ZoneInfo(zone)) for f in parsed.fires(anchor, count)]


def test_every_2nd_day_at_noon_is_every_two_days_not_the_2nd_of_the_month() -> None:
    fires = _local("every 2nd day at noon", "Europe/Paris", 20)
    assert all((b.date() - a.date()).days == 2 for a, b in pairwise(fires))
    assert all((f.hour, f.minute) == (12, 0) for f in fires)  # across the DST change of 29 March
    assert fires[0].date().isoformat() == "2026-03-20"  # today: noon is after the anchor
    described = parse_schedule("every 2nd day at noon", "Europe/Paris", anchor=ANCHOR).describe()
    assert described == "At 12:00, every 2 days from Friday 2026-03-20 (Europe/Paris)"


@pytest.mark.parametrize("phrase", ["every 3 days", "every 3 days at 9am", "tous les 3 jours"])
def test_every_3_days_is_three_days_apart_across_month_ends(phrase: str) -> None:
    anchor = datetime(2026, 1, 26, 12, tzinfo=UTC)
    fires = _local(phrase, "America/New_York", 40, anchor)
    assert {(b.date() - a.date()).days for a, b in pairwise(fires)} == {3}
    assert len({(f.hour, f.minute) for f in fires}) == 1  # the same time of day across DST
    # across month ends too: no restart on the 1st, as cron's */3 does
    assert sum(a.month != b.month for a, b in pairwise(fires)) >= 3


@pytest.mark.parametrize(("phrase", "weekday", "weeks"), [
    ("every other tuesday", 1, 2), ("every 2 weeks on monday", 0, 2),
    ("every 3 weeks on friday at 18:00", 4, 3), ("un mardi sur deux", 1, 2),
    ("every fortnight on friday at 5pm", 4, 2),
])
def test_week_periods_fire_on_their_weekday_that_many_weeks_apart(phrase, weekday,
                                                                    weeks) -> None:
    fires = _local(phrase, "Europe/Paris", 12)
    assert {f.weekday() for f in fires} == {weekday}
    assert {(b.date() - a.date()).days for a, b in pairwise(fires)} == {7 * weeks}
    assert "from " in parse_schedule(phrase, "Europe/Paris", anchor=ANCHOR).describe()


def test_a_calendar_period_in_a_dst_gap_fires_at_the_gap_end_like_cron() -> None:
    # Paris, 2026-03-29: 02:00 becomes 03:00. Day 29 is in the series from the 21st.
    fires = parse_schedule("every 2 days at 2:30", "Europe/Paris",
                           anchor=datetime(2026, 3, 20, 12, tzinfo=UTC)).fires(
        datetime(2026, 3, 28, tzinfo=UTC), 3)
    assert [(f.local.isoformat(), f.dst) for f in fires] == [
        ("2026-03-29T03:00:00+02:00", "gap"), ("2026-03-31T02:30:00+02:00", None),
        ("2026-04-02T02:30:00+02:00", None)]


@pytest.mark.parametrize(("phrase", "word"), [
    ("at 9am on mondays and 5pm on fridays", "5pm"),
    ("on mondays at 9am and on fridays at 5pm", "fridays"),
    ("every weekday at 9am, and on saturday at 10am", "saturday"),
    ("le lundi à 9h et le vendredi à 17h", "vendredi"),
])
def test_different_times_on_different_days_are_refused(phrase: str, word: str) -> None:
    with pytest.raises(PhraseError) as caught:
        parse_schedule(phrase, "UTC", anchor=ANCHOR)
    assert caught.value.word == word and "different days" in str(caught.value)


@pytest.mark.parametrize(("phrase", "expected"), [
    ("at 9am on mondays and at 9am on fridays", "0 9 * * 1,5"),
    ("on mondays at 9am and on mondays at 5pm", "0 9,17 * * 1"),
])
def test_groups_that_one_schedule_holds_are_read(phrase: str, expected: str) -> None:
    assert parse_schedule(phrase, "UTC", anchor=ANCHOR).expression == expected


@pytest.mark.parametrize(("phrase", "word"), [
    ("Mon..Fri at 9am", "Mon..Fri"), ("every day at 9am; fridays", "9am;"),
    ("every day at", "at"), ("at 9am and", "and"), ("every the tuesday", "every"),
    ("every weekday sept friday at 9", "sept"), ("every weekday friday at 9", "friday"),
    ("every 2nd tuesday", "tuesday"), ("every (day) at 9am", "(day)"),
    ("every 5 months", "5"),
])
def test_every_word_is_placed_or_the_phrase_is_refused(phrase: str, word: str) -> None:
    with pytest.raises(InvalidSchedule) as caught:
        parse_schedule(phrase, "UTC", anchor=ANCHOR)
    assert word in str(caught.value)


def test_between_9am_and_5pm_ends_at_17_00_inclusive_or_is_refused() -> None:
    midnight = datetime(2026, 3, 20, tzinfo=UTC)
    hourly = _local("every hour between 9am and 5pm", "UTC", 9, midnight)
    assert [f.hour for f in hourly] == [9, 10, 11, 12, 13, 14, 15, 16, 17]  # 17:00 included
    with pytest.raises(PhraseError, match="end it at 16:45") as caught:
        parse_schedule("every 15 minutes between 9am and 5pm", "UTC", anchor=ANCHOR)
    assert caught.value.suggestion is None  # either end changes what was asked: no guess
    quarter = _local("every 15 minutes between 9am and 4:45pm", "UTC", 40, midnight)
    day = [f for f in quarter if f.date() == quarter[0].date()]
    assert (day[0].hour, day[0].minute) == (9, 0) and (day[-1].hour, day[-1].minute) == (16, 45)


def _typos(phrase: str) -> list[str]:
    out = []
    for i, word in enumerate(phrase.split()):
        if len(word) > 3 and word.isalpha():
            for typo in (word[1:], word[:-1] + word[-1] * 2, word[0] + word[2:] if len(word) > 4
                         else word + "x"):
                out.append(" ".join([*phrase.split()[:i], typo, *phrase.split()[i + 1:]]))
    return out


_BASES = ["every monday at 9am", "every day at noon", "every 15 minutes between 9am and 4:45pm",
          "on the first friday of the month at 6pm", "every other tuesday at 10am",
          "every 2 weeks on monday", "tous les jours à 9h", "chaque lundi à 8h",
          "le dernier vendredi du mois à 17h", "un jour sur deux à midi",
          "every weekday at 8:30", "every 3 days at 9am", "every hour at 15 minutes past",
          "every 15 minutes between 9am and 5pm", "every week at 9am", "every 2nd tuesday",
          "every 0 minutes", "toutes les 15 minutes de 9h à 17h"]


def test_every_suggestion_a_refusal_offers_is_read_and_fires_as_the_reader_says() -> None:
    offered = {}
    for phrase in [p for base in _BASES for p in [base, *_typos(base)]]:
        try:
            parse_schedule(phrase, "Europe/Paris", anchor=ANCHOR)
        except PhraseError as exc:
            if exc.suggestion:
                offered[phrase] = exc.suggestion
        except InvalidSchedule:
            pass
    assert len(offered) >= 30
    for phrase, suggestion in offered.items():
        read = parse_schedule(suggestion, "Europe/Paris", anchor=ANCHOR)  # raises if not read
        assert read.fires(ANCHOR, 5), (phrase, suggestion)
        if suggestion in _BASES:  # a typo corrected: the very schedule of the right words
            right = parse_schedule(suggestion, "Europe/Paris", anchor=ANCHOR)
            assert read.expression == right.expression
    assert not [s for s in offered.values() if "every the" in s or "sept friday" in s]


def test_calendar_period_canonical_form_reads_back_the_same() -> None:
    for phrase in ("every other day", "every 2 weeks on monday at 9am", "every 3 days at 9am"):
        read = parse_schedule(phrase, "UTC", anchor=ANCHOR)
        again = parse_schedule(read.expression, "UTC", anchor=ANCHOR)
        assert again.kind == "days" and again.fires(ANCHOR, 10) == read.fires(ANCHOR, 10)
        assert again.expression == read.expression and timedelta(0) < (
            read.next_fire(ANCHOR) - ANCHOR) <= timedelta(days=15)
