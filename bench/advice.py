"""Advice speed (docs/advice.md): the advisor's answer for a busy monitor and a busy job, timed
in process on generated histories (no database: the pure :func:`core.advice.monitors.advise`
and :func:`core.advice.jobs.advise`, which ``GET /v1/monitors/{id}/advice`` and
``GET /v1/jobs/{id}/advice`` run after reading the stream).

    uv run python bench/advice.py [--days 90] [--windows 90 7] [--repeat 3] [--smoke]

The monitor (schedule ``5m``, grace 60 s) checks in every 5 minutes for ``--days`` days,
0-20 s after its expected instant; every 997th check-in (about nine in a shorter history)
90-400 s late (a false alarm with the grace), every 12th run timed (a ``/start`` 30-50 s
before its success), every 3001st a ``/fail``, and one 3-hour silence at the middle (a real
outage, recorded ``late``/``down``/``up`` flips). The job (``@every 5m``) has one final run
per 5 minutes, 20-40 s long, every 1000th failed and five failed in a row at the middle.
Each advice is timed ``--repeat`` times per window (``?days=``): wall and this process's
CPU, the best and the median.

Checks (exit status 1 otherwise): the monitor's ``observations`` is the number of success and
failure check-ins generated in the window, the job's the number of final runs in it; neither
answer says too little history; the monitor suggests a ``grace_seconds`` (the late check-ins
were false alarms). ``--smoke`` (CI, ``bench/smoke.py``): 3 days, windows 3 and 1, one call.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.common import ROOT  # noqa: F401  (puts the repository on sys.path)
from core import streams
from core.advice import jobs as job_advice
from core.advice import monitors as monitor_advice
from core.advice.answer import Advice
from core.jobs.state import evolve as job_evolve
from core.monitors.state import evolve as monitor_evolve

T0 = datetime(2026, 9, 1, tzinfo=UTC)
SUBJECT, TEAM = uuid.UUID(int=7), uuid.UUID(int=8)
PERIOD = 300  # seconds, both subjects
MONITOR = {"name": "busy", "schedule": "5m", "timezone": "UTC", "grace_seconds": 60,
           "methods": "any", "manual_resume": False, "channels": [], "realert_every": None,
           "period_seconds": float(PERIOD)}


def _event(events: list[dict[str, Any]], at: datetime, kind: str, data: dict[str, Any]
           ) -> None:
    events.append({"event_type": kind, "data": data, "stream_id": SUBJECT, "team_id": TEAM,
                   "stream_version": len(events) + 1, "occurred_at": at})


def _ping(kind: str, duration_ms: int | None = None) -> dict[str, Any]:
    return {"kind": kind, "method": "GET", "rid": None, "exit_status": None,
            "duration_ms": duration_ms, "requested": kind}


def monitor_stream(days: int) -> tuple[list[dict[str, Any]], datetime]:
    """The monitor's stream (the module's docstring) and the instant of its last check-in."""
    events: list[dict[str, Any]] = []
    _event(events, T0, "monitor.created", {**MONITOR, "status": "new",
                                           "ping_token_hash": "00" * 32})
    rnd = random.Random(1)
    at, status, n = T0, "new", days * 86400 // PERIOD
    every = min(997, n // 9)  # the late check-ins: some in a short history too
    for i in range(1, n + 1):
        late = rnd.choice([90, 150, 200, 400]) if i % every == 0 else rnd.uniform(0, 20)
        gap = timedelta(seconds=PERIOD + late)
        if i == n // 2:  # a 3-hour silence: late, down by time, back at the next ping
            gap = timedelta(hours=3)
            _event(events, at + timedelta(seconds=PERIOD), "monitor.late",
                   {"previous_status": "up"})
            _event(events, at + timedelta(seconds=PERIOD + 60), "monitor.down",
                   {"previous_status": "late", "reason": "overdue"})
            status = "down"
        at += gap
        duration = None
        if i % 12 == 0:
            duration = rnd.randint(30_000, 50_000)
            _event(events, at - timedelta(milliseconds=duration), "monitor.pinged",
                   _ping("start"))
        fail = i % 3001 == 0
        _event(events, at, "monitor.pinged",
               _ping("fail") if fail else _ping("success", duration))
        if fail and status != "down":
            _event(events, at, "monitor.down", {"previous_status": status, "reason": "fail"})
            status = "down"
        elif not fail and status != "up":
            _event(events, at, "monitor.up", {"previous_status": status, "reason": "ping"})
            status = "up"
    return events, at


def job_history(days: int) -> tuple[job_advice.JobHistory, datetime]:
    """The job's stream and final runs (the module's docstring), the last run's instant."""
    data = {"name": "busy", "schedule": "@every 5m", "timezone": "UTC",
            "request": {"method": "GET", "url": "https://example.com/"}, "timeout_seconds": 60,
            "retry": None, "overlap": "skip", "catchup": "none", "success_statuses": None,
            "channels": [], "alert_after_failures": 1, "realert_every": None,
            "status": "active", "anchor_at": T0.isoformat(), "signing": False}
    events = [{"event_type": "job.created", "data": data, "stream_id": SUBJECT,
               "team_id": TEAM, "stream_version": 1, "occurred_at": T0}]
    rnd = random.Random(2)
    n = days * 86400 // PERIOD
    finals = []
    for i in range(1, n + 1):
        slot = T0 + timedelta(seconds=PERIOD * i)
        failed = i % 1000 == 0 or n // 2 <= i < n // 2 + 5
        ms = rnd.randint(20_000, 40_000)
        finals.append({"run_id": uuid.UUID(int=1000 + i), "tx_id": str(i),
                       "occurred_at": slot + timedelta(milliseconds=ms), "scheduled_for": slot,
                       "data": {"attempt": 1, "duration_ms": ms},
                       "event_type": "run.failed" if failed else "run.succeeded"})
    return job_advice.JobHistory(events, finals, [], None, None), finals[-1]["occurred_at"]


