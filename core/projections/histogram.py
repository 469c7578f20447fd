"""Latency histograms with fixed, logarithmic bucket edges, so percentiles can be merged.

An exact p50/p95 per job per hour cannot be maintained incrementally, so each bucket of the
read models keeps a sparse histogram ``{"bucket index": count}`` (a jsonb object in the
database). Bucket 0 holds 0 ms; bucket ``i >= 1`` holds values ``v`` with
``RATIO**(i-1) <= v < RATIO**i`` ms; the last bucket, :data:`TOP`, holds everything from
``RATIO**(TOP-1)`` ms (about 6.9 days) up. A percentile is reported as the geometric middle of
the bucket that holds the nearest-rank sample, ``round(RATIO**(i - 0.5))``, so it is within
``sqrt(RATIO) - 1`` (4.9 %) of the exact nearest-rank value, plus 0.5 ms from rounding to
whole milliseconds (exact for 0 ms; the top bucket reports its middle whatever the values).
The SQL twin of :func:`percentile` is ``reporting.histogram_percentile`` (migration 0004);
only this module computes bucket indices.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

RATIO = 1.1
TOP = 213
_LOG_RATIO = math.log(RATIO)

# In Python, keys are bucket indices (ints, so that sorting the items is cheap); in the
# database and in JSON they are the same numbers as text. Functions here accept both.
Histogram = dict[int, int]


def _ints(histogram: Mapping[Any, int]) -> Mapping[int, int]:
    first = next(iter(histogram), 0)
    return histogram if isinstance(first, int) else {int(k): int(v) for k, v in histogram.items()}


def bucket_of(ms: float) -> int:
    """The bucket index of a value in milliseconds (negative values count as 0)."""
    if ms < 1:
        return 0
    return min(TOP, 1 + math.floor(math.log(ms) / _LOG_RATIO))


def add(histogram: Histogram, ms: float | None) -> None:
    """Count one sample (``None`` is ignored) into ``histogram`` in place."""
    if ms is None:
        return
    key = bucket_of(ms)
    histogram[key] = histogram.get(key, 0) + 1


def merge(histograms: Iterable[Mapping[Any, int]]) -> Histogram:
    """The sum of several histograms (keys as ints or as text)."""
    total: Histogram = {}
    for histogram in histograms:
        for key, count in _ints(histogram).items():
            total[key] = total.get(key, 0) + count
    return total


def percentiles(histogram: Mapping[Any, int], qs: tuple[float, ...]) -> list[int | None]:
    """Nearest-rank percentiles ``qs`` (each 0 < q <= 1, ascending) in ms, in one pass;
    ``None`` for each when the histogram is empty."""
    counts = sorted(_ints(histogram).items())
    total = sum(count for _, count in counts)
    if total <= 0:
        return [None] * len(qs)
    ranks = [max(1, math.ceil(q * total)) for q in qs]
    found: list[int | None] = []
    seen = 0
    for index, count in counts:
        seen += count
        while len(found) < len(ranks) and seen >= ranks[len(found)]:
            found.append(0 if index == 0 else round(RATIO ** (index - 0.5)))
        if len(found) == len(ranks):
            break
    return found


def percentile(histogram: Mapping[Any, int], q: float) -> int | None:
    """Nearest-rank percentile ``q`` (0 < q <= 1) in ms, or ``None`` for an empty histogram."""
    return percentiles(histogram, (q,))[0]
