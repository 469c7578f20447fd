"""The downtime periods of each day of an uptime bar (core/projections/queries.py,
periods_by_day), found from each period's bounds: the same as testing every period against
every day (started before the day ends, not ended by its start), on generated periods that
start and end on and around midnight, before the first day, after the last, or never end."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

from core.projections.queries import periods_by_day

FIRST = datetime(2026, 11, 3, tzinfo=UTC)
DAYS = 30


def _period(rnd: random.Random) -> dict[str, Any]:
    if rnd.random() < 0.3:  # on a midnight
        start = FIRST + timedelta(days=rnd.randint(-2, DAYS + 1))
    else:
        start = FIRST + timedelta(seconds=rnd.randint(-5 * 86400, (DAYS + 2) * 86400))
    if rnd.random() < 0.2:
        return {"started_at": start, "ended_at": None}
    length = rnd.choice([0, 86400, 2 * 86400, rnd.randint(1, 3 * 86400)])
    return {"started_at": start, "ended_at": start + timedelta(seconds=length)}


def test_each_days_periods_are_those_that_overlap_it() -> None:
    rnd = random.Random(30)
    for _ in range(2000):
        periods = [_period(rnd) for _ in range(rnd.randint(0, 6))]
        by_day = periods_by_day(periods, FIRST, DAYS)
        for n in range(DAYS):
            start, end = FIRST + timedelta(days=n), FIRST + timedelta(days=n + 1)
            assert by_day.get(n, []) == [p for p in periods if p["started_at"] < end and (
                p["ended_at"] is None or p["ended_at"] > start)], (n, periods)
