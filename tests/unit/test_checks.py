"""The status rules of checks and badges (core/checks.py, core/badges.py)."""

from __future__ import annotations

import uuid

from core.badges import badge_status
from core.checks import Check, _status, tagged, worst


def _row(kind: str, status: str, last_run: str | None = None) -> dict[str, object]:
    return {"kind": kind, "status": status, "last_run_status": last_run}


def test_a_job_is_down_when_its_last_finished_run_failed() -> None:
    assert _status(_row("job", "active", "failed")) == "down"
    assert _status(_row("job", "active", "succeeded")) == "up"
    assert _status(_row("job", "paused", None)) == "up"


def test_monitor_statuses_fold_to_three() -> None:
    assert [_status(_row("monitor", s)) for s in ("new", "up", "late", "down", "paused")] == [
        "up", "up", "late", "down", "up"]


def test_worst_and_two_state() -> None:
    checks = [Check("monitor", uuid.uuid4(), "a", ("x",), "late"),
              Check("job", uuid.uuid4(), "b", ("y",), "up")]
    assert worst([]) == "up" and worst(["up", "down", "late"]) == "down"
    assert badge_status(checks) == "late" and badge_status(checks, two_state=True) == "up"
    assert [c.name for c in tagged(checks, "y")] == ["b"] and len(tagged(checks, "*")) == 2
