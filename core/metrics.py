"""Prometheus metrics computed from the database at scrape time (docs/healthchecks.md,
"Prometheus").

Every process is stateless and any of them may answer a scrape, so the figures come from
PostgreSQL (cheap indexed aggregates and the read models), not from in-process counters.

Two endpoints, two cardinalities:

- ``/metrics`` (:func:`render_metrics`): the service. Labels are bounded by the code, never by
  the data: job status, run outcome, ping kind, monitor status, channel kind and notification
  outcome. Run counters and the duration / lateness histograms come from the read models
  (``team_runs_hourly``, ``job_stats_weekly``), so they lag the log by the projector's lag,
  which is itself exported.
  The claim duration percentiles come from the ``claim_seconds`` that the claims put in their
  events' metadata (``core/runs/claim.py``), over the newest ``CLAIM_WINDOW`` events.
- ``/metrics/team/<badge-key>`` (:func:`render_team_metrics`): one team's checks, one series
  per monitor or job, as healthchecks' Prometheus endpoint has them (``hc/metrics/views.py``:
  ``hc_check_up``, ``hc_check_started``, ``hc_tag_up``, with ``name``, ``tags``
  space-separated and ``unique_key``; not its ``hc_checks_total`` and ``hc_checks_down_total``:
  gauges named ``_total``, which ``promtool check metrics`` refuses, and ``count(hc_check_up)``
  gives them), plus
  cronledger's own per-job series (``cronledger_job_last_run_ok``, ``cronledger_job_runs_total``
  by outcome, ``cronledger_job_is_running``).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from prometheus_client import CollectorRegistry, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from core.checks import Check, tagged, worst
from core.db import ConnectionPool, one_row
from core.projections.histogram import RATIO
from core.queries import Q
from core.runs.registry import live_after

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
# Histogram bucket edges in seconds (Prometheus' defaults, stretched to an hour).
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0,
           3600.0)
RUN_OUTCOMES = ("succeeded", "failed", "skipped", "missed")
# Why a slot did not run: skipped by the overlap policy, missed beyond the catch-up policy,
# held by a maintenance window (the vocabulary of jobs' alerts, docs/notifications.md).
SLOT_REASONS = ("skipped", "missed", "held")
PING_KINDS = ("success", "start", "fail", "log")
# Claim durations are read from the newest CLAIM_WINDOW events (see metrics_claim_durations).
CLAIM_WINDOW = 10_000
CLAIM_PERCENTILES = ("50", "90", "99", "100")


def unique_key(check_id: uuid.UUID) -> str:
    """healthchecks' ``unique_key`` of a check: the SHA-1 of its id's text (a stable name that
    does not reveal the id)."""
    return hashlib.sha1(str(check_id).encode()).hexdigest()  # noqa: S324 - a name, not a MAC


class _Static(Collector):
    """Yields metric families built once for one scrape."""

    def __init__(self, families: list[Any]) -> None:
        self.families = families

    def collect(self) -> Iterable[Any]:
        return self.families


def _histogram(name: str, text: str, counts: dict[int, int]) -> HistogramMetricFamily:
    """A Prometheus histogram from the read models' buckets (index ``i`` holds values below
    ``RATIO**i`` ms; each is counted under the first edge at or above its upper bound, so a
    value may be counted one edge high, never low). The sum is estimated from bucket middles."""
    cumulative, total, estimate = [], 0, 0.0
    ordered = sorted(counts.items())
    for edge in BUCKETS:
        total = sum(n for i, n in ordered if RATIO ** i / 1000 <= edge or i == 0)
        cumulative.append((repr(edge), total))
    count = sum(counts.values())
    estimate = sum(n * (0.0 if i == 0 else RATIO ** (i - 0.5) / 1000) for i, n in ordered)
    cumulative.append(("+Inf", count))
    return HistogramMetricFamily(name, text, buckets=cumulative, sum_value=estimate)


async def render_metrics(pool: ConnectionPool, now: datetime) -> bytes:
    """The Prometheus text exposition of the scheduler's state at ``now``."""
    async with pool.connection() as conn:
        # aggregates: one row each
        snap = one_row(await (await conn.execute(Q["metrics_snapshot"], {
            "now": now, "live_after": live_after(now)})).fetchone(), "metrics_snapshot")
        jobs = await (await conn.execute(Q["metrics_jobs_by_status"])).fetchall()
        runs = one_row(await (await conn.execute(Q["metrics_runs_by_outcome"])).fetchone(),
                       "metrics_runs_by_outcome")
        hist = await (await conn.execute(Q["metrics_run_histograms"])).fetchall()
        pings = one_row(await (await conn.execute(Q["metrics_pings_by_kind"])).fetchone(),
                        "metrics_pings_by_kind")
        monitors = await (await conn.execute(Q["metrics_monitors_by_status"])).fetchall()
        sent = await (await conn.execute(Q["metrics_notifications"])).fetchall()
        lag = await (await conn.execute(Q["metrics_projector_lag"], {"now": now})).fetchone()
        claims = await (await conn.execute(Q["metrics_claim_durations"],
                                           {"window": CLAIM_WINDOW})).fetchone()
        slots = await (await conn.execute(Q["metrics_slots_not_run"])).fetchall()
    registry = CollectorRegistry()
    by_status = Gauge("cronledger_jobs", "Jobs by status", ["status"], registry=registry)
    for row in jobs:
        by_status.labels(row["status"]).set(row["jobs"])
    gauges = {
        "due_jobs": "Active jobs with a pending slot",
        "schedule_lag_seconds": "How late the oldest unclaimed due slot is (seconds)",
        "runs_queued": "Runs waiting (manual, retry, buffered)",
        "runs_running": "Runs whose attempt is in flight",
        "leases_expired": "Running runs whose lease expired (their worker died)",
        "event_position": "Global position of the newest event",
        "workers_live": "Worker processes seen in the worker registry within the last 30 s",
    }
    for name, text in gauges.items():
        Gauge(f"cronledger_{name}", text, registry=registry).set(snap[name] or 0)
    outcomes = CounterMetricFamily("cronledger_runs", "Finished runs by outcome (read model)",
                                   labels=["outcome"])
    for outcome in RUN_OUTCOMES:
        outcomes.add_metric([outcome], runs[outcome])
    kinds = CounterMetricFamily("cronledger_pings", "Pings received by kind (read model)",
                                labels=["kind"])
    for kind in PING_KINDS:
        kinds.add_metric([kind], pings[kind])
    statuses = GaugeMetricFamily("cronledger_monitors", "Live monitors by status",
                                 labels=["status"])
    for row in monitors:
        statuses.add_metric([row["status"]], row["monitors"])
    notes = GaugeMetricFamily("cronledger_notifications",
                              "Notifications by channel kind and outcome",
                              labels=["channel_kind", "outcome"])
    for row in sent:
        notes.add_metric([row["kind"], row["status"]], row["notifications"])
    buckets: dict[str, dict[int, int]] = {"duration": {}, "lateness": {}}
    for row in hist:
        buckets[row["which"]][row["bucket"]] = row["n"]
    families = [
        outcomes, kinds, statuses, notes,
        _histogram("cronledger_run_duration_seconds", "Run duration (read model)",
                   buckets["duration"]),
        _histogram("cronledger_fire_lateness_seconds",
                   "How late runs fired after their slot (read model)", buckets["lateness"]),
        GaugeMetricFamily("cronledger_projector_lag_events",
                          "Events the read models have not applied yet",
                          value=lag["events"] if lag else 0),
        GaugeMetricFamily("cronledger_projector_checkpoint_age_seconds",
                          "Seconds since the read models' checkpoint last moved",
                          value=lag["seconds"] if lag else 0),
    ]
    families += _claim_families(claims)
    families.append(_slot_family(slots))
    registry.register(_Static(families))
    return generate_latest(registry)


