"""Ordinals in phrases are read exactly or refused (issue 26, the outside verifier's F1-F4).

"second" is an ordinal unless it is a period said with "every"; an ordinal applies to every
weekday after it and several ordinals joined by and/or before a weekday are ordinals of that
weekday; the "say 'or'" advice is only given where 'or' says what the words meant; French and
English follow the same rule. Each test asserts the rule on the fires (an independent reading
of the words), not only the canonical string."""

from __future__ import annotations

import calendar
from datetime import UTC, datetime

import pytest

from core.schedule import parse_schedule
from core.schedule.words import PhraseError

ANCHOR = datetime(2026, 1, 20, 10, 17, tzinfo=UTC)


def _fires(phrase: str, count: int = 40) -> list[datetime]:
    schedule = parse_schedule(phrase, "UTC", anchor=ANCHOR)
    return [fire.at for fire in schedule.fires(ANCHOR, count)]


def _nth(day: datetime) -> set[int]:
    """Which weekdays of its month ``day`` is: 1-5 counted from the start, -1 if the last."""
    out = {(day.day - 1) // 7 + 1}
    if (day.day + 7) > _month_length(day):
        out.add(-1)
    return out


def _month_length(day: datetime) -> int:
    return calendar.monthrange(day.year, day.month)[1]


#: phrase -> (weekdays, Python numbering Monday = 0; ordinals of the month, -1 = last)
NTH = {
    "the second and fourth tuesday": ({1}, {2, 4}),
    "the 2nd and 4th tuesday of the month": ({1}, {2, 4}),
    "the 2nd or 4th tuesday of the month": ({1}, {2, 4}),
    "le 1er ou le 3e lundi du mois": ({0}, {1, 3}),
    "le 1er et le 3e lundi du mois": ({0}, {1, 3}),
    "the first or last friday of the month": ({4}, {1, -1}),
    "the first and third friday": ({4}, {1, 3}),
    "the last monday and friday of the month": ({0, 4}, {-1}),
    "le dernier lundi et vendredi du mois": ({0, 4}, {-1}),
    "the first monday and friday of the month": ({0, 4}, {1}),
    "the first monday or friday of the month at 9am": ({0, 4}, {1}),
    "every 2nd and 4th tuesday of the month": ({1}, {2, 4}),
    "the second tuesday of every month": ({1}, {2}),
    "le deuxième mardi du mois": ({1}, {2}),
}


@pytest.mark.parametrize("phrase", sorted(NTH))
def test_every_ordinal_applies_to_every_weekday_after_it(phrase):
    weekdays, ordinals = NTH[phrase]
    fires = _fires(phrase)
    seen = set()
    for at in fires:
        assert at.weekday() in weekdays, (phrase, at)
        which = _nth(at) & ordinals
        assert which, (phrase, at)
        seen |= {(at.weekday(), k) for k in which}
    # and every (weekday, ordinal) the words name fires
    assert seen == {(d, k) for d in weekdays for k in ordinals}, phrase


@pytest.mark.parametrize(("phrase", "days"), [
    ("the second of every month", {2}),
    ("on the second", {2}),
    ("the second of the month at 9am", {2}),
    ("the 1st and 15th of every month", {1, 15}),
    ("le 1er et le 15 de chaque mois", {1, 15}),
])
def test_second_before_anything_but_a_period_is_the_ordinal(phrase, days):
    fires = _fires(phrase, 12)
    assert {at.day for at in fires} == days, phrase
    assert all(at.second == 0 and at.minute == 0 for at in fires)
    assert len({at.date() for at in fires}) == len(fires)  # once a day, never every second


@pytest.mark.parametrize("phrase", ["every second", "every single second", "each second"])
def test_second_after_every_is_the_unit(phrase):
    fires = _fires(phrase, 3)
    assert [(b - a).total_seconds() for a, b in zip(fires, fires[1:], strict=False)] == [1, 1]


@pytest.mark.parametrize(("phrase", "word"), [
    ("la seconde", "seconde"),  # neither "toutes les secondes" nor a day
    ("le seconde", "seconde"),
    # the same rule in both languages: every other Tuesday, or the 2nd of each month?
    ("every second tuesday", "tuesday"),
    ("every 2nd tuesday", "tuesday"),
    ("tous les deuxième mardis", "mardis"),
    ("tous les 2e mardis", "mardis"),
    ("chaque deuxième mardi", "mardi"),
    # the first working day is not read (it is not 'the first or weekdays')
    ("the first weekday of the month", "weekday"),
    ("le premier jour ouvré du mois", "jour ouvré"),
    ("every 2nd and 4th tuesday", "2nd"),
])
def test_ordinals_that_cannot_be_read_exactly_are_refused(phrase, word):
    with pytest.raises(PhraseError) as caught:
        parse_schedule(phrase, "UTC", anchor=ANCHOR)
    assert caught.value.word == word, str(caught.value)
    assert "say 'or'" not in str(caught.value)


@pytest.mark.parametrize("phrase", ["friday the 13th", "on the 13th on fridays",
                                    "the first weekday of the month"])
def test_no_or_advice_where_or_says_something_else(phrase):
    """'friday the 13th' means the days that are both; 'friday or the 13th' fires on either:
    the advice would lead to another schedule, so it is not given."""
    with pytest.raises(PhraseError) as caught:
        parse_schedule(phrase, "UTC", anchor=ANCHOR)
    assert "'or'" not in str(caught.value), str(caught.value)


@pytest.mark.parametrize(("phrase", "advised"), [
    ("on the 1st and every monday", "on the 1st or every monday"),
    ("on the 1st and on mondays at 9am", "on the 1st or on mondays at 9am"),
])
def test_or_advice_reads_as_both_sets_of_days(phrase, advised):
    """Where the advice is given, following it fires on both sets of days the words named."""
    with pytest.raises(PhraseError) as caught:
        parse_schedule(phrase, "UTC", anchor=ANCHOR)
    assert "say 'or'" in str(caught.value)
    fires = _fires(advised, 60)
    assert all(at.day == 1 or at.weekday() == 0 for at in fires)
    assert any(at.day == 1 and at.weekday() != 0 for at in fires)
    assert any(at.weekday() == 0 and at.day != 1 for at in fires)


def test_a_misspelling_suggests_the_ordinal_of_every_weekday():
    with pytest.raises(PhraseError) as caught:
        parse_schedule("the last mondya and friday of the month", "UTC", anchor=ANCHOR)
    assert caught.value.suggestion == "the last monday and friday of the month"
    fires = _fires(caught.value.suggestion)
    assert {at.weekday() for at in fires} == {0, 4}
    assert all(-1 in _nth(at) for at in fires)


@pytest.mark.parametrize(("phrase", "word", "suggestion"), [
    ("on the last fridya of the month", "fridya", "on the last friday of the month"),
    ("every day at noom", "noom", "every day at noon"),
    ("every 5 minuts", "minuts", "every 5 minutes"),
    ("le dernier vendredy du mois", "vendredy", "le dernier vendredi du mois"),
    ("chaque mardi à mdi", "mdi", "chaque mardi à midi"),
])
def test_a_misspelling_after_a_word_that_needs_it_is_blamed(phrase, word, suggestion):
    """Not the word before it ('last', 'at', '5'), which only failed for want of it."""
    with pytest.raises(PhraseError) as caught:
        parse_schedule(phrase, "UTC", anchor=ANCHOR)
    assert (caught.value.word, caught.value.suggestion) == (word, suggestion)
    parse_schedule(suggestion, "UTC", anchor=ANCHOR)
