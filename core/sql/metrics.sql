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
    (SELECT coalesce(max(global_position), 0) FROM events)::bigint AS event_position,
    (SELECT count(*) FROM workers
       WHERE seen_at > %(live_after)s::timestamptz)::bigint AS workers_live;

-- name: metrics_jobs_by_status
SELECT status, count(*)::bigint AS jobs FROM jobs GROUP BY status;

-- name: metrics_runs_by_outcome
-- Finished runs by outcome, from the team_runs_hourly read model (no per-job labels).
SELECT coalesce(sum(succeeded), 0)::bigint AS succeeded, coalesce(sum(failed), 0)::bigint AS failed,
       coalesce(sum(skipped), 0)::bigint AS skipped, coalesce(sum(missed), 0)::bigint AS missed
FROM team_runs_hourly;

-- name: metrics_run_histograms
-- Run duration and fire lateness, the weekly read model's histograms merged: one row per
-- (which, bucket index) with its count (core/projections/histogram.py explains the buckets).
SELECT 'duration' AS which, h.key::int AS bucket, sum(h.value::bigint)::bigint AS n
FROM job_stats_weekly, jsonb_each_text(duration_histogram) h GROUP BY h.key
UNION ALL
SELECT 'lateness', h.key::int, sum(h.value::bigint)::bigint
FROM job_stats_weekly, jsonb_each_text(lateness_histogram) h GROUP BY h.key;

-- name: metrics_slots_not_run
-- Slots among the runs kept that did not run, by reason: held by maintenance (the claim's
-- MAINTENANCE_REASON, core/runs/claim.py), else skipped by overlap, or missed (catch-up).
SELECT CASE WHEN status = 'missed' THEN 'missed'
            WHEN reason = 'maintenance' THEN 'held'
            ELSE 'skipped' END AS reason,
       count(*)::bigint AS slots
FROM runs
WHERE status IN ('skipped', 'missed')
GROUP BY 1;

-- name: metrics_pings_by_kind
SELECT coalesce(sum(success), 0)::bigint AS success, coalesce(sum(start), 0)::bigint AS start,
       coalesce(sum(fail), 0)::bigint AS fail, coalesce(sum(log), 0)::bigint AS log
FROM monitor_pings_daily;

-- name: metrics_monitors_by_status
SELECT status, count(*)::bigint AS monitors FROM monitors WHERE status <> 'deleted'
GROUP BY status;

-- name: metrics_notifications
-- Notifications by channel kind and outcome (status).
SELECT c.kind, n.status, count(*)::bigint AS notifications
FROM notifications n JOIN channels c ON c.id = n.channel_id
GROUP BY c.kind, n.status;

-- name: metrics_projector_lag
-- How far the read models are behind the log: events not yet applied, and seconds since the
-- checkpoint last moved while events wait.
SELECT greatest((SELECT coalesce(max(global_position), 0) FROM events) - p.global_position,
                0)::bigint AS events,
       extract(epoch FROM greatest(%(now)s::timestamptz - p.updated_at, '0'::interval))::float8
           AS seconds
FROM projection_checkpoints p WHERE p.name = 'reporting';

-- name: metrics_claim_durations
-- Claim durations (the `claim_seconds` that core/runs/claim.py puts in the metadata of the
-- events a claim appends), one sample per claim transaction, over the claims among the newest
-- `window` events: a range of the primary key, so the scan is bounded whatever the log's size.
SELECT count(*)::bigint AS claims,
       percentile_cont(ARRAY[0.5, 0.9, 0.99, 1.0]) WITHIN GROUP (ORDER BY seconds)
           AS quantiles
FROM (SELECT max((metadata->>'claim_seconds')::float8) AS seconds
      FROM events
      WHERE global_position > (SELECT coalesce(max(global_position), 0) FROM events)
                              - %(window)s
        AND metadata ? 'claim_seconds'
      GROUP BY tx_id) claims;
