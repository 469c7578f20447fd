"""Schedules in words (core/schedule/words/, docs/schedules.md "Schedules in words").

Every phrase of the table is checked by its next fires, in several zones and from several
fixed instants around DST changes, against the cron expression (or interval) a person would
write for it; both are evaluated by the engine, so the DST rules are the engine's. A phrase's
schedule is its canonical expression's (``parse_schedule`` reads the words, then parses what
they read as), so where the canonical form is the expected expression the two fire the same by
construction and this layer compares fires only where they differ; tests/long compares every
phrase's fires (:func:`check_table_phrase` with ``every_fire=True``).
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from functools import cache

import pytest

from core.schedule import InvalidSchedule, parse_schedule, schedule_text
from core.schedule.words import PhraseError, looks_like_words, parse_phrase

ANCHOR = datetime(2026, 3, 1, 0, 0, 0, 250000, tzinfo=UTC)
ZONES = ("UTC", "Europe/Paris", "America/New_York", "Australia/Sydney")
#: Fixed instants: an ordinary day, the eves of the spring-forward days of Paris and New York,
#: of the fall-back days of Sydney, Paris and New York.
STARTS = (
    datetime(2026, 1, 14, 12, 0, tzinfo=UTC),
    datetime(2026, 3, 7, 22, 0, tzinfo=UTC),
    datetime(2026, 3, 28, 22, 0, tzinfo=UTC),
    datetime(2026, 4, 4, 12, 0, tzinfo=UTC),
    datetime(2026, 10, 24, 22, 0, tzinfo=UTC),
    datetime(2026, 10, 31, 23, 0, tzinfo=UTC),
)
COUNT = 8

PHRASES = [
    # -- English: periods
    ("every minute", "* * * * *"),
    ("every 5 minutes", "*/5 * * * *"),
    ("Every 15 minutes", "*/15 * * * *"),
    ("every 30 minutes", "*/30 * * * *"),
    ("every 7 minutes", "@every 7m"),
    ("every 90 minutes", "@every 90m"),
    ("every second", "* * * * * *"),
    ("every 10 seconds", "*/10 * * * * *"),
    ("every 30 seconds", "*/30 * * * * *"),
    ("every 45 seconds", "@every 45s"),
    ("every hour", "0 * * * *"),
    ("every 2 hours", "@every 2h"),
    ("every 6 hours", "@every 6h"),
    ("every 5 hours", "@every 5h"),
    ("every 1 hour 30 minutes", "@every 1h30m"),
    ("every two hours", "@every 2h"),
    ("every 2h", "@every 2h"),
    # -- English: times of day
    ("every day at 9am", "0 9 * * *"),
    ("every day at 9 am", "0 9 * * *"),
    ("every day at 9 a.m.", "0 9 * * *"),
    ("every day at 9:30 pm", "30 21 * * *"),
    ("every day at 17:30", "30 17 * * *"),
    ("every day at noon", "0 12 * * *"),
    ("every day at midnight", "0 0 * * *"),
    ("daily at 3am", "0 3 * * *"),
    ("at 9", "0 9 * * *"),
    ("noon", "0 12 * * *"),
    ("every day at 12am", "0 0 * * *"),
    ("every day at 12pm", "0 12 * * *"),
    ("every day at 7am and 7pm", "0 7,19 * * *"),
    ("at 7am and 7pm", "0 7,19 * * *"),
    ("at 6:15, 12:15 and 18:15", "15 6,12,18 * * *"),
    ("at 9:00 and 9:30", "0,30 9 * * *"),
    ("every day at 23:59:30", "30 59 23 * * *"),
    ("every day", "0 0 * * *"),
    # -- English: weekdays
    ("every weekday at 9am", "0 9 * * 1-5"),
    ("weekdays at 8:30", "30 8 * * MON-FRI"),
    ("every business day at 6pm", "0 18 * * 1-5"),
    ("every weekend at 10:00", "0 10 * * 0,6"),
    ("on weekends at 11am", "0 11 * * SAT,SUN"),
    ("every monday at 8am", "0 8 * * 1"),
    ("every Monday", "0 0 * * 1"),
    ("mondays at 2:30 pm", "30 14 * * 1"),
    ("every monday, wednesday and friday at 6pm", "0 18 * * 1,3,5"),
    ("every tue and thu at 07:45", "45 7 * * 2,4"),
    ("monday through friday at 9am", "0 9 * * 1-5"),
    ("mon-fri at 9am", "0 9 * * 1-5"),
    ("friday to monday at 20:00", "0 20 * * 5,6,0,1"),
    ("every sunday at midnight", "0 0 * * 0"),
    # -- English: days of the month
    ("on the 1st of every month", "0 0 1 * *"),
    ("on the 15th of every month at 12:00", "0 12 15 * *"),
    ("on the 1st and 15th of every month at 6am", "0 6 1,15 * *"),
    ("every month on the 2nd at 14:30", "30 14 2 * *"),
    ("on the last day of the month", "0 0 L * *"),
    ("on the last day of every month at 23:00", "0 23 L * *"),
    ("on the first monday of the month at 9am", "0 9 * * 1#1"),
    ("on the second tuesday of the month", "0 0 * * 2#2"),
    ("the 3rd friday of every month at 5pm", "0 17 * * 5#3"),
    ("on the last friday of the month at 5pm", "0 17 * * 5L"),
    ("on the first day of the month at 8am", "0 8 1 * *"),
    ("on the 1st or on monday at 9am", "0 9 1 * 1"),
    # -- English: calendar periods, anchored (docs/schedules.md, *Calendar periods*)
    ("every 2 days at 9am", "@every 2d at 09:00"),
    ("every 2nd day at noon", "@every 2d at 12:00"),
    ("every other day", "@every 2d at 00:00"),
    ("every third day at 8:30", "@every 3d at 08:30"),
    ("every 3 days at 9am and 5pm", "@every 3d at 09:00,17:00"),
    ("every other tuesday at 10am", "@every 14d on tue at 10:00"),
    ("every 2 weeks on monday at 9am", "@every 14d on mon at 09:00"),
    ("every 3 weeks", "@every 21d at 00:00"),
    ("on the 1st of every 3 months", "0 0 1 */3 *"),
    # -- English: years and months
    ("every year on March 3 at 10:00", "0 10 3 3 *"),
    ("every year on december 25 at 8am", "0 8 25 12 *"),
    ("every year on 1 january at midnight", "0 0 1 1 *"),
    ("every day in march at noon", "0 12 * 3 *"),
    # -- English: minutes past, windows
    ("every hour at 15 minutes past", "15 * * * *"),
    ("at 15 minutes past the hour", "15 * * * *"),
    ("every hour at minute 45", "45 * * * *"),
    ("every 2 hours at 30 minutes past", "30 0-22/2 * * *"),
    ("every 15 minutes between 9am and 4:45pm on weekdays", "*/15 9-16 * * 1-5"),
    ("every 15 minutes between 9am and 5:45pm", "*/15 9-17 * * *"),
    ("every 2 hours between 8am and 5pm", "0 8-16/2 * * *"),
    ("at 15 minutes past the hour between 9am and 5pm", "15 9-16 * * *"),
    ("every hour between 8:00 and 18:00", "0 8-18 * * *"),
    ("every 10 minutes from 22:00 to 23:59", "*/10 22-23 * * *"),
    # -- French
    ("toutes les minutes", "* * * * *"),
    ("toutes les 5 minutes", "*/5 * * * *"),
    ("toutes les 10 secondes", "*/10 * * * * *"),
    ("toutes les heures", "0 * * * *"),
    ("toutes les 2 heures", "@every 2h"),
    ("toutes les 3 heures", "@every 3h"),
    ("toutes les 4h", "@every 4h"),
    ("tous les jours à 9 h", "0 9 * * *"),
    ("tous les jours a 9h", "0 9 * * *"),
    ("Tous les jours à 9H", "0 9 * * *"),
    ("tous les jours à 9h30", "30 9 * * *"),
    ("tous les jours à 17 h 30", "30 17 * * *"),
    ("tous les jours à midi", "0 12 * * *"),
    ("tous les jours à minuit", "0 0 * * *"),
    ("à 9h", "0 9 * * *"),
    ("chaque jour à 6h et 18h", "0 6,18 * * *"),
    ("chaque lundi", "0 0 * * 1"),
    ("chaque lundi à 8h", "0 8 * * 1"),
    ("tous les lundis et jeudis à 7h15", "15 7 * * 1,4"),
    ("tous les dimanches à 20h", "0 20 * * 0"),
    ("du lundi au vendredi à 9h", "0 9 * * 1-5"),
    ("les jours ouvrés à 8h30", "30 8 * * 1-5"),
    ("les jours ouvrables à 7 h", "0 7 * * 1-5"),
    ("tous les samedis et dimanches à 10h", "0 10 * * 6,0"),
    ("le week-end à 11h", "0 11 * * 0,6"),
    ("le 1er de chaque mois", "0 0 1 * *"),
    ("le 1er de chaque mois à 8 h", "0 8 1 * *"),
    ("le 15 de chaque mois à 12h", "0 12 15 * *"),
    ("le 1er et le 15 de chaque mois à 8h", "0 8 1,15 * *"),
    ("le premier lundi du mois", "0 0 * * 1#1"),
    ("le premier lundi du mois à 10h", "0 10 * * 1#1"),
    ("le deuxième mardi du mois à 14h", "0 14 * * 2#2"),
    ("le dernier vendredi du mois à 18h", "0 18 * * 5L"),
    ("le dernier jour du mois", "0 0 L * *"),
    ("le dernier jour du mois à 23h", "0 23 L * *"),
    ("tous les ans le 3 mars à 10h", "0 10 3 3 *"),
    ("chaque année le 25 décembre à 8h", "0 8 25 12 *"),
    ("toutes les 15 minutes du lundi au vendredi de 9h à 16h45", "*/15 9-16 * * 1-5"),
    ("un jour sur deux à 9h", "@every 2d at 09:00"),
    ("tous les deux jours à 9h", "@every 2d at 09:00"),
    ("tous les 3 jours", "@every 3d at 00:00"),
    ("un mardi sur deux à 10h", "@every 14d on tue at 10:00"),
    ("toutes les 2 semaines le lundi à 9h", "@every 14d on mon at 09:00"),
    ("toutes les heures à la minute 15", "15 * * * *"),
    ("toutes les heures 15 minutes après", "15 * * * *"),
]


@cache  # a third of the expected expressions recur in PHRASES: each read once
def fires(schedule: str, zone: str) -> list[list[datetime]]:
    parsed = parse_schedule(schedule, zone, anchor=ANCHOR)
    return [[f.at for f in parsed.fires(start, COUNT)] for start in STARTS]


def check_table_phrase(phrase: str, expected: str, *, every_fire: bool) -> None:
    """Assert that ``phrase`` reads as words, as its canonical form, and fires as ``expected``
    in every zone of ZONES from every instant of STARTS. With ``every_fire`` False the fires
    are compared only where the canonical form is not ``expected`` itself (the same string
    parsed in the same zone fires the same); the phrase's schedule is checked to be its
    canonical form's either way."""
    assert looks_like_words(phrase)
    assert not looks_like_words(expected)
    parsed = parse_schedule(phrase, "Europe/Paris", anchor=ANCHOR)
    canonical = parse_phrase(phrase).canonical
    assert parsed.text == phrase.strip()
    assert parsed.expression == canonical
    assert not looks_like_words(parsed.expression)
    assert dataclasses.replace(parsed, text=None) == parse_schedule(
        canonical, "Europe/Paris", anchor=ANCHOR)
    if every_fire or canonical != expected:
        for zone in ZONES:
            assert fires(phrase, zone) == fires(expected, zone), (phrase, zone)


