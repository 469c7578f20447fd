"""Read model: runs per job per UTC hour, day and ISO week, and per team per hour.

Each run counts once, by its final outcome (``run.succeeded``, ``run.failed``, ``run.skipped``,
``run.missed``), in the bucket of its slot (``scheduled_for``; a manual run's slot is its
trigger instant). ``retries`` counts ``run.retry_scheduled`` events. Succeeded and failed runs
add their final attempt's ``duration_ms`` and the run's ``lateness_ms`` (first attempt's start
minus the slot) to the bucket's histograms (:mod:`core.projections.histogram`).

Each row also stores the p50/p95 of its histograms, computed here when the row is written, so
reports read them without merging anything (merging a week of daily histograms for every job
costs far more in SQL than keeping the weekly rows). Tables: ``job_stats_hourly``,
``job_stats_daily``, ``job_stats_weekly`` (same columns: one ``job_stats_load`` and one
``job_stats_upsert`` template serve the three), ``team_runs_hourly``.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from psycopg import sql

from core.coerce import instant, uuid_of
from core.db import Connection
from core.events import to_json
from core.projections import histogram
from core.projections.common import day_start, fetch_all, hour_start
from core.queries import Q

TABLES = ("job_stats_hourly", "job_stats_daily", "job_stats_weekly", "team_runs_hourly")
OUTCOMES = {"run.succeeded": "succeeded", "run.failed": "failed", "run.skipped": "skipped",
            "run.missed": "missed"}
COUNTS = ("succeeded", "failed", "skipped", "missed", "retries")


@dataclass
class _Bucket:
    team_id: uuid.UUID
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    duration: histogram.Histogram = field(default_factory=dict)
    lateness: histogram.Histogram = field(default_factory=dict)


def _count(buckets: dict[Any, _Bucket], key: Any, team_id: uuid.UUID, column: str,
           data: dict[str, Any] | None) -> None:
    bucket = buckets.get(key)
    if bucket is None:
        bucket = buckets[key] = _Bucket(team_id)
    bucket.counts[column] += 1
    if data is not None:
        histogram.add(bucket.duration, data.get("duration_ms"))
        histogram.add(bucket.lateness, data.get("lateness_ms"))


async def _write(conn: Connection, table: str,
                 buckets: dict[tuple[Any, datetime], _Bucket]) -> None:
    """Add ``buckets`` to ``table``: histograms are merged here, not in SQL (much cheaper)."""
    keys = [{"id": k[0], "bucket_start": k[1]} for k in buckets]
    for row in await fetch_all(conn, _LOAD[table], {"keys": to_json(keys)}):
        bucket = buckets[(row["key_id"], row["bucket_start"])]
        for column in COUNTS:
            bucket.counts[column] += row.get(column, 0)
        if "duration_histogram" in row:
            bucket.duration = histogram.merge((bucket.duration, row["duration_histogram"]))
            bucket.lateness = histogram.merge((bucket.lateness, row["lateness_histogram"]))
    rows = []
    for key, b in zip(keys, buckets.values(), strict=True):
        p50_duration, p95_duration = histogram.percentiles(b.duration, (0.5, 0.95))
        p50_lateness, p95_lateness = histogram.percentiles(b.lateness, (0.5, 0.95))
        rows.append({**key, "team_id": b.team_id, **b.counts, "duration_histogram": b.duration,
                     "lateness_histogram": b.lateness, "p50_duration_ms": p50_duration,
                     "p95_duration_ms": p95_duration, "p50_lateness_ms": p50_lateness,
                     "p95_lateness_ms": p95_lateness})
    await conn.execute(_UPSERT[table], {"rows": to_json(rows)})


def _job_stats(template: str, table: str) -> str:
    """``template`` (``{table}``, ``{pkey}``) rendered for one job stats table, once at import:
    a batch pays no composition and each table keeps one fixed statement text."""
    text: str = sql.SQL(template).format(table=sql.Identifier(table),
                                         pkey=sql.Identifier(f"{table}_pkey")).as_string()
    return text


_JOB_TABLES = ("job_stats_hourly", "job_stats_daily", "job_stats_weekly")
_LOAD = {**{t: _job_stats(Q["job_stats_load"], t) for t in _JOB_TABLES},
         "team_runs_hourly": Q["team_runs_hourly_load"]}
_UPSERT = {**{t: _job_stats(Q["job_stats_upsert"], t) for t in _JOB_TABLES},
           "team_runs_hourly": Q["team_runs_hourly_upsert"]}


async def apply(conn: Connection, events: Sequence[dict[str, Any]]) -> None:
    """Add the run outcomes among ``events`` to the hourly, daily and team buckets.

    The projector holds the checkpoint lock, so nothing else writes these rows meanwhile:
    read, add, write back is safe.
    """
    hourly: dict[tuple[Any, datetime], _Bucket] = {}
    daily: dict[tuple[Any, datetime], _Bucket] = {}
    weekly: dict[tuple[Any, datetime], _Bucket] = {}
    team: dict[tuple[Any, datetime], _Bucket] = {}
    for event in events:
        kind = event["event_type"]
        column = OUTCOMES.get(kind) or ("retries" if kind == "run.retry_scheduled" else None)
        if column is None:
            continue
        data = event["data"]
        job_id, slot = uuid_of(data.get("job_id")), instant(data.get("scheduled_for"))
        if job_id is None or slot is None:
            continue  # not a run event of this shape: nothing to count
        sample = data if column in ("succeeded", "failed") else None
        team_id = event["team_id"]
        hour = hour_start(slot)
        _count(hourly, (job_id, hour), team_id, column, sample)
        day = day_start(slot)
        _count(daily, (job_id, day), team_id, column, sample)
        _count(weekly, (job_id, day - timedelta(days=day.weekday())), team_id, column, sample)
        if column != "retries":
            _count(team, (team_id, hour), team_id, column, None)
    for table, buckets in (("job_stats_hourly", hourly), ("job_stats_daily", daily),
                           ("job_stats_weekly", weekly), ("team_runs_hourly", team)):
        if buckets:
            await _write(conn, table, buckets)
