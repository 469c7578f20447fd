"""Retry delays of ``core/backoff.py`` against docs/api.md, "Retries".

Rules checked:

- "The delay after failed attempt *n*: `exponential`: `delay_seconds × 2^(n-1)`; `linear`:
  `delay_seconds × n`; `fixed`: `delay_seconds`; each capped at `max_delay_seconds`, then
  **full jitter**: a uniform draw between 0 and that value";
- "`retry.backoff` ... an unknown name means `fixed`";
- "On **429** and **503** a `Retry-After` header (delay-seconds, or an HTTP-date such as
  `Wed, 30 Dec 2026 12:00:00 GMT`) replaces the backoff, capped at `max_delay_seconds`, without
  jitter. An unparseable value falls back to the backoff."

The jitter source is injected: :class:`Top` returns the upper bound of the draw (so the test
sees the capped delay itself), :class:`Bottom` the lower bound, :class:`NoJitter` fails the
test if it is used at all; a seeded :class:`random.Random` checks the bounds of real draws.
``now`` is always a fixed instant.
"""

from __future__ import annotations

import random

import pytest

from core.backoff import backoff_delay, parse_retry_after, retry_delay
from tests.unit.instants import utc

NOW = utc("2026-12-30T11:58:00Z")


class Top(random.Random):
    """A jitter source that records the range asked for and returns its upper bound."""

    def __init__(self) -> None:
        super().__init__(0)
        self.calls: list[tuple[float, float]] = []

    def uniform(self, a: float, b: float) -> float:
        self.calls.append((a, b))
        return b


class Bottom(random.Random):
    def uniform(self, a: float, b: float) -> float:
        return a


class NoJitter(random.Random):
    def uniform(self, a: float, b: float) -> float:
        raise AssertionError("Retry-After must be used without jitter")


def policy(kind: str, delay: float = 10, cap: float = 300) -> dict:
    return {"backoff": kind, "delay_seconds": delay, "max_delay_seconds": cap}


BACKOFF_ROWS = [
    # (kind, delay_seconds, max_delay_seconds, attempt, capped delay before jitter)
    ("exponential", 10, 300, 1, 10.0),
    ("exponential", 10, 300, 2, 20.0),
    ("exponential", 10, 300, 3, 40.0),
    ("exponential", 10, 300, 4, 80.0),
    ("exponential", 10, 300, 5, 160.0),
    ("exponential", 10, 300, 6, 300.0),    # 320 capped
    ("exponential", 10, 300, 10, 300.0),   # 5120 capped
    ("exponential", 10, 300, 1000, 300.0),  # huge exponent: still the cap, no overflow
    ("exponential", 1, 86400, 10, 512.0),
    ("exponential", 0.5, 300, 3, 2.0),
    ("exponential", 10, 10, 3, 10.0),      # cap equal to the base
    ("exponential", 10, 5, 1, 5.0),        # cap below the base
    ("linear", 10, 300, 1, 10.0),
    ("linear", 10, 300, 2, 20.0),
    ("linear", 10, 300, 5, 50.0),
    ("linear", 10, 300, 30, 300.0),
    ("linear", 10, 300, 31, 300.0),        # 310 capped
    ("linear", 7, 100, 9, 63.0),
    ("fixed", 10, 300, 1, 10.0),
    ("fixed", 10, 300, 9, 10.0),
    ("fixed", 10, 5, 3, 5.0),
    ("banana", 10, 300, 4, 10.0),          # unknown name: fixed
    ("EXPONENTIAL", 10, 300, 4, 10.0),     # names are exact: unknown, so fixed
    ("exponential", 0, 300, 5, 0.0),
    ("linear", 10, 0, 5, 0.0),
]


@pytest.mark.parametrize(("kind", "delay", "cap", "attempt", "expected"), BACKOFF_ROWS)
def test_backoff_delay_before_jitter(kind: str, delay: float, cap: float, attempt: int,
                                     expected: float) -> None:
    rng = Top()
    assert backoff_delay(policy(kind, delay, cap), attempt, rng) == expected
    assert rng.calls == [(0, expected)]  # full jitter: one uniform draw in [0, delay]


@pytest.mark.parametrize(("kind", "attempt"), [("exponential", 4), ("linear", 2), ("fixed", 1)])
def test_full_jitter_can_be_zero(kind: str, attempt: int) -> None:
    assert backoff_delay(policy(kind), attempt, Bottom()) == 0.0