def test_the_table_is_large_and_bilingual() -> None:
    languages = [parse_phrase(phrase).language for phrase, _ in PHRASES]
    assert len(PHRASES) >= 80
    assert languages.count("fr") >= 30 and languages.count("en") >= 50


@pytest.mark.parametrize(("phrase", "expected"), PHRASES)
def test_phrase_fires_like_the_expression_a_person_would_write(phrase: str,
                                                               expected: str) -> None:
    check_table_phrase(phrase, expected, every_fire=False)


def test_canonical_form_is_what_a_person_writes() -> None:
    read = {phrase: parse_phrase(phrase).canonical for phrase in (
        "every weekday at 9:30 am", "toutes les 5 minutes", "every 90 minutes",
        "le dernier jour du mois à 23h", "every 15 minutes between 9am and 4:45pm")}
    assert read == {
        "every weekday at 9:30 am": "30 9 * * 1-5", "toutes les 5 minutes": "*/5 * * * *",
        "every 90 minutes": "@every 1h30m", "le dernier jour du mois à 23h": "0 23 L * *",
        "every 15 minutes between 9am and 4:45pm": "*/15 9-16 * * *"}


@pytest.mark.parametrize("expression", [
    "30 2 * * *", "*/30 * * * * *", "0 9 * * MON-FRI", "0 0 L * *", "0 0 15W * *",
    "0 9 * * 5L", "0 9 * * FRIL", "0 0 1 JAN *", "0 0 * * 1#2", "@daily", "@every 1h30m",
    "90s", "10m", "1h", "9h", "2d", "@at 2026-12-01T09:00:00Z", "0 0 * * MONDAY",
    "* * * JANUARY *", "* * * *", "hello", "0 0 * * * \u00e9", "*\u00a0* * * *", "daily at",
])
def test_canonical_strings_are_never_read_as_words(expression: str) -> None:
    if expression == "daily at":  # words: reported by the phrase reader, not as cron
        assert looks_like_words(expression)
        return
    assert not looks_like_words(expression)


