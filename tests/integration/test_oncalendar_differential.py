"""The larger run of the OnCalendar differential against ``systemd-analyze calendar``
(``tests/unit/test_oncalendar_systemd.py`` explains the comparison): 1,500 more generated
calendar events, six zones, bases around both DST changes of each - about 45,000 comparisons
of five fires each, about 30 s."""

from tests.unit.test_oncalendar_systemd import differential


def test_a_large_generated_set_fires_as_systemd_says():
    problems = differential(seed=2026, count=1500)
    assert not problems, f"{len(problems)} differences, first ones:\n" + "\n".join(problems[:20])
