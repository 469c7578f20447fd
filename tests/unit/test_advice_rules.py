"""The advisor's pure rules (core/advice/rules.py, core/advice/schedules.py): the choice among
replayed candidates, the candidates of a grace, the bounds of durations, and the schedule that
check-ins fit."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from api.schemas.advice import AdviceSuggestion
from core.advice.answer import Outage, Suggestion, WhatIf, Window
from core.advice.rules import (
    Trial,
    choose,
    choose_replaying,
    counted,
    duration_bounds,
    grace_candidates,
    helps,
    percentile,
    seconds_text,
    whole_minutes_above,
)
from core.advice.schedules import offset, other_period, period_text
from core.monitors.definition import monitor_schedule
from core.replay.compare import Incident

T0 = datetime(2026, 9, 1, tzinfo=UTC)
MIN = timedelta(minutes=1)


def _span(start: int, end: int, open_: bool = False) -> Incident:
    return Incident(T0 + start * MIN, T0 + end * MIN, open_, None)


def _real(incident: Incident) -> bool:
    return incident.open or incident.end - incident.start > 10 * MIN


def test_the_most_sensitive_candidate_that_catches_every_outage_without_false_alarms_wins(
) -> None:
    trials = [Trial(1, [_span(0, 2), _span(20, 40)], 2),  # a hiccup and the outage
              Trial(2, [_span(21, 40)], 1),                # the outage only
              Trial(3, [_span(22, 40)], 1),                # the outage, later: a tie
              Trial(4, [], 0)]                             # misses it
    verdict = choose(trials, 1, _real)
    assert verdict.chosen.trial.value == 2
    assert [(j.caught, j.false_alarms) for j in verdict.judged] == [(1, 1), (1, 0), (1, 0),
                                                                     (0, 0)]
    assert verdict.outages == [_span(20, 40)]
    assert choose(trials, 3, _real).chosen.trial.value == 3  # the current value, when tied


def test_an_alert_raised_for_a_hiccup_that_stays_open_into_an_outage_is_still_false() -> None:
    trials = [Trial(1, [_span(0, 2), _span(20, 40)], 2), Trial(3, [_span(0, 40)], 1)]
    verdict = choose(trials, 1, _real)
    assert [j.false_alarms for j in verdict.judged] == [1, 1]
    assert verdict.chosen.trial.value == 1


def test_graces_are_the_whole_minutes_above_each_lateness() -> None:
    assert whole_minutes_above(0) == 60 and whole_minutes_above(60) == 120
    assert whole_minutes_above(59.9) == 60
    assert grace_candidates([10, 10, 300, 600, -5, 18010], 60, 10**6) == [60, 360, 660, 18060]
    assert grace_candidates([], 90, 10**6) == [90]
    many = grace_candidates([60 * n + 1 for n in range(100)], 30, 10**6)
    assert len(many) <= 25 and many[0] == 30 and many[-1] == 100 * 60


def test_duration_bounds() -> None:
    assert duration_bounds([120, 230, 150], 10**6) == (360, 60)
    assert duration_bounds([1, 2, 3], 10**6) == (60, None)  # too quick for a minimum
    assert duration_bounds([1000], 600) == (600, 500)


def test_words_of_figures() -> None:
    assert [seconds_text(s) for s in (42, 1.5, 900, 3600, 5400, 86400, 90000)] == [
        "42 s", "1.5 s", "15 min", "1 h", "1.5 h", "1 d", "1.0 d"]
    # under two minutes in whole seconds (issue 32: every 5 s was said "1m")
    assert [period_text(s) for s in (3600, 86400, 5400, 20, 5.004, 0.4, 90, 119.6, 170)] == [
        "1h", "1d", "90m", "20s", "5s", "1s", "90s", "2m", "3m"]
    assert percentile([3, 1, 2], 50) == 2 and percentile([5], 99) == 5


def test_a_schedule_is_fitted_only_from_a_consistent_pattern() -> None:
    daily = monitor_schedule("1d", "UTC", T0)
    hourly = [T0 + timedelta(hours=n) for n in range(12)]
    fit = other_period(hourly, daily)
    assert fit is not None and fit.schedule == "1h"
    assert other_period(hourly[:10], daily) is None  # 9 gaps: too few
    ragged = [T0 + timedelta(hours=n * n) for n in range(12)]
    assert other_period(ragged, daily) is None
    assert other_period(hourly, monitor_schedule("50m", "UTC", T0)) is None  # close enough
    every_5s = [T0 + timedelta(seconds=5 * n) for n in range(12)]
    fit = other_period(every_5s, monitor_schedule("1m", "UTC", T0))
    assert fit is not None and fit.schedule == "5s"
    # the closest period said is the configured one: nothing to suggest (issue 32)
    twice_a_second = [T0 + timedelta(seconds=n / 2) for n in range(12)]
    assert other_period(twice_a_second, monitor_schedule("1s", "UTC", T0)) is None
    cron = monitor_schedule("0 3 * * *", "UTC", T0)
    assert offset([900 + n for n in range(10)], cron).schedule == "15 3 * * *"  # type: ignore[union-attr]
    assert offset([60 + n for n in range(10)], cron) is None  # a minute late: grace's job
    assert offset([900] * 5 + [3000] * 5, cron) is None  # not consistent
    assert offset([3540] * 10, monitor_schedule("30 3 * * *", "UTC", T0)) is None  # past :59


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 100), st.integers(0, 30), st.booleans()),
                         max_size=4), min_size=1, max_size=5), st.data())
def test_the_winner_catches_most_outages_and_then_has_fewest_false_alarms(
    spans: list[list[tuple[int, int, bool]]], data: st.DataObject,
) -> None:
    trials = [Trial(n, sorted((_span(a, a + d, o) for a, d, o in mine),
                              key=lambda i: i.start), len(mine))
              for n, mine in enumerate(spans)]
    current = data.draw(st.integers(0, len(trials) - 1))
    verdict = choose(trials, current, _real)
    chosen = verdict.chosen
    assert all(chosen.caught >= j.caught for j in verdict.judged)
    assert all(chosen.false_alarms <= j.false_alarms for j in verdict.judged
               if j.caught == chosen.caught)
    if (verdict.current.caught, verdict.current.false_alarms) == (chosen.caught,
                                                                    chosen.false_alarms):
        assert chosen.trial.value == current  # never a change for nothing


def test_a_bound_helps_only_when_it_alerts_on_more_outages_or_fewer_false_alarms() -> None:
    hung = [_span(0, 30)]  # a run that hung: the outage
    same = choose([Trial(60, [_span(5, 30)], 1), Trial(None, [_span(5, 30)], 1)], None, _real)
    assert not helps(same, 60)
    caught = choose([Trial(60, hung, 1), Trial(None, [], 0)], None, _real)
    assert helps(caught, 60) and caught.chosen.trial.value == 60
    quieter = choose([Trial(60, [_span(0, 2)], 1), Trial(None, [_span(0, 2), _span(5, 6)], 2)],
                     None, _real)
    assert helps(quieter, 60)  # fewer false alarms than no bound
    noisier = choose([Trial(60, [_span(0, 2), _span(5, 6)], 2), Trial(None, [_span(0, 2)], 1)],
                     None, _real)
    assert not helps(noisier, 60)


_spans = st.lists(st.tuples(st.integers(0, 100), st.integers(0, 30)).map(
    lambda p: _span(p[0], p[0] + p[1])), max_size=4).map(
    lambda spans: sorted(spans, key=lambda s: (s.start, s.end)))


@given(st.lists(st.one_of(st.none(), _spans), min_size=1, max_size=6), st.data())
@settings(max_examples=300, deadline=None)
def test_replaying_only_what_can_win_gives_the_verdict_of_every_replay(
        candidates: list[list[Incident] | None], data: st.DataObject) -> None:
    trials = [None if spans is None else Trial(n, spans, len(spans))
              for n, spans in enumerate(candidates)]
    replayable = [t.value for t in trials if t is not None]
    if not replayable:
        return
    current = data.draw(st.sampled_from(replayable))
    replayed: list[int] = []

    def replay(value: int) -> Trial | None:
        replayed.append(value)
        return trials[value]

    flapped = data.draw(st.sampled_from([None, lambda a, b: b.start - a.end <= 5 * MIN]))
    every = choose([t for t in trials if t is not None], current, _real, flapped)
    some = choose_replaying(range(len(trials)), replay, current, _real, flapped)
    assert (some.chosen.trial.value, some.current, some.outages) == (
        every.chosen.trial.value, every.current, every.outages)
    assert len(replayed) <= len(trials) + 1


def test_the_what_if_derives_its_totals_from_the_figures_it_holds() -> None:
    """``real_outages``, ``false_alarms_avoided`` and a suggestion's ``change`` are computed
    from what the answer holds (core/advice/answer.py), so they cannot disagree with it, and
    the API body carries them."""
    spans = [Outage(T0, T0 + MIN, False), Outage(T0 + 9 * MIN, T0 + 20 * MIN, True)]
    better = WhatIf(5, 2, 2, 2, 4, 1, spans)
    assert (better.real_outages, better.false_alarms_avoided) == (2, 3)
    worse = WhatIf(1, 3, 2, 2, 0, 2, spans[:1])
    assert (worse.real_outages, worse.false_alarms_avoided) == (1, 0)  # never below 0
    suggestion = Suggestion("grace_seconds", 60, 660, "why", better)
    assert suggestion.change == {"grace_seconds": 660}
    body = msgspec.to_builtins(msgspec.convert(suggestion, AdviceSuggestion,
                                               from_attributes=True))
    assert body["change"] == {"grace_seconds": 660}
    assert (body["what_if"]["real_outages"], body["what_if"]["false_alarms_avoided"]) == (2, 3)


def test_a_proposal_of_values_that_never_changed_replays_once() -> None:
    """core/advice/answer.py:trial_key: the current value of each field examined is one replay
    (the recorded definition's) unless an edit in the window changed that field."""
    from dataclasses import dataclass

    from core.advice.answer import constant_fields, trial_key

    @dataclass(frozen=True)
    class State:
        grace_seconds: int
        alert_after_failures: int

    constant = constant_fields([State(60, 1), State(120, 1)])  # the grace was edited
    assert constant == {"alert_after_failures": 1}
    assert trial_key("alert_after_failures", 1, {"alert_after_failures": 1}, constant) == (
        "recorded", None)
    assert trial_key("grace_seconds", 120, {"grace_seconds": 120}, constant) == (
        "grace_seconds", 120)
    assert trial_key("alert_after_failures", 2, {"alert_after_failures": 2}, constant) == (
        "alert_after_failures", 2)


def test_counts_in_reasons_are_worded_singular_and_plural() -> None:
    """Issue 32 (outside test): "in the last 1 days"."""
    assert [counted(n, "day") for n in (0, 1, 2)] == ["0 days", "1 day", "2 days"]
    assert counted(1, "check-in") == "1 check-in" and counted(3, "gap") == "3 gaps"
    one = Window(T0, 1, None)
    assert (one.during, one.last) == ("in 1 day", "in the last 1 day")
    assert Window(T0, 30, None).during == "in 30 days"