def test_canonical_schedules_keep_their_text_and_messages() -> None:
    parsed = parse_schedule("  0 9 * * MON-FRI ", "UTC", anchor=ANCHOR)
    assert parsed.expression == "0 9 * * MON-FRI" and parsed.text is None
    with pytest.raises(InvalidSchedule, match="'MONDAY' is not a valid value"):
        parse_schedule("0 0 * * MONDAY", "UTC", anchor=ANCHOR)
    with pytest.raises(InvalidSchedule, match="'hello' is not a schedule"):
        parse_schedule("hello", "UTC", anchor=ANCHOR)


@pytest.mark.parametrize(("phrase", "word", "message", "suggestion"), [
    ("at 25h", "25h", "hour 25 does not exist (0-23)", None),
    ("every day at 25:00", "25:00", "hour 25 does not exist", None),
    ("every day at 13pm", "13pm", "hour 13 does not exist on a 12-hour clock", None),
    ("every day at 9:75", "9:75", "minute 75 does not exist", None),
    ("tous les jours à 25 h", "25 h", "hour 25 does not exist", None),
    ("every 0 minutes", "0", "a period of 0 is impossible", None),
    ("toutes les 0 minutes", "0", "a period of 0 is impossible", None),
    ("the 32nd", "32nd", "day 32 of the month does not exist (1-31)", None),
    ("le 32 de chaque mois", "32", "day 32 of the month does not exist", None),
    ("the 6th monday of the month", "6th", "no weekday number 6", None),
    ("every dya at 9am", "dya", "not understood", "every day at 9am"),
    ("evry monday at 9am", "evry", "not understood", "every monday at 9am"),
    ("tous les jours à 9h tapantes", "tapantes", "not understood", None),
    ("chaque lundii à 8h", "lundii", "not understood", "chaque lundi à 8h"),
    ("every day at 7am and 7:30pm", "7:30pm", "cannot hold the times 07:00, 19:30", None),
    ("every 5 minutes at 9am", "9am", "cannot both hold", None),
    ("on the 1st and every monday", "monday", "say 'or'", None),
    ("every 7 minutes on weekdays", "7", "can only be an interval", None),
    ("every week", "week", "a week has no first day", None),
    ("weekly at 9am", "weekly", "say which day", None),
    ("every day at 9am pm", "pm", "needs a number or a time in front of it", None),
    ("every 15 minutes between 9:30 and 17:00", "9:30", "start it at 10:00", None),
    ("every 15 minutes between 9am and 5pm", "5pm", "end it at 16:45", None),
    ("toutes les 15 minutes de 9h à 17h", "17h", "end it at 16:45", None),
    ("last", "last", "needs a weekday or 'day'", None),
])
def test_phrases_that_cannot_be_read_name_the_word(
    phrase: str, word: str, message: str, suggestion: str | None
) -> None:
    with pytest.raises(PhraseError) as caught:
        parse_schedule(phrase, "UTC", anchor=ANCHOR)
    assert caught.value.word == word
    assert message in str(caught.value)
    assert f"{word!r}" in str(caught.value)
    assert caught.value.suggestion == suggestion
    if suggestion and looks_like_words(suggestion):  # the nearest reading reads
        parse_schedule(suggestion, "UTC", anchor=ANCHOR)


