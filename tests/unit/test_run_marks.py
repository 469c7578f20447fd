"""The jobs list's run marks (api/ui/render.py, ``run_marks``): oldest on the left, each titled
with its status and slot in UTC, labelled for screen readers, inert whatever the status text."""

from __future__ import annotations

from datetime import UTC, datetime

from api.ui.render import _run_marks


def test_marks_are_oldest_first_titled_and_labelled() -> None:
    runs = [{"status": "failed", "scheduled_for": datetime(2026, 12, 1, 3, 0, 7, 250, tzinfo=UTC)},
            {"status": "succeeded", "scheduled_for": datetime(2026, 12, 1, 2, 0, tzinfo=UTC)}]
    html = str(_run_marks(runs))
    assert html == (
        '<span class="marks" role="img" aria-label="last 2 runs: failed, succeeded">'
        '<span class="mark mark-succeeded" title="succeeded · 2026-12-01 02:00:00 UTC"></span>'
        '<span class="mark mark-failed" title="failed · 2026-12-01 03:00:07 UTC"></span></span>')


def test_a_hostile_status_is_escaped() -> None:
    runs = [{"status": '"><script>alert(1)</script>',
             "scheduled_for": datetime(2026, 12, 1, tzinfo=UTC)}]
    html = str(_run_marks(runs))
    assert "<script>" not in html
    assert "&lt;script&gt;" in html and "&#34;&gt;" in html
