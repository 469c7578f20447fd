"""The monitor timeline's slots (api/ui/timeline.py) and the job charts (api/ui/charts.py):
what each expected ping became, and charts that read with one run and with many."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from api.ui.charts import nice_top, outcome_strip, run_chart
from api.ui.timeline import expected_slots, monitor_timeline

T0 = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)


def _monitor(schedule: str, grace: int = 300) -> dict:
    return {"schedule": schedule, "timezone": "UTC", "grace_seconds": grace,
            "created_at": T0, "status": "up"}


def _ping(minutes: float, kind: str = "success") -> dict:
    return {"received_at": T0 + timedelta(minutes=minutes), "kind": kind, "exit_status": None}


def test_a_period_counts_from_the_last_ping_and_misses_until_one_comes() -> None:
    pings = [_ping(0), _ping(20), _ping(41), _ping(110, "fail"), _ping(131)]
    now = T0 + timedelta(minutes=140)
    slots = expected_slots(_monitor("@every 20m"), pings, T0, now)
    assert [(int((s.at - T0).total_seconds() // 60), s.outcome) for s in slots] == [
        (20, "ontime"), (40, "ontime"), (61, "missing"), (81, "missing"), (101, "late"),
        (130, "ontime")]


def test_cron_slots_take_the_ping_of_their_half_period() -> None:
    pings = [_ping(59), _ping(121), _ping(190)]  # 01:00 early by a minute, 02:00 on time
    now = T0 + timedelta(hours=4, minutes=2)
    slots = expected_slots(_monitor("0 * * * *", grace=300), pings, T0, now)
    assert [(s.at.hour, s.outcome) for s in slots] == [
        (1, "ontime"), (2, "ontime"), (3, "late"), (4, "pending")]


def test_the_figure_is_text_safe_and_says_what_it_shows() -> None:
    monitor = {**_monitor("@every 1h"), "name": "<b>x</b>"}
    flips = [{"occurred_at": T0 + timedelta(minutes=1), "status": "up"}]
    html = str(monitor_timeline(monitor, [_ping(0)], flips, T0 + timedelta(hours=3), True))
    assert 'aria-label="Timeline: 3 expected pings, 2 missing, 0 late; 1 pings received"' in html
    assert "<b>" not in html


def test_run_charts_read_with_one_run_and_with_many() -> None:
    one = [{"scheduled_for": T0, "duration_ms": 1234, "status": "succeeded"}]
    html = str(run_chart(one, "duration_ms", "Duration"))
    assert 'd="M500.0 ' in html and "1 run, highest 1.2 s" in html and "<polyline" not in html
    many = [{"scheduled_for": T0 + timedelta(minutes=n), "duration_ms": n % 7 * 100.0,
             "status": "failed" if n % 10 == 0 else "succeeded"} for n in range(100)]
    html = str(run_chart(list(reversed(many)), "duration_ms", "Duration"))
    assert html.count("<path") == 100 and html.count('class="dot-failed"') == 10
    assert "<span>1 s</span>" in html  # the axis' top is a round value, as HTML text
    assert nice_top(601) == 1000 and nice_top(0.3) == 0.5 and nice_top(0) == 1


def test_the_outcome_strip_marks_failures_and_skips() -> None:
    def day(n: int, **counts: int) -> dict:
        return {"bucket_start": T0 + timedelta(days=n), "runs": sum(counts.values()),
                **{k: counts.get(k, 0) for k in ("succeeded", "failed", "skipped", "missed")}}

    html = str(outcome_strip([day(0), day(1, succeeded=5), day(2, succeeded=4, failed=1),
                              day(3, failed=3, succeeded=1), day(4, skipped=2)]))
    for cls in ("cell-none", "cell-ok", "cell-some", "cell-bad", "cell-skip", "cell-skipped"):
        assert f'class="{cls}"' in html
    assert "2 with failed or missed runs" in html
