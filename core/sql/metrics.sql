-- Gauges for /metrics (core/metrics.py): cheap aggregates, read on every scrape.

-- name: metrics_snapshot
-- Cheap aggregate gauges for /metrics: every count uses an index or a small table.
SELECT
    (SELECT count(*) FROM due_jobs)::bigint AS due_jobs,
    (SELECT extract(epoch FROM greatest(%(now)s::timestamptz - min(due_at), '0'::interval))
       FROM due_jobs WHERE due_at <= %(now)s::timestamptz)::float8 AS schedule_lag_seconds,
    (SELECT count(*) FROM runs WHERE status = 'queued')::bigint AS runs_queued,
    (SELECT count(*) FROM runs WHERE status = 'running')::bigint AS runs_running,
    (SELECT count(*) FROM runs WHERE status = 'running'
       AND lease_expires_at <= %(now)s::timestamptz)::bigint AS leases_expired,
    (SELECT coalesce(max(global_position), 0) FROM events)::bigint AS event_position;

-- name: metrics_jobs_by_status
SELECT status, count(*)::bigint AS jobs FROM jobs GROUP BY status;
