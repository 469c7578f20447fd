"""Retry delays: exponential, linear or fixed backoff with full jitter, and ``Retry-After``.

Full jitter (a uniform draw between 0 and the computed delay) follows AWS's "Exponential Backoff
and Jitter"; ``Retry-After`` (RFC 9110 section 10.2.3: delay-seconds or an HTTP-date) is
honoured on 429 and 503 and capped by ``max_delay_seconds``.
"""

from __future__ import annotations

import random
import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

RETRY_AFTER_STATUSES = (429, 503)


def backoff_delay(retry: dict[str, Any], attempt: int, rng: random.Random | None = None) -> float:
    """Seconds to wait after failed attempt number ``attempt`` (1-based).

    Args:
        retry: ``{"backoff": exponential|linear|fixed, "delay_seconds", "max_delay_seconds"}``;
            an unknown backoff name counts as ``fixed``.
        attempt: the attempt that just failed.
        rng: source of jitter (tests pass a seeded one).
    """
    base = float(retry.get("delay_seconds", 0))
    cap = float(retry.get("max_delay_seconds", base))
    kind = retry.get("backoff")
    if kind == "exponential":
        delay = base * 2 ** min(attempt - 1, 32)
    elif kind == "linear":
        delay = base * attempt
    else:
        delay = base
    delay = min(delay, cap)
    return (rng or random).uniform(0, delay)


_ASCTIME = re.compile(r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}")


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds requested by a ``Retry-After`` header value, or ``None`` when absent or invalid.

    RFC 9110 section 10.2.3: delay-seconds (ASCII digits) or an HTTP-date in any of the three
    forms of section 5.6.7; the asctime form carries no zone and, like every HTTP-date, is UTC.
    """
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        if not _ASCTIME.fullmatch(value):  # a zone-less date in another form is no HTTP-date
            return None
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def retry_delay(
    retry: dict[str, Any], attempt: int, status: int | None, retry_after: str | None,
    now: datetime, rng: random.Random | None = None,
) -> float:
    """The delay before the next attempt: ``Retry-After`` on 429/503 when present, else backoff."""
    if status in RETRY_AFTER_STATUSES:
        asked = parse_retry_after(retry_after, now)
        if asked is not None:
            return min(asked, float(retry.get("max_delay_seconds", asked)))
    return backoff_delay(retry, attempt, rng)


# Service loops (worker, checker, notifier) after a database error: retried after
# LOOP_RETRY_INITIAL seconds, doubling up to LOOP_RETRY_MAX, so that together with the pool's
# reconnection (core.db.RECONNECT_MAX_DELAY) work resumes within a second of PostgreSQL
# accepting connections again (docs/operations.md, "Database outages").
LOOP_RETRY_INITIAL = 0.05
LOOP_RETRY_MAX = 0.25


class LoopRetry:
    """Delays between retries of a service loop that hit a database error (no jitter: each
    process retries against its own pool, and an attempt costs one connection attempt)."""

    def __init__(self) -> None:
        self.failures = 0

    def next_delay(self) -> float:
        """Seconds to wait after one more consecutive failure: 0.05, 0.1, 0.2, 0.25, 0.25, …"""
        self.failures += 1
        return min(LOOP_RETRY_MAX, LOOP_RETRY_INITIAL * 2.0 ** min(self.failures - 1, 16))

    def reset(self) -> None:
        """A round succeeded: the next failure starts again from the initial delay."""
        self.failures = 0
