-- Reads of the read models for the API (core/projections/queries.py): the dashboard's counts
-- and lists, a job's hourly and daily stats, a monitor's state and downtime (after
-- `monitor_has_events` found it in the team). Nothing here writes.

-- name: dashboard_job_counts
-- A job is failing when its last final outcome failed and it is active or paused.
SELECT status, count(*)::int AS jobs,
       count(*) FILTER (WHERE last_outcome = 'failed')::int AS failing
FROM job_health
WHERE team_id = %(team_id)s::uuid
GROUP BY status;

-- name: dashboard_monitor_counts
SELECT status, count(*)::int AS monitors
FROM monitor_state
WHERE team_id = %(team_id)s::uuid AND status <> 'deleted'
GROUP BY status;

-- name: dashboard_runs_since
SELECT coalesce(sum(succeeded), 0)::int AS succeeded, coalesce(sum(failed), 0)::int AS failed,
       coalesce(sum(skipped), 0)::int AS skipped, coalesce(sum(missed), 0)::int AS missed
FROM team_runs_hourly
WHERE team_id = %(team_id)s::uuid AND bucket_start >= %(since)s::timestamptz;

-- name: dashboard_failing_jobs
SELECT job_id AS id, name, status, last_failure_at, last_error_class, last_error,
       consecutive_failures
FROM job_health
WHERE team_id = %(team_id)s::uuid AND last_outcome = 'failed'
  AND status IN ('active', 'paused')
ORDER BY last_failure_at DESC, job_id
LIMIT %(limit)s::int;

-- name: dashboard_down_monitors
SELECT monitor_id AS id, name, down_since, last_ping_at
FROM monitor_state
WHERE team_id = %(team_id)s::uuid AND status = 'down'
ORDER BY down_since, monitor_id
LIMIT %(limit)s::int;

-- name: job_stats_hourly_range
SELECT bucket_start, succeeded, failed, skipped, missed, retries, duration_histogram,
       lateness_histogram
FROM job_stats_hourly
WHERE job_id = %(job_id)s::uuid AND team_id = %(team_id)s::uuid
  AND bucket_start >= %(start)s::timestamptz AND bucket_start < %(end)s::timestamptz
ORDER BY bucket_start;

-- name: job_stats_daily_range
SELECT bucket_start, succeeded, failed, skipped, missed, retries, duration_histogram,
       lateness_histogram
FROM job_stats_daily
WHERE job_id = %(job_id)s::uuid AND team_id = %(team_id)s::uuid
  AND bucket_start >= %(start)s::timestamptz AND bucket_start < %(end)s::timestamptz
ORDER BY bucket_start;

-- name: monitor_has_events
-- The monitor exists for this team when its stream does (the uptime read models may lag);
-- its monitor.created is in events_keep.
SELECT 1 AS found FROM events
WHERE stream_id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND stream_type = 'monitor'
  AND event_retention_kind(stream_type, event_type) = 'keep'
LIMIT 1;

-- name: monitor_state_get
SELECT status, created_at, deleted_at FROM monitor_state WHERE monitor_id = %(id)s::uuid;

-- name: monitor_state_many
-- Several monitors of one team (the dashboard's uptime bars).
SELECT monitor_id, status, created_at, deleted_at FROM monitor_state
WHERE monitor_id = ANY(%(ids)s::uuid[]) AND team_id = %(team_id)s::uuid;

-- name: monitor_downtime_many
-- The downtime periods of several monitors that overlap [start, end).
SELECT monitor_id, started_at, ended_at, end_reason
FROM monitor_downtime
WHERE monitor_id = ANY(%(ids)s::uuid[])
  AND team_id = %(team_id)s::uuid
  AND started_at < %(end)s::timestamptz
  AND (ended_at IS NULL OR ended_at > %(start)s::timestamptz)
ORDER BY monitor_id, started_at;

-- name: monitor_downtime_between
SELECT started_at, ended_at, end_reason
FROM monitor_downtime
WHERE monitor_id = %(id)s::uuid
  AND started_at < %(end)s::timestamptz
  AND (ended_at IS NULL OR ended_at > %(start)s::timestamptz)
  AND %(start)s::timestamptz < %(end)s::timestamptz  -- an empty range overlaps nothing
ORDER BY started_at;

-- name: projection_lag
-- Seconds since the next event the read models have not applied yet (in the projector's
-- (tx_id, global_position) order) was recorded, 0 when none, by the database's clock
-- (docs/operations.md, "Read replica"); the same index walk as projection_events_after, planned
-- once per server process (the function of migration 0040).
SELECT lag_seconds FROM projection_lag_seconds(%(tx_id)s::xid8, %(position)s::bigint);