def _timed(call: Callable[[], Advice], repeat: int) -> tuple[Advice, list[float], list[float]]:
    walls, cpus = [], []
    advice = None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        advice = call()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    assert advice is not None
    return advice, walls, cpus


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=90, help="days of history generated")
    parser.add_argument("--windows", type=int, nargs="+", default=[90, 7],
                        help="advice windows (?days=)")
    parser.add_argument("--repeat", type=int, default=3, help="calls per row")
    parser.add_argument("--smoke", action="store_true", help="3 days, windows 3 and 1")
    args = parser.parse_args()
    if args.smoke:
        args.days, args.windows, args.repeat = 3, [3, 1], 1
    events, last = monitor_stream(args.days)
    monitor = streams.fold(monitor_evolve, events)
    history, job_last = job_history(args.days)
    job = streams.fold(job_evolve, history.job_events)
    assert monitor is not None and job is not None
    now, job_now = last + timedelta(minutes=1), job_last + timedelta(minutes=1)
    print(f"monitor: {len(events)} events; job: {len(history.finals)} final runs; "
          f"{args.days} days, {args.repeat} call(s) per row")
    print(f"{'subject':8} {'days':>4} {'seen':>6} {'wall best':>10} {'wall p50':>9} "
          f"{'cpu p50':>8}  suggested")
    failures = []
    for days in args.windows:
        start = now - timedelta(days=days)
        want = sum(e["event_type"] == "monitor.pinged" and e["occurred_at"] >= start
                   and e["data"]["kind"] in ("success", "fail") for e in events)
        job_start = job_now - timedelta(days=days)
        job_want = sum(r["occurred_at"] >= job_start for r in history.finals)
        rows = [("monitor", want, _timed(
                    lambda d=days: monitor_advice.advise(events, monitor, d, now), args.repeat)),
                ("job", job_want, _timed(
                    lambda d=days: job_advice.advise(history, job, d, job_now), args.repeat))]
        for name, expected, (advice, walls, cpus) in rows:
            fields = [s.field for s in advice.suggestions]
            print(f"{name:8} {days:>4} {advice.observations:>6} {min(walls):>9.3f}s "
                  f"{statistics.median(walls):>8.3f}s {statistics.median(cpus):>7.3f}s  "
                  f"{', '.join(fields) or '-'}")
            if advice.observations != expected or advice.insufficient is not None:
                failures.append(f"{name} {days} days: {advice.observations} seen, {expected} "
                                f"generated ({advice.insufficient})")
            if name == "monitor" and "grace_seconds" not in fields:
                failures.append(f"monitor {days} days: no grace_seconds suggested")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
