"""More of the outside verifier's findings on issue 26 (F7, F8): the grammar a string was
meant for gives its message, a time said twice is refused, a calendar event is kept exactly
as given, and a crontab line cron itself refuses is not imported."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from core.declarative.crontab import import_crontab
from core.schedule import parse_schedule
from core.schedule.words import PhraseError

ANCHOR = datetime(2026, 1, 20, 10, 17, tzinfo=UTC)


@pytest.mark.parametrize(("phrase", "expression"), [
    ("monday 9:00 pm", "0 21 * * 1"),  # was "unknown time zone 'pm'"
    ("Mon 9:00 p.m.", "0 21 * * 1"),
])
def test_am_pm_after_a_time_is_the_phrase_s(phrase, expression):
    assert parse_schedule(phrase, "UTC", anchor=ANCHOR).expression == expression


@pytest.mark.parametrize(("phrase", "word"), [
    ("every day at 9am...", "9am..."),  # was "fractional seconds"
    ("day 5pm 5pm", "5pm"),  # the second 5pm was dropped
    ("every day at 9am and 9am", "9am"),
])
def test_phrases_refused_naming_their_word(phrase, word):
    with pytest.raises(PhraseError) as caught:
        parse_schedule(phrase, "UTC", anchor=ANCHOR)
    assert caught.value.word == word, str(caught.value)


def test_the_same_time_for_two_groups_of_days_is_still_read():
    schedule = parse_schedule("at 9am on mondays and at 9am on fridays", "UTC", anchor=ANCHOR)
    assert schedule.expression == "0 9 * * 1,5"


@pytest.mark.parametrize("text", ["Mon 09:00\r\nTue 10:00", "Mon\u00a009:00"])
def test_a_calendar_event_is_kept_exactly_as_given(text):
    schedule = parse_schedule(text, "UTC", anchor=ANCHOR)
    assert schedule.expression == text
    again = parse_schedule(schedule.expression, "UTC", anchor=ANCHOR)
    assert again.fires(ANCHOR, 5) == schedule.fires(ANCHOR, 5)


@pytest.mark.parametrize("fields", ["0 0 L * *", "0 0 1W * *", "0 0 * * 5#2", "0 0 * * 5L",
                                    "0 0 ? * 1"])
def test_crontab_lines_cron_refuses_are_not_imported(fields):
    imported = import_crontab(f"{fields} curl https://a.example/\n"
                              "0 9 * * MON-FRI curl https://b.example/\n")
    assert [job["schedule"] for job in imported.document["jobs"]] == ["0 9 * * MON-FRI"]
    assert imported.report[0].startswith("line 1: ") and "Vixie cron and cronie refuse" in \
        imported.report[0]