@pytest.mark.parametrize(("kind", "attempt", "ceiling"), [
    ("exponential", 1, 10.0), ("exponential", 3, 40.0), ("exponential", 8, 300.0),
    ("linear", 4, 40.0), ("fixed", 6, 10.0),
])
def test_full_jitter_bounds_with_a_seeded_rng(kind: str, attempt: int, ceiling: float) -> None:
    rng = random.Random(12)
    draws = [backoff_delay(policy(kind), attempt, rng) for _ in range(500)]
    assert all(0.0 <= d <= ceiling for d in draws)
    # uniform over [0, ceiling]: 500 draws cover both halves of the range
    assert min(draws) < ceiling / 4 and max(draws) > ceiling * 3 / 4


def test_seeded_rng_makes_jitter_reproducible() -> None:
    first = [backoff_delay(policy("exponential"), n, random.Random(7)) for n in range(1, 8)]
    again = [backoff_delay(policy("exponential"), n, random.Random(7)) for n in range(1, 8)]
    assert first == again
    assert first[0] == random.Random(7).uniform(0, 10.0)


# --- Retry-After --------------------------------------------------------------------------
RETRY_AFTER_ROWS = [
    ("120", 120.0),
    (" 120 ", 120.0),
    ("0", 0.0),
    ("86400", 86400.0),
    ("Wed, 30 Dec 2026 12:00:00 GMT", 120.0),        # IMF-fixdate, 2 minutes after NOW
    ("Wed, 30 Dec 2026 11:58:00 GMT", 0.0),
    ("Wed, 30 Dec 2026 11:00:00 GMT", 0.0),          # in the past: no wait, never negative
    ("Thu, 31 Dec 2026 11:58:00 GMT", 86400.0),
    ("Wednesday, 30-Dec-26 12:00:00 GMT", 120.0),    # RFC 850 (obsolete HTTP-date)
    (None, None),
    ("", None),
    ("   ", None),
    ("soon", None),
    ("1.5", None),
    ("-5", None),
    ("+5", None),
    ("120s", None),
    ("Wed, 30 Dec 2026 12:00:00", None),              # no zone: not an HTTP-date
    ("Wed Dec 30 12:00:00 2026", 120.0),             # asctime-date: no zone, read as UTC
    ("Wed Dec  1 12:00:00 2027", 336 * 86400 + 120.0),  # asctime pads the day with a space
    ("²", None),                                     # a non-ASCII digit is no delay-seconds
]


@pytest.mark.parametrize(("value", "expected"), RETRY_AFTER_ROWS)
def test_parse_retry_after(value: str | None, expected: float | None) -> None:
    assert parse_retry_after(value, NOW) == expected


RETRY_ROWS = [
    # (status, Retry-After, attempt, expected delay); policy exponential 10 s, cap 300 s
    (429, "120", 1, 120.0),
    (503, "120", 1, 120.0),
    (429, "600", 1, 300.0),                              # capped at max_delay_seconds
    (503, "Wed, 30 Dec 2026 12:00:00 GMT", 3, 120.0),
    (429, "Thu, 31 Dec 2026 11:58:00 GMT", 1, 300.0),    # one day away: capped
    (429, "0", 4, 0.0),
    (429, "Wed, 30 Dec 2026 11:00:00 GMT", 4, 0.0),
]


@pytest.mark.parametrize(("status", "header", "attempt", "expected"), RETRY_ROWS)
def test_retry_after_replaces_backoff_without_jitter(status: int, header: str, attempt: int,
                                                     expected: float) -> None:
    got = retry_delay(policy("exponential"), attempt, status, header, NOW, NoJitter())
    assert got == expected


FALLBACK_ROWS = [
    # (status, Retry-After, attempt, backoff delay before jitter)
    (429, None, 1, 10.0),
    (429, "soon", 2, 20.0),                 # unparseable: the backoff
    (503, "", 3, 40.0),
    (500, "120", 1, 10.0),                  # only 429 and 503 honour Retry-After
    (502, "120", 2, 20.0),
    (408, "120", 3, 40.0),
    (200, "5", 1, 10.0),
    (None, "120", 2, 20.0),                 # transport error: no status
]


@pytest.mark.parametrize(("status", "header", "attempt", "expected"), FALLBACK_ROWS)
def test_retry_delay_falls_back_to_backoff(status: int | None, header: str | None,
                                           attempt: int, expected: float) -> None:
    rng = Top()
    got = retry_delay(policy("exponential"), attempt, status, header, NOW, rng)
    assert (got, rng.calls) == (expected, [(0, expected)])


def test_retry_after_cap_follows_the_job() -> None:
    assert retry_delay(policy("fixed", 10, 60), 1, 503, "3600", NOW, NoJitter()) == 60.0
    assert retry_delay(policy("fixed", 10, 0), 1, 503, "3600", NOW, NoJitter()) == 0.0
