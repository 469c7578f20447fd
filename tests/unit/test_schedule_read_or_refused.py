"""Never silently wrong about a schedule (issue 26, the verifier's findings): a phrase is read
with every word placed, or refused with a 422 that names a word it could not use; a suggestion
is a misspelling corrected, which reads as the right words read, or none; descriptions and
exports read back to the same fires.

Each finding is a case of one of these rules, and the rule is what the tests assert."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest

from core.schedule import InvalidSchedule, parse_schedule
from core.schedule.words import PhraseError

ANCHOR = datetime(2026, 1, 20, 10, 17, tzinfo=UTC)
#: the two DST changes of 2026 in Paris and New York, with a day on each side
DST_DAYS = {"Europe/Paris": (datetime(2026, 3, 28, tzinfo=UTC), datetime(2026, 10, 24, tzinfo=UTC)),
            "America/New_York": (datetime(2026, 3, 7, tzinfo=UTC),
                                 datetime(2026, 10, 31, tzinfo=UTC))}


def _refused_naming_a_word(phrase: str, zone: str = "UTC") -> PhraseError:
    """The rule for a phrase that cannot be read exactly: a PhraseError (422) naming, as
    written, a word of the phrase."""
    with pytest.raises(PhraseError) as caught:
        parse_schedule(phrase, zone, anchor=ANCHOR)
    error = caught.value
    assert error.word and all(part in phrase for part in error.word.split()), (phrase, error)
    assert repr(error.word) in str(error)
    return error


@pytest.mark.parametrize(("phrase", "word"), [
    # accepted with a wrong meaning before
    ("every 15 minutes after", "after"),  # was :15 past each hour
    ("every day and every monday", "every day"),  # was Mondays only
    ("every monday year 5pm", "year"),  # was Mondays of January
    ("yearly weekday at 9:30 am", "yearly"),  # was weekdays of January
    ("mar the 1st of every month", "mar"),  # was 1 March only
    ("every day at 9am monday", "every day"),  # was Mondays only
    # a contradiction accepted as a union
    ("every weekday on saturday", "saturday"),  # was Monday to Saturday
    # a word dropped
    ("every day at 9am yearly", "yearly"),  # was every day
    ("every month monthly", "monthly"), ("every 15 minutes past the hour", "past"),
    # the part blamed was the wrong one
    ("1h 30m", "1h 30m"),
    # parts of the day are not times
    ("every morning", "morning"), ("tous les soirs", "soirs"), ("tous les matins", "matins"),
    ("every evening at 7", "evening"),
    # which weekday of the month / which month
    ("every month on monday", "monday"), ("every year on the 15th", "year"),
])
def test_phrases_that_cannot_be_read_exactly_are_refused_naming_the_word(phrase, word):
    error = _refused_naming_a_word(phrase)
    assert word in error.word


@pytest.mark.parametrize(("phrase", "meaning"), [
    ("every single day", "every day"),
    ("every single day at 9am", "0 9 * * *"),
    ("every\u00a0monday at\u202f9am", "every monday at 9am"),
    ("tous les jours à 9\u202fh", "tous les jours à 9 h"),
    ("every day of the month at 9am", "0 9 * * *"),
    ("every monday of the month", "0 0 * * 1"),
    ("the first monday of every month at 9am", "0 9 * * 1#1"),
    ("every year on march 3", "0 0 3 3 *"),
    ("every monday and saturday", "0 0 * * 1,6"),
])
def test_phrases_read_exactly_fire_as_their_meaning(phrase, meaning):
    ours = parse_schedule(phrase, "Europe/Paris", anchor=ANCHOR)
    theirs = parse_schedule(meaning, "Europe/Paris", anchor=ANCHOR)
    assert [f.at for f in ours.fires(ANCHOR, 30)] == [f.at for f in theirs.fires(ANCHOR, 30)]


_BASES = ["every monday at 9am", "every day at noon", "every weekday at 8:30",
          "on the first friday of the month at 6pm", "every other tuesday at 10am",
          "tous les jours à 9h", "chaque lundi à 8h", "le dernier vendredi du mois à 17h",
          "every 3 days at 9am", "every hour at 15 minutes past", "every sunday at midnight",
          "toutes les 15 minutes du lundi au vendredi de 9h à 16h45", "every single day"]


def _misspellings(phrase: str) -> list[str]:
    """Each word of four letters or more with one letter dropped, doubled, swapped with the
    next or replaced by its neighbour in the alphabet."""
    words = phrase.split()
    out = []
    for i, word in enumerate(words):
        if len(word) < 4 or not word.isalpha():
            continue
        for k in range(len(word)):
            for typo in (word[:k] + word[k + 1:], word[:k] + word[k] * 2 + word[k + 1:],
                         word[:k] + word[k + 1:k + 2] + word[k] + word[k + 2:],
                         word[:k] + chr(ord(word[k]) + 1) + word[k + 1:]):
                if typo != word:
                    out.append(" ".join([*words[:i], typo, *words[i + 1:]]))
    return out


def test_a_suggestion_is_a_misspelling_corrected_that_means_the_right_words():
    """The rule for suggestions: offered only when a misspelt word is nearer to one reading
    than to any other; the suggestion reads, and reads as the phrase before the typo. Here
    every third misspelling of each phrase (every kind of typo at every place of a word comes
    round); tests/long/test_properties.py tries them all."""
    assert check_misspellings(3) >= 40


def check_misspellings(every: int = 1) -> int:
    """Check each ``every``-th misspelling of each of ``_BASES`` as the test above says;
    the number of suggestions offered."""
    offered = 0
    for base in _BASES:
        right = parse_schedule(base, "Europe/Paris", anchor=ANCHOR)
        # The fires of each text read once: most typos of a phrase suggest the same words.
        fires = {base: [f.at for f in right.fires(ANCHOR, 20)]}
        for phrase in _misspellings(base)[::every]:
            try:
                read = parse_schedule(phrase, "Europe/Paris", anchor=ANCHOR)
            except PhraseError as exc:
                if exc.suggestion is None:
                    continue
                offered += 1
                if exc.suggestion not in fires:
                    read = parse_schedule(exc.suggestion, "Europe/Paris", anchor=ANCHOR)
                    fires[exc.suggestion] = [f.at for f in read.fires(ANCHOR, 20)]
                assert fires[exc.suggestion] == fires[base], (phrase, exc.suggestion, base)
            except InvalidSchedule:
                continue
            else:  # a typo that is itself a word: it must not read as something else silently
                assert read.expression == right.expression or phrase.split() != base.split()
    return offered


@pytest.mark.parametrize("phrase", ["every single day", "every morning", "tous les soirs",
                                    "tous les matins", "every week", "every 2nd tuesday",
                                    "every 0 minutes", "every 15 minutes between 9am and 5pm"])
def test_no_suggestion_changes_the_meaning(phrase):
    """``every single day`` once suggested 'every nine day', ``morning`` 'fortnight', French
    ``soirs`` 'mois' and ``matin`` 'mai'; guesses between meanings are not offered either."""
    try:
        parse_schedule(phrase, "UTC", anchor=ANCHOR)
    except PhraseError as exc:
        assert exc.suggestion is None, exc.suggestion


@pytest.mark.parametrize("phrase", ["every 2 hours", "every 12 hours", "every 24 hours",
                                    "toutes les 2 heures", "every 6h"])
@pytest.mark.parametrize("zone", ["Europe/Paris", "America/New_York"])
def test_every_n_hours_is_elapsed_time_across_both_dst_changes(phrase, zone):
    """An interval of hours is elapsed time (systemd's OnUnitActiveSec=, Cloud Scheduler's
    "every N hours"): exactly N hours apart through the spring and the autumn change."""
    schedule = parse_schedule(phrase, zone, anchor=ANCHOR)
    hours = int(schedule.interval_seconds // 3600)
    assert schedule.kind == "interval" and f"Every {hours} hours" in schedule.describe()
    for day in DST_DAYS[zone]:
        fires = [f.at for f in schedule.fires(day, 72 // hours + 2)]
        assert {b - a for a, b in pairwise(fires)} == {timedelta(hours=hours)}


@pytest.mark.parametrize("zone", ["Europe/Paris", "America/New_York"])
def test_every_2_hours_on_days_is_those_wall_clock_times_once_each(zone):
    schedule = parse_schedule("every 2 hours on weekdays", zone, anchor=ANCHOR)
    assert schedule.is_fixed_time
    for day in DST_DAYS[zone]:
        fires = schedule.fires(day - timedelta(days=3), 150)
        local = [f.at.astimezone(ZoneInfo(zone)) for f in fires]
        assert all(t.weekday() < 5 for t in local)
        per_day = {d: [t for t in local if t.date() == d] for d in {t.date() for t in local}}
        for times in per_day.values():
            wall = [(t.hour, t.minute) for t in times]
            assert len(set(wall)) == len(wall) <= 12  # once each, none doubled in a fold


def test_a_window_of_hours_starts_at_its_start():
    schedule = parse_schedule("every 2 hours between 9:30am and 5pm", "UTC", anchor=ANCHOR)
    day = datetime(2026, 1, 21, tzinfo=UTC)
    assert [f.at.strftime("%H:%M") for f in schedule.fires(day, 4)] == [
        "09:30", "11:30", "13:30", "15:30"]


@pytest.mark.parametrize(("phrase", "days"), [("tous les quinze jours", 14),
                                              ("tous les 15 jours à 9h", 14),
                                              ("tous les huit jours à 9h", 7)])
def test_french_fortnight_is_fourteen_days(phrase, days):
    fires = parse_schedule(phrase, "Europe/Paris", anchor=ANCHOR).fires(ANCHOR, 12)
    assert {(b.local.date() - a.local.date()).days for a, b in pairwise(fires)} == {days}


@pytest.mark.parametrize(("expression", "described"), [
    ("0 0 * * 0-7", "At 12:00 AM"), ("0 0 * * 5-7", "Sunday and Friday through Saturday"),
    ("0 0 * * 7", "only on Sunday"),
    ("0 0 * * 0,3#2", "on Sunday, and on the second Wednesday of the month"),
    ("0 */2 * * *", "Every 2 hours of the clock"),
])
def test_cron_descriptions_say_what_fires(expression, described):
    text = parse_schedule(expression, "UTC", anchor=ANCHOR).describe()
    assert described in text and "Sunday through Sunday" not in text


_ROUND_TRIP = ["every monday at 9am", "every 2 hours", "every 90 minutes", "every 3 days at 9am",
               "every other tuesday at 10am", "tous les quinze jours", "every weekday at 8:30",
               "le dernier vendredi du mois à 17h", "every 2 hours between 9:30am and 5pm",
               "Mon..Fri 09:00", "*-*~03 05:00", "0 */2 * * *", "@every 14d on tue at 09:00",
               "@every 7m", "30 2 * * *", "every 2 hours on weekdays", "90s", "1h30m",
               "@every 3d at 09:00 from 2026-01-21", "@every 2h from 2026-01-20T10:00:00Z"]


@pytest.mark.parametrize("text", _ROUND_TRIP)
@pytest.mark.parametrize("zone", ["Europe/Paris", "America/New_York"])
def test_round_trip_keeps_the_fires(text, zone):
    """parse -> the stored (exported) form -> parse again fires at the same instants, from
    the anchor and across both DST changes; so does a description that reads back."""
    first = parse_schedule(text, zone, anchor=ANCHOR)
    again = parse_schedule(first.expression, zone, anchor=ANCHOR)
    starts = [ANCHOR, *DST_DAYS[zone]]
    for start in starts:
        assert [f.at for f in first.fires(start, 50)] == [f.at for f in again.fires(start, 50)]
    # the exported form names the anchor: applied later (another anchor), the same fires
    later = ANCHOR + timedelta(days=10, hours=3, seconds=17)
    exported = parse_schedule(first.pinned(), zone, anchor=later)
    for start in [later, *DST_DAYS[zone]]:
        assert [f.at for f in exported.fires(start, 50)] == [
            f.at for f in first.fires(start, 50)], (text, first.pinned())
    try:
        described = parse_schedule(first.describe().removesuffix(f" ({zone})"), zone,
                                   anchor=ANCHOR)
    except InvalidSchedule:
        return  # not every description is a phrase (docs/schedules.md)
    for start in starts:
        assert [f.at for f in itertools.islice(described.fires(start, 30), 30)] == [
            f.at for f in first.fires(start, 30)], (text, first.describe())
