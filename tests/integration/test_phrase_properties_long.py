"""The phrase property of ``tests/unit/test_phrase_properties.py`` at length: 400 generated
phrases a run (English and French) checked by the independent reading, a new sample each run
(not derandomized; hypothesis prints the failing example to reproduce it)."""

import pytest
from hypothesis import given, settings

from tests.unit.test_phrase_properties import EXAMPLE, Spec, _check_phrase

pytestmark = pytest.mark.long  # a long property run, like tests/long


@settings(max_examples=400, deadline=None)
@given(**EXAMPLE)
def test_many_generated_phrases_fire_as_their_words_say(spec: Spec, language: str, style: int,
                                                        zone_name: str) -> None:
    _check_phrase(spec, language, style, zone_name)