def test_impossible_dates_are_reported_with_the_reading() -> None:
    with pytest.raises(InvalidSchedule, match="reads as '0 0 30 2 \\*'.*never occurs in Feb"):
        parse_schedule("every year on february 30", "UTC", anchor=ANCHOR)


def test_a_bad_zone_is_reported_as_such() -> None:
    with pytest.raises(InvalidSchedule, match="^unknown time zone 'Mars/Base'"):
        parse_schedule("every day at 9am", "Mars/Base", anchor=ANCHOR)


def test_phrases_are_bounded_like_every_schedule() -> None:
    with pytest.raises(InvalidSchedule, match="the limit is 200"):
        parse_schedule("every day at 9am " * 20, "UTC", anchor=ANCHOR)


def test_schedule_text_is_kept_only_while_it_reads_as_the_schedule() -> None:
    words = parse_schedule("every weekday at 9am", "UTC", anchor=ANCHOR)
    assert schedule_text(words) == "every weekday at 9am"
    same = parse_schedule("0 9 * * 1-5", "Europe/Paris", anchor=ANCHOR)
    other = parse_schedule("0 10 * * 1-5", "UTC", anchor=ANCHOR)
    assert schedule_text(same, "every weekday at 9am") == "every weekday at 9am"
    assert schedule_text(other, "every weekday at 9am") is None
    assert schedule_text(same, None) is None
    assert schedule_text(same, "not a phrase at all, zzz") is None


@pytest.mark.parametrize("word", ["minutely", "hourly", "daily", "weekly", "monthly", "yearly",
                                  "annually", "quarterly", "semiannually", "Monday", "mon,fri",
                                  "17:30"])
def test_whole_calendar_events_are_read_by_systemds_grammar_not_as_words(word: str) -> None:
    """A string systemd's calendar grammar reads whole is a calendar event (docs/schedules.md,
    *Which grammar reads a string*): ``weekly`` is Monday 00:00, as in systemd and healthchecks,
    and ``hourly`` fires once in a repeated hour."""
    parsed = parse_schedule(word, "Europe/Paris", anchor=ANCHOR)
    assert parsed.kind == "oncalendar" and parsed.text is None and parsed.expression == word
    assert parse_schedule("weekly", "UTC", anchor=ANCHOR).describe() == "At 00:00, Monday"
