"""Job alert decisions of ``core/notifications/job_alerts.py`` (the pure parts).

Rules checked (docs/notifications.md, "What notifies" / "Jobs"):

- **failed**: "a run failed **after its last attempt** ..., and the streak of failed runs
  reached `alert_after_failures`" (default 1);
- **still_failing**: "another run failed and `realert_every` has passed since the last alert"
  ("alert again when a run fails at least this long after the last alert"; `null` = off);
- **recovered**: "the first successful run after a streak that alerted. A streak that never
  reached the threshold ends without any message";
- nothing for a deleted job.

``split_streaks`` groups one batch of final runs per job: the last success that ends a streak (a
recovery candidate) and the failures after it. ``decide_alert`` turns one ``JobStreak`` (an
``alert_states`` row read by ``JobStreak.from_row``: the streak after this batch's failures were
added) into ``failed`` / ``still_failing`` / nothing; ``recover`` says whether good runs end it
and say **recovered**; ``grow_streak`` is the replay's copy of ``alert_state_job_fail``. The
recorder's transaction around them is covered by tests/integration/test_notifications.py.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

import pytest

from core.notifications.job_alerts import (
    FinalRun,
    JobStreak,
    decide_alert,
    grow_streak,
    recover,
    split_streaks,
)
from tests.unit.instants import utc

JOB_A = uuid.UUID("00000000-0000-0000-0000-00000000000a")
JOB_B = uuid.UUID("00000000-0000-0000-0000-00000000000b")
TEAM = uuid.UUID("00000000-0000-0000-0000-0000000000ff")
T0 = utc("2026-12-01T10:00:00Z")


def run(job: uuid.UUID, status: str, minute: int, was_failing: bool = False,
        name: str | None = None) -> FinalRun:
    """A final run of ``job`` finished at T0 + ``minute`` minutes (its run id encodes ``name``)."""
    label = name or f"{'s' if status == 'succeeded' else 'f'}{minute}"
    return FinalRun(
        job_id=job, team_id=TEAM, run_id=uuid.uuid5(job, label), status=status,
        was_failing=was_failing, scheduled_for=T0 + timedelta(minutes=minute),
        attempts=1, finished_at=T0 + timedelta(minutes=minute, seconds=5),
        last_response={"status": 500 if status == "failed" else 200, "body": "",
                       "error_class": None, "error": None})


def fail(job: uuid.UUID, minute: int) -> FinalRun:
    return run(job, "failed", minute)


def ok(job: uuid.UUID, minute: int, was_failing: bool = False) -> FinalRun:
    return run(job, "succeeded", minute, was_failing)


def names(streaks: tuple[dict, dict]) -> tuple[dict, dict]:
    """``split_streaks``' answer with runs shown as their finish minutes, for readable rows."""
    recoveries, failures = streaks

    def minute(r: FinalRun) -> int:
        return int((r.finished_at - T0).total_seconds() // 60)

    return ({job: minute(r) for job, r in recoveries.items()},
            {job: [minute(r) for r in rs] for job, rs in failures.items()})


STREAK_ROWS = [
    # (id, batch of final runs (any order), expected recoveries {job: minute},
    #  expected failures {job: [minutes]})
    ("empty", [], {}, {}),
    ("one-failure", [fail(JOB_A, 1)], {}, {JOB_A: [1]}),
    ("failures-in-finish-order", [fail(JOB_A, 3), fail(JOB_A, 1), fail(JOB_A, 2)],
     {}, {JOB_A: [1, 2, 3]}),
    # a healthy job's success is not a recovery
    ("healthy-success", [ok(JOB_A, 1)], {}, {}),
    # a success of a job that had a streak before this batch ends it
    ("success-ends-earlier-streak", [ok(JOB_A, 1, was_failing=True)], {JOB_A: 1}, {}),
    # failure then success in one batch: the success ends that streak
    ("failure-then-success", [fail(JOB_A, 1), ok(JOB_A, 2)], {JOB_A: 2}, {}),
    ("failure-then-success-unsorted", [ok(JOB_A, 2), fail(JOB_A, 1)], {JOB_A: 2}, {}),
    # success then failure: the failure starts a new streak after the recovery
    ("success-then-failure", [ok(JOB_A, 1, was_failing=True), fail(JOB_A, 2)],
     {JOB_A: 1}, {JOB_A: [2]}),
    ("healthy-success-then-failure", [ok(JOB_A, 1), fail(JOB_A, 2)], {}, {JOB_A: [2]}),
    ("fail-ok-fail-fail", [fail(JOB_A, 1), ok(JOB_A, 2), fail(JOB_A, 3), fail(JOB_A, 4)],
     {JOB_A: 2}, {JOB_A: [3, 4]}),
    # the streak ends at the first success; a later success of a then-healthy job changes nothing
    ("two-successes-after-failure", [fail(JOB_A, 1), ok(JOB_A, 2), ok(JOB_A, 3)],
     {JOB_A: 2}, {}),
    # two streaks ended in one batch: the last success is the one kept
    ("two-streaks-ended", [fail(JOB_A, 1), ok(JOB_A, 2), fail(JOB_A, 3), ok(JOB_A, 4)],
     {JOB_A: 4}, {}),
    # jobs are independent
    ("two-jobs", [fail(JOB_A, 1), ok(JOB_B, 2, was_failing=True), fail(JOB_B, 3),
                  ok(JOB_A, 4)],
     {JOB_A: 4, JOB_B: 2}, {JOB_B: [3]}),
    ("two-jobs-failing", [fail(JOB_B, 2), fail(JOB_A, 1), fail(JOB_B, 3)],
     {}, {JOB_A: [1], JOB_B: [2, 3]}),
]


@pytest.mark.parametrize(("name", "batch", "recoveries", "failures"), STREAK_ROWS,
                         ids=[row[0] for row in STREAK_ROWS])
def test_streaks(name: str, batch: list[FinalRun], recoveries: dict, failures: dict) -> None:
    assert names(split_streaks(batch)) == (recoveries, failures)


def test_streaks_keep_the_runs_themselves() -> None:
    first, second = fail(JOB_A, 1), fail(JOB_A, 2)
    recoveries, failures = split_streaks([second, first])
    assert recoveries == {} and failures[JOB_A][0] is first and failures[JOB_A][1] is second


# --- decide_alert: one alert_states row after the batch's failures were counted --------------
HOUR = 3600


def row(failures: int, threshold: int = 1, last_alert: datetime | None = None,
        realert: int | None = None, status: str = "active") -> JobStreak:
    return JobStreak(job_id=JOB_A, failing_since=T0, status=status,
                     consecutive_failures=failures, alert_after_failures=threshold,
                     last_alert_at=last_alert, realert_every=realert)


NOW = utc("2026-12-01T16:00:00Z")
DECIDE_ROWS = [
    # (id, row, answer)
    ("first-failure-default-threshold", row(1), "failed"),
    ("below-threshold", row(1, threshold=2), None),
    ("reaches-threshold", row(2, threshold=2), "failed"),
    ("above-threshold-never-alerted", row(5, threshold=2), "failed"),
    ("threshold-1000-not-yet", row(999, threshold=1000), None),
    ("threshold-1000-reached", row(1000, threshold=1000), "failed"),
    ("already-alerted-no-realert", row(2, last_alert=utc("2026-12-01T10:00:00Z")), None),
    ("already-alerted-long-ago-no-realert", row(50, last_alert=utc("2026-11-01T10:00:00Z")),
     None),
    # realert_every 6 h, last alert 10:00: due from 16:00:00 ("at least this long")
    ("realert-not-yet", row(3, last_alert=utc("2026-12-01T10:00:00.001Z"), realert=6 * HOUR),
     None),
    ("realert-exactly-due", row(3, last_alert=utc("2026-12-01T10:00:00Z"), realert=6 * HOUR),
     "still_failing"),
    ("realert-overdue", row(3, last_alert=utc("2026-12-01T09:00:00Z"), realert=6 * HOUR),
     "still_failing"),
    ("realert-minimum-60s", row(3, last_alert=utc("2026-12-01T15:59:00Z"), realert=60),
     "still_failing"),
    ("realert-59s-after", row(3, last_alert=utc("2026-12-01T15:59:01Z"), realert=60), None),
    # the threshold only gates the first alert of a streak
    ("realert-ignores-threshold", row(1, threshold=5, last_alert=utc("2026-12-01T09:00:00Z"),
                                      realert=HOUR), "still_failing"),
    ("deleted-job-never", row(3, status="deleted"), None),
    ("deleted-job-never-realerts",
     row(3, last_alert=utc("2026-12-01T09:00:00Z"), realert=HOUR, status="deleted"), None),
]


@pytest.mark.parametrize(("name", "state", "answer"), DECIDE_ROWS,
                         ids=[row[0] for row in DECIDE_ROWS])
def test_decide(name: str, state: JobStreak, answer: str | None) -> None:
    assert decide_alert(state, NOW) == answer


# --- JobStreak: read once from the statements' rows -----------------------------------------
def test_streak_from_a_fail_row() -> None:
    """An ``alert_state_job_fail`` row (no ``consecutive_successes``, no
    ``recover_after_successes``): its columns, the defaults for the others."""
    channel = uuid.UUID("00000000-0000-0000-0000-0000000000c1")
    fail_row = {"job_id": JOB_A, "failing_since": T0, "consecutive_failures": 3,
                "last_alert_at": None, "name": "backup", "status": "active",
                "channels": [channel], "alert_after_failures": 3, "realert_every": 600}
    assert JobStreak.from_row(fail_row) == JobStreak(
        job_id=JOB_A, failing_since=T0, consecutive_failures=3, last_alert_at=None,
        consecutive_successes=0, name="backup", status="active", channels=[channel],
        alert_after_failures=3, realert_every=600, recover_after_successes=1)
    assert decide_alert(JobStreak.from_row(fail_row), NOW) == "failed"


def test_streak_from_a_streaks_row_ignores_other_columns() -> None:
    streaks_row = {"job_id": JOB_B, "failing_since": T0, "consecutive_failures": 2,
                   "consecutive_successes": 1, "last_alert_at": T0, "name": "b",
                   "status": "paused", "channels": [], "recover_after_successes": 3,
                   "unrelated": "x"}
    state = JobStreak.from_row(streaks_row)
    assert (state.job_id, state.consecutive_successes, state.recover_after_successes,
            state.status) == (JOB_B, 1, 3, "paused")


def test_recover_counts_towards_recover_after_successes() -> None:
    state = JobStreak(job_id=JOB_A, failing_since=T0, consecutive_failures=2,
                      last_alert_at=T0, recover_after_successes=3)
    after, said = recover(state, 2, False)
    assert said is False and after is not None and after.consecutive_successes == 2
    assert recover(after, 1, False) == (None, True)
    # a failure since: the good ones counted so far start again
    assert recover(after, 1, True)[0] == JobStreak(
        job_id=JOB_A, failing_since=T0, consecutive_failures=2, last_alert_at=T0,
        recover_after_successes=3, consecutive_successes=1)


def test_recover_of_a_streak_that_never_alerted_is_silent() -> None:
    state = JobStreak(job_id=JOB_A, failing_since=T0, consecutive_failures=1,
                      last_alert_at=None, recover_after_successes=3)
    assert recover(state, 1, False) == (None, False)


def test_grow_streak_starts_at_the_first_failure_and_counts_on() -> None:
    first = grow_streak(None, [fail(JOB_A, 1), fail(JOB_A, 2)])
    assert (first.job_id, first.failing_since, first.consecutive_failures,
            first.last_alert_at) == (JOB_A, fail(JOB_A, 1).scheduled_for, 2, None)
    counted = JobStreak(job_id=JOB_A, failing_since=T0, consecutive_failures=4,
                        last_alert_at=T0, consecutive_successes=2)
    grown = grow_streak(counted, [fail(JOB_A, 3)])
    assert (grown.failing_since, grown.consecutive_failures, grown.consecutive_successes,
            grown.last_alert_at) == (T0, 5, 0, T0)
