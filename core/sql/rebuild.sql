-- The rebuild of the inline projections and the read models from the log
-- (core/rebuild.py, core/projections/monitor_rows.py): the lock that holds the
-- writers, what is carried over, the truncations and the event streams replayed.

-- name: rebuild_lock_inline
-- Rebuild: writers of jobs, runs and monitors wait until the replayed tables are committed.
LOCK TABLE jobs, due_jobs, runs, run_attempts, monitors, monitor_ping_bodies, run_confirmations
    IN ACCESS EXCLUSIVE MODE;

-- name: rebuild_save_carried
-- What the log does not hold is carried over the rebuild: every attempt's request and
-- response, the lease of running runs and the confirmation tokens and deadlines of runs
-- (core/runs/confirm.py) (dropped at commit).
CREATE TEMPORARY TABLE rebuild_carried_attempts ON COMMIT DROP AS SELECT * FROM run_attempts;
CREATE TEMPORARY TABLE rebuild_carried_confirmations ON COMMIT DROP AS
    SELECT * FROM run_confirmations;
CREATE TEMPORARY TABLE rebuild_carried_leases ON COMMIT DROP AS
    SELECT id, lease_token, lease_expires_at FROM runs WHERE lease_token IS NOT NULL;
CREATE TEMPORARY TABLE rebuild_carried_ping_bodies ON COMMIT DROP AS
    SELECT * FROM monitor_ping_bodies;

-- name: rebuild_truncate_inline
TRUNCATE jobs, due_jobs, runs, run_attempts, monitors, monitor_ping_bodies, run_confirmations;

-- name: rebuild_restore_carried
UPDATE runs r SET lease_token = l.lease_token, lease_expires_at = l.lease_expires_at
FROM rebuild_carried_leases l
WHERE r.id = l.id AND r.status = 'running';
INSERT INTO run_attempts SELECT a.* FROM rebuild_carried_attempts a JOIN runs r ON r.id = a.run_id;
INSERT INTO run_confirmations
    SELECT c.* FROM rebuild_carried_confirmations c JOIN runs r ON r.id = c.run_id;
INSERT INTO monitor_ping_bodies
    SELECT b.* FROM rebuild_carried_ping_bodies b JOIN monitors m ON m.id = b.monitor_id;

-- name: rebuild_truncate_read_models
TRUNCATE job_stats_hourly, job_stats_daily, job_stats_weekly, team_runs_hourly, job_health,
         monitor_state, monitor_pings_daily, monitor_downtime;

-- name: rebuild_job_events
-- Job streams and the first event of every slot run (they advanced due_jobs), in log order;
-- tail: after the prune snapshot %(snapshot)s (every event when it is NULL).
SELECT global_position, stream_type, stream_id, stream_version, event_type, team_id, data,
       occurred_at,
       (%(snapshot)s::pg_snapshot IS NULL
        OR NOT pg_visible_in_snapshot(tx_id, %(snapshot)s::pg_snapshot)) AS tail
FROM events
WHERE stream_type = 'job'
   OR (stream_type = 'run' AND stream_version = 1
       AND data->>'trigger' IN ('schedule', 'catchup'))
ORDER BY global_position;

-- name: rebuild_run_events
-- Run events after the prune snapshot %(snapshot)s, and those at or after %(since)s (its copy of
-- runs holds the rows created before; NULL: every row) (every event when %(snapshot)s is NULL).
SELECT global_position, stream_type, stream_id, stream_version, event_type, team_id, data,
       occurred_at
FROM events
WHERE stream_type = 'run'
  AND (%(snapshot)s::pg_snapshot IS NULL
       OR NOT pg_visible_in_snapshot(tx_id, %(snapshot)s::pg_snapshot)
       OR occurred_at >= %(since)s::timestamptz)
ORDER BY global_position;

-- name: rebuild_runs_copy
COPY runs (id, job_id, team_id, scheduled_for, trigger, status, attempt, max_attempts,
           available_at, worker_id, started_at, finished_at, lateness_ms, duration_ms,
           response_status, error_class, error, reason, version, created_at, overran_at)
FROM STDIN;

-- name: rebuild_monitor_events
-- Monitor streams in log order (the monitors row is the fold of its stream), after the prune
-- snapshot %(snapshot)s (every event when it is NULL).
SELECT global_position, stream_type, stream_id, stream_version, event_type, team_id, data,
       occurred_at
FROM events
WHERE stream_type = 'monitor'
  AND (%(snapshot)s::pg_snapshot IS NULL
       OR NOT pg_visible_in_snapshot(tx_id, %(snapshot)s::pg_snapshot))
ORDER BY global_position;

-- name: rebuild_checkpoint_from_snapshot
-- After a prune, the read models start from the snapshot's copies at its checkpoint.
UPDATE projection_checkpoints
SET tx_id = %(tx_id)s::xid8, global_position = %(position)s::bigint,
    events_applied = %(applied)s::bigint
WHERE name = %(name)s;

-- name: rebuild_snapshot_rows
-- A template: {copy} is a table of the prune snapshot (core/retention/prune.py).
SELECT * FROM {copy};

-- name: rebuild_snapshot_columns
-- A template like rebuild_snapshot_rows: no rows, only the copy's columns.
SELECT * FROM {copy} LIMIT 0;

-- name: rebuild_snapshot_restore
-- A template: {table} a read model, {copy} its copy in the prune snapshot, {columns} the
-- copy's columns.
INSERT INTO {table} ({columns}) SELECT {columns} FROM {copy};