def _slot_family(rows: list[dict[str, Any]]) -> GaugeMetricFamily:
    """``cronledger_slots_not_run{reason}``: the slots among the runs kept
    (docs/operations.md, *Retention*) that did not run, by reason (:data:`SLOT_REASONS`): a
    gauge, since the prune removes old runs (``cronledger_runs`` counts them all, without the
    reason)."""
    counts = {row["reason"]: row["slots"] for row in rows}
    family = GaugeMetricFamily("cronledger_slots_not_run",
                               "Slots that did not run among the runs kept, by reason: "
                               "skipped (overlap), missed (catch-up), held (maintenance)",
                               labels=["reason"])
    for reason in SLOT_REASONS:
        family.add_metric([reason], counts.get(reason, 0))
    return family


def _claim_families(row: dict[str, Any] | None) -> list[Any]:
    """``cronledger_claim_duration_seconds{percentile}`` (gauges: seconds a worker's claim
    transaction took, from its start to its events, at the 50th, 90th, 99th and 100th percentile
    of the recent claims; absent before any) and ``cronledger_claim_duration_claims`` (how many
    claims they cover). Gauges, not a summary: the figures cover a sliding window of the log, so
    there is no count or sum that only grows (and ``quantile`` is a summary's label)."""
    claims = row["claims"] if row else 0
    percentiles = GaugeMetricFamily(
        "cronledger_claim_duration_seconds",
        "Claim transaction duration of recent claims, by percentile (seconds)",
        labels=["percentile"])
    if claims and row is not None:
        for label, value in zip(CLAIM_PERCENTILES, row["quantiles"], strict=True):
            percentiles.add_metric([label], value)
    count = GaugeMetricFamily("cronledger_claim_duration_claims",
                              "Recent claims the claim duration percentiles cover", value=claims)
    return [percentiles, count]


