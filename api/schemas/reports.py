"""Bodies of the read-model routes: ``/v1/dashboard``, job stats, monitor uptime."""

from __future__ import annotations

import uuid
from datetime import datetime

from msgspec import Struct


class JobCounts(Struct):
    active: int
    paused: int
    completed: int
    failing: int


class MonitorCounts(Struct):
    new: int
    up: int
    late: int
    down: int
    paused: int


class RunCounts(Struct):
    succeeded: int
    failed: int
    skipped: int
    missed: int
    total: int


class FailingJob(Struct):
    id: uuid.UUID
    name: str
    status: str
    last_failure_at: datetime | None
    last_error_class: str | None
    last_error: str | None
    consecutive_failures: int


class DownMonitor(Struct):
    id: uuid.UUID
    name: str
    down_since: datetime | None
    last_ping_at: datetime | None


class ProjectionState(Struct):
    """The read models' checkpoint; ``lag_seconds``: how long ago the oldest event they do not
    include yet was recorded (0: they are up to date), as the database that answered sees it
    (docs/operations.md, "Read replica")."""

    global_position: int
    updated_at: datetime
    lag_seconds: float


class Dashboard(Struct):
    """``GET /v1/dashboard``: from the asynchronous read models (``projection`` tells how far
    they are)."""

    jobs: JobCounts
    monitors: MonitorCounts
    runs_24h: RunCounts
    failing_jobs: list[FailingJob]
    down_monitors: list[DownMonitor]
    projection: ProjectionState


class Percentiles(Struct):
    p50: int | None
    p95: int | None


class StatsBucket(Struct):
    runs: int
    succeeded: int
    failed: int
    skipped: int
    missed: int
    retries: int
    success_rate: float | None
    duration_ms: Percentiles
    lateness_ms: Percentiles
    bucket_start: datetime | None = None


class JobStats(Struct, rename={"from_": "from"}):
    job_id: uuid.UUID
    bucket: str
    from_: datetime
    to: datetime
    items: list[StatsBucket]
    totals: StatsBucket


class DowntimePeriod(Struct):
    started_at: datetime
    ended_at: datetime | None
    duration_seconds: float
    end_reason: str | None


class MonitorUptime(Struct, rename={"from_": "from"}):
    monitor_id: uuid.UUID
    from_: datetime
    to: datetime
    status: str | None
    monitored_seconds: float
    downtime_seconds: float
    uptime_percent: float | None
    downtime_periods: list[DowntimePeriod]
