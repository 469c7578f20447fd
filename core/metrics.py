"""Prometheus gauges computed from the database at scrape time.

Every process is stateless and any of them may answer a scrape, so the figures come from
PostgreSQL (cheap indexed aggregates), not from in-process counters.
"""

from __future__ import annotations

from datetime import datetime

from prometheus_client import CollectorRegistry, Gauge, generate_latest
from psycopg_pool import AsyncConnectionPool

from core.queries import Q

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


async def render_metrics(pool: AsyncConnectionPool, now: datetime) -> bytes:
    """The Prometheus text exposition of the scheduler's state at ``now``."""
    async with pool.connection() as conn:
        cur = await conn.execute(Q["metrics_snapshot"], {"now": now})
        snap = await cur.fetchone()
        cur = await conn.execute(Q["metrics_jobs_by_status"])
        jobs = await cur.fetchall()
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
    }
    for name, text in gauges.items():
        Gauge(f"cronledger_{name}", text, registry=registry).set(snap[name] or 0)
    return generate_latest(registry)
