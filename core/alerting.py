"""Alert settings and rules shared by job and monitor definitions: the channels to alert, how
often to alert again while a problem lasts (docs/api.md), the failure tolerance, after how
many failures in a row to alert and after how many good outcomes to recover (:func:`tolerate`,
docs/notifications.md), and the parents an alert waits for (``depends_on``,
:func:`normalize_depends_on`; docs/notifications.md, *Dependencies*).

Imports only :mod:`core.errors` and the leaf :mod:`core.durations`, so that job and monitor
definitions share these rules without importing each other.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Literal

from core.durations import parse_duration
from core.errors import FieldErrors

MAX_CHANNELS = 20
MAX_DEPENDS_ON = 20  # parents of one monitor or job
MAX_RUN_SECONDS = 366 * 86400  # the longest min_duration / max_duration
MIN_REALERT_SECONDS = 60
MAX_REALERT_SECONDS = 30 * 86400


def _unique_ids(value: Any, errors: FieldErrors, field: str, limit: int,
                what: str) -> list[uuid.UUID]:
    """A list of at most ``limit`` ids of ``what``, de-duplicated in order; problems go to
    ``errors`` as ``field`` / ``field.<i>``."""
    if not isinstance(value, list | tuple) or len(value) > limit:
        errors.add(field, f"must be a list of at most {limit} {what} ids")
        return []
    out: list[uuid.UUID] = []
    for i, item in enumerate(value):
        try:
            one = item if isinstance(item, uuid.UUID) else uuid.UUID(str(item))
        except ValueError:
            errors.add(f"{field}.{i}", f"is not a {what} id")
            continue
        if one not in out:
            out.append(one)
    return out


def normalize_channels(value: Any, errors: FieldErrors) -> list[uuid.UUID]:
    """Channel ids, de-duplicated in order (their team is checked by the command); problems go
    to ``errors`` as ``channels`` / ``channels.<i>``. Shared by jobs and monitors."""
    return _unique_ids(value, errors, "channels", MAX_CHANNELS, "channel")


def normalize_depends_on(value: Any, errors: FieldErrors) -> list[uuid.UUID]:
    """``depends_on``: ids of monitors and jobs (at most :data:`MAX_DEPENDS_ON`),
    de-duplicated in order; ``None`` is ``[]``. That they exist in the team and make no cycle
    is checked by the command (:func:`core.dependencies.check_depends_on`); problems go to
    ``errors`` as ``depends_on`` / ``depends_on.<i>``. Shared by jobs and monitors."""
    if value is None:
        return []
    return _unique_ids(value, errors, "depends_on", MAX_DEPENDS_ON, "monitor or job")


def normalize_realert(value: Any, errors: FieldErrors) -> int | None:
    """``realert_every`` in seconds (60 s to 30 days; seconds or ``"1h"``-style), or ``None``
    (no re-alerts); a problem goes to ``errors``. Shared by jobs and monitors."""
    if value is None:
        return None
    seconds = parse_duration(value)
    if seconds is None or not MIN_REALERT_SECONDS <= seconds <= MAX_REALERT_SECONDS:
        errors.add("realert_every", "must be a duration between 60 s and 30 days: seconds "
                   "or a string such as '30m', '1h', '1d' (null: off)")
    return seconds


# -- run-time bounds ------------------------------------------------------------------------------
def normalize_run_bounds(out: dict[str, Any], errors: FieldErrors) -> None:
    """``min_duration`` and ``max_duration`` of ``out`` in seconds (a number of seconds or
    ``"90s"``, ``"30m"``, ``"6h"``; 1 s to 366 days; ``None``: no bound), in place; the
    minimum must be below the maximum. Problems go to ``errors``. Shared by jobs and
    monitors (healthchecks #236 "run too short", Sentry Crons' ``max_runtime``)."""
    for key in ("min_duration", "max_duration"):
        value = out.get(key)
        if value is None:
            continue
        seconds = parse_duration(value)
        if seconds is None or not 1 <= seconds <= MAX_RUN_SECONDS:
            errors.add(key, "must be a duration from 1 s to 366 days: seconds or a string "
                            "such as '90s', '30m', '6h' (null: no bound)")
            out[key] = None
        else:
            out[key] = seconds
    low, high = out.get("min_duration"), out.get("max_duration")
    if low is not None and high is not None and low >= high:
        errors.add("min_duration", f"must be less than max_duration ({high} s)")


def shorter_than(duration_ms: int | None, min_duration: int | None) -> bool:
    """Whether a run of ``duration_ms`` milliseconds that succeeded is too short for
    ``min_duration`` (seconds; ``None``: no bound): the one comparison of a monitor's run
    between ``/start`` and its success and of a job's successful attempt."""
    return min_duration is not None and duration_ms is not None \
        and duration_ms < min_duration * 1000


# -- failure tolerance ----------------------------------------------------------------------------
MAX_ALERT_AFTER = 1000  # the most failures (or good outcomes) in a row a threshold may ask for


@dataclass(frozen=True)
class Streak:
    """Where a job or monitor stands towards its next alert (Sentry Crons'
    ``failure_issue_threshold`` / ``recovery_threshold``).

    Attributes:
        failures: failed (or missed) runs or slots in a row, since the last good one.
        successes: good ones in a row since the last failure (counted while ``alerted``).
        alerted: a failure alert went out and no recovery alert since.
    """

    failures: int = 0
    successes: int = 0
    alerted: bool = False

    @property
    def idle(self) -> bool:
        """Nothing to remember: no failures, no alert open."""
        return self.failures == 0 and not self.alerted


def tolerate(streak: Streak, outcome: Literal["failure", "success"], *, alert_after: int,
             recover_after: int) -> tuple[Streak, Literal["failure", "recovery"] | None]:
    """The one failure-tolerance rule of jobs and monitors: the streak after ``outcome`` and
    the alert it raises, if any.

    A failure counts on (and ends a run of good ones); when ``alert_after`` failures are in a
    row and no alert is open, the failure alert goes out (a job's ``failed``, a monitor's
    ``down``). A good outcome ends the failure run; while an alert is open, ``recover_after``
    good ones in a row close it with the recovery alert (a job's ``recovered``, a monitor's
    ``up``). A run of failures that never reached ``alert_after`` ends silently (nothing was
    said, so nothing is taken back), as healthchecks says "up" only after "down".

    Args:
        streak: the streak before.
        outcome: ``failure`` (a failed run or ping, a missed slot, a run too short or too
            long) or ``success``.
        alert_after: ``alert_after_failures`` (1 to :data:`MAX_ALERT_AFTER`).
        recover_after: ``recover_after_successes`` (1 to :data:`MAX_ALERT_AFTER`).
    """
    if outcome == "failure":
        failures = streak.failures + 1
        if not streak.alerted and failures >= alert_after:
            return Streak(failures, 0, True), "failure"
        return Streak(failures, 0, streak.alerted), None
    if not streak.alerted:
        return Streak(), None
    successes = streak.successes + 1
    if successes >= recover_after:
        return Streak(), "recovery"
    return Streak(0, successes, True), None


def normalize_threshold(value: Any, field: str, errors: FieldErrors) -> int:
    """``alert_after_failures`` or ``recover_after_successes``: a whole number from 1 to
    :data:`MAX_ALERT_AFTER`; a problem goes to ``errors`` (and 1 is returned)."""
    if isinstance(value, bool) or not isinstance(value, int) \
            or not 1 <= value <= MAX_ALERT_AFTER:
        errors.add(field, f"must be an integer between 1 and {MAX_ALERT_AFTER}")
        return 1
    return value