def render_team_metrics(checks: list[Check]) -> bytes:
    """One team's checks in healthchecks' Prometheus format plus cronledger's per-job series."""
    labels = ["name", "tags", "unique_key"]
    up = GaugeMetricFamily("hc_check_up", "Whether the check is currently up (1 for yes, "
                           "0 for no)", labels=labels)
    started = GaugeMetricFamily("hc_check_started", "Whether the check is currently started "
                                "(1 for yes, 0 for no)", labels=labels)
    last_ok = GaugeMetricFamily("cronledger_job_last_run_ok", "Whether the job's last finished "
                                "run succeeded (1 for yes, 0 for no)", labels=labels)
    runs = CounterMetricFamily("cronledger_job_runs", "The job's runs by outcome",
                               labels=[*labels, "outcome"])
    running = GaugeMetricFamily("cronledger_job_is_running", "Whether a run of the job is in "
                                "flight (1 for yes, 0 for no)", labels=labels)
    for check in checks:
        values = [check.name, " ".join(check.tags), unique_key(check.id)]
        up.add_metric(values, int(check.status != "down"))
        started.add_metric(values, int(check.started or check.running))
        if check.kind == "job":
            if check.last_run_ok is not None:
                last_ok.add_metric(values, int(check.last_run_ok))
            for outcome in RUN_OUTCOMES:
                runs.add_metric([*values, outcome], check.runs.get(outcome, 0))
            running.add_metric(values, int(check.running))
    tag_up = GaugeMetricFamily("hc_tag_up", "Whether all checks with this tag are up "
                               "(1 for yes, 0 for no)", labels=["tag"])
    for tag in sorted({t for c in checks for t in c.tags}):
        tag_up.add_metric([tag], int(worst(c.status for c in tagged(checks, tag)) != "down"))
    registry = CollectorRegistry()
    registry.register(_Static([up, started, tag_up, last_ok, runs, running]))
    return generate_latest(registry)
