"""The unit layer's property tests, and the what-if replay's, at full length (marked ``long``).

``tests/integration/test_replay_property.py`` and ``tests/integration/test_replay_jobs.py``
run their properties (the replay of the current definition equals what the live paths
recorded, on real PostgreSQL) with a few dozen examples; here with several hundred, same
strategies, same checks (their fixtures come along: ``job_worker``).
``tests/unit`` runs each hypothesis property with a few examples, the generated OnCalendar
differential with half its expressions, every third misspelling of the suggestion rule and
the fires of a phrase only where its canonical form is not the expected expression, so
that the unit layer stays short (docs/architecture.md, "Tests"); here the same tests run again
with the example counts (and expressions) they had before, same strategies, same checks.
``uv run pytest`` (the README's command, the one .ci/run runs) runs them;
``uv run pytest -m "not long"`` leaves them out, ``uv run pytest -m long`` runs only them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings

from tests.integration import test_replay_jobs as replay_jobs
from tests.integration import test_replay_property as replay_monitors
from tests.integration.test_replay_jobs import job_worker  # noqa: F401  # a fixture they use
from tests.unit import test_advice_skipping as advice_skipping
from tests.unit import test_oncalendar_systemd as oncalendar
from tests.unit import test_peaks as peaks
from tests.unit import test_phrase_properties as phrases
from tests.unit import test_schedule_engine as engine
from tests.unit import test_schedule_read_or_refused as refusals
from tests.unit import test_schedule_words as phrase_table
from tests.unit import test_schedule_words_property as words

pytestmark = pytest.mark.long


def at_length(test: Callable[..., Any], max_examples: int) -> Callable[..., Any]:
    """``test`` (a ``@given`` test) with its own settings but ``max_examples`` examples."""
    own = test._hypothesis_internal_use_settings  # type: ignore[attr-defined]  # set by @settings
    strategies = test.hypothesis._given_kwargs  # type: ignore[attr-defined]  # set by @given
    inner = test.hypothesis.inner_test  # type: ignore[attr-defined]  # the undecorated test
    return given(**strategies)(settings(own, max_examples=max_examples)(inner))


test_the_description_read_back_fires_the_same = at_length(
    words.test_the_description_read_back_fires_the_same, 300)
test_any_text_is_read_or_refused_with_a_message = at_length(
    words.test_any_text_is_read_or_refused_with_a_message, 2000)
test_generated_phrases_fire_as_their_words_say = at_length(
    phrases.test_generated_phrases_fire_as_their_words_say, 80)
test_five_fields_match_reference_across_dst = at_length(
    engine.test_five_fields_match_reference_across_dst, 100)
test_five_fields_with_day_rules_match_reference = at_length(
    engine.test_five_fields_with_day_rules_match_reference, 100)
test_six_fields_match_reference_around_dst = at_length(
    engine.test_six_fields_match_reference_around_dst, 60)
test_day_rules_match_reference_over_years = at_length(
    engine.test_day_rules_match_reference_over_years, 100)
test_month_edge_day_rules_match_reference = at_length(
    engine.test_month_edge_day_rules_match_reference, 100)
test_fires_chain_is_consistent = at_length(engine.test_fires_chain_is_consistent, 100)
test_interval_property = at_length(engine.test_interval_property, 100)
test_replaying_a_monitor_reproduces_what_was_recorded = at_length(
    replay_monitors.test_replaying_the_current_definition_reproduces_the_recorded_transitions,
    400)
test_replaying_a_job_reproduces_the_queued_alerts = at_length(
    replay_jobs.test_replaying_the_current_rules_reproduces_the_queued_alerts, 100)
test_replaying_a_job_with_bounds_and_parents_reproduces_the_alerts = at_length(
    replay_jobs.test_replaying_the_current_bounds_alert_on_and_parents_reproduces_the_alerts,
    200)


def test_generated_calendar_events_fire_as_systemd_says() -> None:
    """tests/unit/test_oncalendar_systemd.py's differential at its former length: 60 generated
    expressions (the unit layer compares the first 30)."""
    problems = oncalendar.differential(seed=26, count=60)
    assert not problems, f"{len(problems)} differences, first ones:\n" + "\n".join(problems[:20])


def test_every_misspelling_suggests_the_right_words() -> None:
    """tests/unit/test_schedule_read_or_refused.py's suggestion rule over every misspelling of
    every phrase (the unit layer tries every third)."""
    assert refusals.check_misspellings() >= 40


@pytest.mark.parametrize(("phrase", "expected"), phrase_table.PHRASES)
def test_phrase_fires_like_the_expression_a_person_would_write(phrase: str,
                                                               expected: str) -> None:
    """tests/unit/test_schedule_words.py's table with every phrase's fires compared (the unit
    layer compares them where the canonical form is not the expected expression)."""
    phrase_table.check_table_phrase(phrase, expected, every_fire=True)


@pytest.mark.parametrize(("seed", "schedule", "period", "aaf", "recover", "count"),
                         advice_skipping.HISTORIES)
def test_skipping_replays_alert_as_the_full_ones_on_every_history(
        seed: int, schedule: str, period: int, aaf: int, recover: int, count: int) -> None:
    """tests/unit/test_advice_skipping.py's comparison over its five histories at full length,
    not its three quick ones."""
    advice_skipping.test_skipping_replays_alert_as_the_full_ones(seed, schedule, period, aaf,
                                                                 recover, count)


@pytest.mark.parametrize("seed", range(16))
def test_the_peaks_count_equals_the_straightforward_one_at_length(seed: int) -> None:
    """tests/unit/test_peaks.py's differential test over 16 seeds, not its five."""
    peaks.test_the_count_equals_the_straightforward_one_on_generated_jobs(seed)
