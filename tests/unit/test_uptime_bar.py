"""The dashboard's uptime bar merges runs of untroubled days (api/ui/pages/monitors.py)."""

from __future__ import annotations

from datetime import date, timedelta

from api.ui.pages.monitors import uptime_bar


def _days(percents: list[float | None]) -> list[dict[str, object]]:
    first = date(2026, 11, 1)
    return [{"day": first + timedelta(days=n), "uptime_percent": p, "downtime_seconds": 0.0}
            for n, p in enumerate(percents)]


def test_a_clean_month_is_one_segment_and_bad_days_stand_alone() -> None:
    bar = uptime_bar(_days([None, None, 100.0, 100.0, 98.5, 99.5, 100.0]))
    assert [(s["first"], s["count"], s["class"]) for s in bar["segments"]] == [
        (0, 2, "none"), (2, 2, "up"), (4, 1, "down"), (5, 1, "dip"), (6, 1, "up")]
    assert bar["segments"][0]["label"] == "2026-11-01 to 2026-11-02: not monitored"
    assert bar["segments"][2]["label"] == "2026-11-05: 98.50 % up"
    assert bar["summary"] == "uptime of the last 7 days: 2 with downtime"
    assert uptime_bar(_days([100.0] * 30))["summary"].endswith("no downtime")
    assert len(uptime_bar(_days([100.0] * 30))["segments"]) == 1
