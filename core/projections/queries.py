"""Reads of the asynchronous read models for the API and the dashboard: dashboard, job stats,
monitor uptime (one monitor, or day by day for several).

All reads are team-scoped. The read models trail the log by the projector's lag (normally
under ``CRONLEDGER_PROJECTOR_INTERVAL`` seconds); the dashboard reports the checkpoint.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from core.actor import Actor
from core.db import ConnectionPool, one_row
from core.errors import NotFound, invalid
from core.projections import histogram
from core.projections.common import day_start, hour_start
from core.projections.projector import CHECKPOINT
from core.queries import Q

JOB_STATUSES = ("active", "paused", "completed")
MONITOR_STATUSES = ("new", "up", "late", "down", "paused")
OUTCOMES = ("succeeded", "failed", "skipped", "missed")
LIST_LIMIT = 50
MAX_BUCKETS = {"hour": 24 * 31, "day": 366}
BUCKET_STEP = {"hour": timedelta(hours=1), "day": timedelta(days=1)}
RANGE_QUERIES = {"hour": Q["job_stats_hourly_range"], "day": Q["job_stats_daily_range"]}


async def dashboard(pool: ConnectionPool, actor: Actor, now: datetime, *,
                    lag: bool = True) -> dict[str, Any]:
    """The team's summary: jobs and monitors by status, runs of the last 24 hours (the current
    UTC hour and the 23 before it, by slot), failing jobs and down monitors (at most
    :data:`LIST_LIMIT` each, most recent failure / longest down first), and the projector's
    checkpoint with its lag in seconds (``lag=False``: ``lag_seconds`` is ``None``, and the
    statement that finds the oldest event not applied yet, planned over every partition of the
    log, is not run)."""
    team = {"team_id": actor.team_id}
    async with pool.connection() as conn:
        cur = await conn.execute(Q["dashboard_job_counts"], team)
        job_rows = await cur.fetchall()
        cur = await conn.execute(Q["dashboard_monitor_counts"], team)
        monitor_rows = await cur.fetchall()
        since = hour_start(now) - timedelta(hours=23)
        cur = await conn.execute(Q["dashboard_runs_since"], {**team, "since": since})
        runs = one_row(await cur.fetchone(), "dashboard_runs_since")  # an aggregate
        cur = await conn.execute(Q["dashboard_failing_jobs"], {**team, "limit": LIST_LIMIT})
        failing = await cur.fetchall()
        cur = await conn.execute(Q["dashboard_down_monitors"], {**team, "limit": LIST_LIMIT})
        down = await cur.fetchall()
        cur = await conn.execute(Q["projection_checkpoint_get"], {"name": CHECKPOINT})
        # the row is made by migration 0006
        checkpoint = one_row(await cur.fetchone(), "projection_checkpoint_get")
        lag_seconds = None
        if lag:
            cur = await conn.execute(Q["projection_lag"], {
                "tx_id": checkpoint["tx_id"], "position": checkpoint["global_position"]})
            lag_seconds = one_row(await cur.fetchone(), "projection_lag")["lag_seconds"]
    jobs = dict.fromkeys(JOB_STATUSES, 0) | {"failing": 0}
    for row in job_rows:
        if row["status"] in JOB_STATUSES:
            jobs[row["status"]] = row["jobs"]
        if row["status"] in ("active", "paused"):
            jobs["failing"] += row["failing"]
    monitors = dict.fromkeys(MONITOR_STATUSES, 0)
    monitors.update({r["status"]: r["monitors"] for r in monitor_rows})
    return {
        "jobs": jobs,
        "monitors": monitors,
        "runs_24h": {**runs, "total": sum(runs.values())},
        "failing_jobs": failing,
        "down_monitors": down,
        "projection": {"global_position": checkpoint["global_position"],
                       "updated_at": checkpoint["updated_at"], "lag_seconds": lag_seconds},
    }


def _range(start: datetime | None, end: datetime | None, now: datetime,
           default: timedelta) -> tuple[datetime, datetime]:
    """``[start, end)`` in UTC, the defaults filled in. ``start`` equal to ``end`` is an
    empty range, a question with an empty answer (docs/api.md, *The OpenAPI document*).

    Raises:
        InvalidInput: on ``from``: ``start`` after ``end``.
    """
    end = end or now
    start = start or end - default
    if start > end:
        raise invalid("from", "must not be after `to`")
    return start.astimezone(UTC), end.astimezone(UTC)


def success_rate(succeeded: int, failed: int) -> float | None:
    """The share of finished runs that succeeded (0 to 1, 4 decimals; ``None``: none
    finished): the one rule of a job's success rate (job stats, the status pages' days)."""
    finished = succeeded + failed
    return round(succeeded / finished, 4) if finished else None


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    counts = {c: sum(r[c] for r in rows) for c in (*OUTCOMES, "retries")}
    duration = histogram.merge(r["duration_histogram"] for r in rows)
    lateness = histogram.merge(r["lateness_histogram"] for r in rows)
    return {
        "runs": sum(counts[c] for c in OUTCOMES), **counts,
        "success_rate": success_rate(counts["succeeded"], counts["failed"]),
        "duration_ms": {"p50": histogram.percentile(duration, 0.5),
                        "p95": histogram.percentile(duration, 0.95)},
        "lateness_ms": {"p50": histogram.percentile(lateness, 0.5),
                        "p95": histogram.percentile(lateness, 0.95)},
    }


async def job_stats(
    pool: ConnectionPool, actor: Actor, job_id: uuid.UUID, *, start: datetime | None,
    end: datetime | None, bucket: str, now: datetime,
) -> dict[str, Any]:
    """Runs of one job per UTC ``hour`` or ``day`` bucket, by slot, over ``[start, end)``.

    Defaults: ``end`` = now, ``start`` = 24 hours (hour buckets) or 30 days (day buckets)
    before ``end``; ``start`` is rounded down to its bucket. Every bucket of the range is
    listed, empty ones included, then the totals over the range (percentiles of the merged
    histograms, within 4.9 % + 0.5 ms; see :mod:`core.projections.histogram`).

    Raises:
        InvalidInput: unknown bucket, ``start`` after ``end``, or too many buckets
            (:data:`MAX_BUCKETS`), on ``from``. ``start`` equal to ``end`` (after rounding:
            both on a bucket's start) lists no bucket.
        NotFound: no such job for this team (deleted jobs keep their statistics).
    """
    if bucket not in BUCKET_STEP:
        raise invalid("bucket", "must be `hour` or `day`")
    step = BUCKET_STEP[bucket]
    async with pool.connection() as conn:
        cur = await conn.execute(Q["job_exists_any"], {"id": job_id, "team_id": actor.team_id})
        if await cur.fetchone() is None:  # the id first (docs/api.md, The OpenAPI document)
            raise NotFound(f"job {job_id} not found")
        start, end = _range(start, end, now, timedelta(hours=24) if bucket == "hour"
                            else timedelta(days=30))
        first = hour_start(start) if bucket == "hour" else day_start(start)
        if (end - first) / step > MAX_BUCKETS[bucket]:
            raise invalid("from", f"the range holds more than {MAX_BUCKETS[bucket]} {bucket} "
                                  "buckets")
        cur = await conn.execute(RANGE_QUERIES[bucket], {
            "job_id": job_id, "team_id": actor.team_id, "start": first, "end": end})
        rows = {r["bucket_start"]: r for r in await cur.fetchall()}
    empty = {**dict.fromkeys((*OUTCOMES, "retries"), 0), "duration_histogram": {},
             "lateness_histogram": {}}
    items, at = [], first
    while at < end:
        items.append({"bucket_start": at, **_summary([rows.get(at, empty)])})
        at += step
    return {"job_id": job_id, "bucket": bucket, "from": first, "to": end, "items": items,
            "totals": _summary(list(rows.values()))}


async def monitor_uptime(
    pool: ConnectionPool, actor: Actor, monitor_id: uuid.UUID, *, start: datetime | None,
    end: datetime | None, now: datetime,
) -> dict[str, Any]:
    """Downtime periods and uptime percentage of one monitor over ``[start, end)``.

    Defaults: ``end`` = now, ``start`` = 30 days before ``end``. The monitored time is the
    part of the range between the monitor's creation and its deletion (and not after now);
    ``uptime_percent`` = 100 × (1 − downtime / monitored time), ``None`` when nothing was
    monitored. Paused time counts as monitored and up; a paused monitor's downtime ends.

    Raises:
        InvalidInput: ``start`` after ``end`` (equal: nothing monitored, ``uptime_percent``
            ``None``).
        NotFound: the team has no monitor stream with this id.
    """
    async with pool.connection() as conn:
        cur = await conn.execute(Q["monitor_has_events"],
                                 {"id": monitor_id, "team_id": actor.team_id})
        if await cur.fetchone() is None:  # the id first (docs/api.md, The OpenAPI document)
            raise NotFound(f"monitor {monitor_id} not found")
        start, end = _range(start, end, now, timedelta(days=30))
        cur = await conn.execute(Q["monitor_state_get"], {"id": monitor_id})
        state = await cur.fetchone()
        cur = await conn.execute(Q["monitor_downtime_between"],
                                 {"id": monitor_id, "start": start, "end": end})
        periods = await cur.fetchall()
    monitored, down, percent = uptime_over(state, periods, start, end, now)
    items = [{"started_at": p["started_at"], "ended_at": p["ended_at"],
              "duration_seconds": ((p["ended_at"] or now) - p["started_at"]).total_seconds(),
              "end_reason": p["end_reason"]} for p in periods]
    return {
        "monitor_id": monitor_id, "from": start, "to": end,
        "status": state["status"] if state else None,
        "monitored_seconds": monitored, "downtime_seconds": down,
        "uptime_percent": percent, "downtime_periods": items,
    }


def uptime_over(state: dict[str, Any] | None, periods: list[dict[str, Any]], start: datetime,
            end: datetime, now: datetime) -> tuple[float, float, float | None]:
    """``(monitored seconds, downtime seconds, uptime percent)`` of one monitor over
    ``[start, end)``: the rule of :func:`monitor_uptime` (``periods`` are its downtime rows
    that overlap the range, ``state`` its ``monitor_state`` row)."""
    lower = max(start, state["created_at"]) if state else start
    upper = min(end, now, (state and state["deleted_at"]) or end)
    monitored = max(0.0, (upper - lower).total_seconds())
    down = 0.0
    for p in periods:
        overlap = (min(p["ended_at"] or now, upper) - max(p["started_at"], lower))
        down += max(0.0, overlap.total_seconds())
    return monitored, down, round(100 * (1 - down / monitored), 4) if monitored else None


async def monitors_uptime_days(
    pool: ConnectionPool, actor: Actor, monitor_ids: list[uuid.UUID], *, days: int,
    now: datetime,
) -> dict[uuid.UUID, list[dict[str, Any]]]:
    """Day-by-day uptime of several monitors: the last ``days`` UTC days up to ``now`` (today
    included, oldest first), by the rule of :func:`monitor_uptime` applied to each day.

    Two statements for all the monitors (the dashboard's uptime bars). Monitors of another
    team, or not yet seen by the projector, get ``uptime_percent`` ``None`` every day.

    Returns:
        ``{monitor_id: [{"day": date, "uptime_percent": float | None,
        "downtime_seconds": float, "monitored_seconds": float}, …]}`` for every id asked
    """
    first = day_start(now) - timedelta(days=days - 1)
    async with pool.connection() as conn:
        cur = await conn.execute(Q["monitor_state_many"],
                                 {"ids": monitor_ids, "team_id": actor.team_id})
        states = {row["monitor_id"]: row for row in await cur.fetchall()}
        cur = await conn.execute(Q["monitor_downtime_many"], {
            "ids": list(states), "team_id": actor.team_id, "start": first, "end": now})
        periods: dict[uuid.UUID, list[dict[str, Any]]] = {}
        for row in await cur.fetchall():
            periods.setdefault(row["monitor_id"], []).append(row)
    out: dict[uuid.UUID, list[dict[str, Any]]] = {}
    spans = _day_spans(first, days)
    for monitor_id in monitor_ids:
        state, bar = states.get(monitor_id), []
        by_day = periods_by_day(periods.get(monitor_id, []), first, days)
        clean: tuple[float, float, float | None] | None = None  # a whole day, no downtime
        for n, (start, end, date) in enumerate(spans):
            if state is None or start >= now:
                bar.append({"day": date, "uptime_percent": None,
                            "downtime_seconds": 0.0, "monitored_seconds": 0.0})
                continue
            overlapping = by_day.get(n, [])
            whole = (not overlapping and state["created_at"] <= start and end <= now
                     and (state["deleted_at"] is None or end <= state["deleted_at"]))
            if whole:  # every such day has the same answer: ask the rule once
                clean = clean or uptime_over(state, [], start, end, now)
            monitored, down, percent = clean if whole and clean else uptime_over(
                state, overlapping, start, end, now)
            bar.append({"day": date, "uptime_percent": percent,
                        "downtime_seconds": down, "monitored_seconds": monitored})
        out[monitor_id] = bar
    return out


def _day_spans(first: datetime, days: int) -> list[tuple[datetime, datetime, Any]]:
    """``(start, end, date)`` of ``days`` UTC days from ``first``, computed once per read."""
    starts = [first + timedelta(days=n) for n in range(days + 1)]
    return [(starts[n], starts[n + 1], starts[n].date()) for n in range(days)]


def periods_by_day(periods: list[dict[str, Any]], first: datetime,
                    days: int) -> dict[int, list[dict[str, Any]]]:
    """The downtime ``periods`` by the index of each of the ``days`` UTC days from ``first``
    they overlap (``started_at`` before the day's end, ``ended_at`` open or after its start),
    so a day's are found without scanning them all (90 days of 100 monitors a page)."""
    day = timedelta(days=1)
    out: dict[int, list[dict[str, Any]]] = {}
    for p in periods:
        low = max(0, (p["started_at"] - first) // day)
        if p["ended_at"] is None:
            high = days - 1
        else:
            high = min(days - 1, -((first - p["ended_at"]) // day) - 1)  # ceil, minus one
        for n in range(low, high + 1):
            out.setdefault(n, []).append(p)
    return out


def uptime_class(percent: float | None) -> str:
    """The class of a day's figure on an uptime bar (the dashboard's and the status pages'):
    ``none`` (no data), ``up`` (100 %), ``dip`` (at least 99 %) or ``down``."""
    if percent is None:
        return "none"
    return "up" if percent >= 100 else "dip" if percent >= 99 else "down"


