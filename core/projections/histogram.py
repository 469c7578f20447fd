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

RATIO = 1.1
TOP = 213
_LOG_RATIO = math.log(RATIO)

Histogram = dict[str, int]


def bucket_of(ms: float) -> int:
    """The bucket index of a value in milliseconds (negative values count as 0)."""
    if ms < 1:
        return 0
    return min(TOP, 1 + math.floor(math.log(ms) / _LOG_RATIO))


def add(histogram: Histogram, ms: float | None) -> None:
    """Count one sample (``None`` is ignored) into ``histogram`` in place."""
    if ms is None:
        return
    key = str(bucket_of(ms))
    histogram[key] = histogram.get(key, 0) + 1


def merge(histograms: Iterable[Mapping[str, int]]) -> Histogram:
    """The sum of several histograms."""
    total: Histogram = {}
    for histogram in histograms:
        for key, count in histogram.items():
            total[key] = total.get(key, 0) + int(count)
    return total


def percentile(histogram: Mapping[str, int], q: float) -> int | None:
    """Nearest-rank percentile ``q`` (0 < q <= 1) in ms, or ``None`` for an empty histogram."""
    counts = sorted((int(k), int(v)) for k, v in histogram.items() if int(v) > 0)
    total = sum(v for _, v in counts)
    if total == 0:
        return None
    rank = max(1, math.ceil(q * total))
    seen = 0
    for index, count in counts:
        seen += count
        if seen >= rank:
            return 0 if index == 0 else round(RATIO ** (index - 0.5))
    raise AssertionError("unreachable: the ranks add up to the total")
