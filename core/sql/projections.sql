-- The asynchronous projector (core/projections/projector.py): its checkpoint, the batches of
-- events after it, the events it skipped, and the writes of the read models it maintains
-- (migration 0004): job stats, team runs, job health, monitor state, pings and downtime.
-- Their reads are in reports.sql, the rebuild from the log in rebuild.sql.

-- name: projection_checkpoint_lock
-- One projector at a time per checkpoint: the others skip it instead of queueing.
SELECT name, tx_id::text AS tx_id, global_position
FROM projection_checkpoints
WHERE name = %(name)s
FOR UPDATE SKIP LOCKED;

-- name: projection_checkpoint_get
SELECT name, tx_id::text AS tx_id, global_position, events_applied, updated_at
FROM projection_checkpoints
WHERE name = %(name)s;

-- name: projection_events_after
-- Events after the checkpoint in (tx_id, global_position) order, only from transactions older
-- than every transaction still running: no later commit can ever land before this point, so an
-- event committed late by a slow transaction is never skipped (docs/architecture.md).
-- (ORDER BY names the table's columns: the output column tx_id is text.)
SELECT e.global_position, e.tx_id::text AS tx_id, e.stream_type, e.stream_id, e.stream_version,
       e.event_type, e.team_id, e.data, e.occurred_at
FROM events e
WHERE (e.tx_id, e.global_position) > (%(tx_id)s::xid8, %(position)s::bigint)
  AND e.tx_id < (SELECT pg_snapshot_xmin(pg_current_snapshot()))
ORDER BY e.tx_id, e.global_position
LIMIT %(limit)s::int;

-- name: projection_skip_record
-- An event a projection could not apply (core/projections/projector.py, the rebuilds): kept,
-- with its reason, under the projection's name ('reporting', 'rebuild:runs', …).
INSERT INTO projection_skipped (name, global_position, tx_id, event_type, stream_id, reason,
                                skipped_at)
SELECT %(name)s, e.global_position, e.tx_id, e.event_type, e.stream_id, %(reason)s,
       %(now)s::timestamptz
FROM events e WHERE e.global_position = %(position)s::bigint
ON CONFLICT ON CONSTRAINT projection_skipped_pkey DO UPDATE
SET reason = excluded.reason, skipped_at = excluded.skipped_at;

-- name: projection_checkpoint_advance
-- Forward only: a stale or repeated batch updates nothing and the caller rolls back.
UPDATE projection_checkpoints
SET tx_id = %(tx_id)s::xid8, global_position = %(position)s::bigint,
    events_applied = events_applied + %(count)s::bigint, updated_at = %(now)s::timestamptz
WHERE name = %(name)s
  AND (tx_id, global_position) < (%(tx_id)s::xid8, %(position)s::bigint)
RETURNING name;

-- name: projection_checkpoint_checked
-- Nothing to apply: the read models are current as of now. Written at most every
-- CHECKED_SECONDS while idle (core/projections/projector.py), so an idle instance does not
-- look stale and an idle database is not written to every poll (a checkpoint dated after now,
-- a clock set back, is refreshed too).
UPDATE projection_checkpoints
SET updated_at = %(now)s::timestamptz
WHERE name = %(name)s
  AND updated_at NOT BETWEEN %(now)s::timestamptz - make_interval(secs => %(every)s::float8)
                         AND %(now)s::timestamptz;

-- name: projection_notify
-- A batch was applied: the dashboard's live regions render again (api/ui/live.py). Once per
-- batch, delivered at commit; the events' own inserts never notify (see the projector).
SELECT pg_notify('cronledger_projected', '');

-- name: projection_checkpoint_reset
-- Rebuild only: waits for a running batch, then starts the read models from the beginning.
UPDATE projection_checkpoints
SET tx_id = '0'::xid8, global_position = 0, events_applied = 0, updated_at = %(now)s::timestamptz
WHERE name = %(name)s
RETURNING name;

-- Read models are written from one JSON array of rows per statement (json_to_recordset):
-- much cheaper to send than one PostgreSQL array per column.

-- name: job_stats_load
-- A template for the three job stats tables (same columns, migration 0006): {table} is
-- job_stats_hourly, job_stats_daily or job_stats_weekly, filled with psycopg.sql.Identifier by
-- core/projections/job_stats.py (an identifier cannot be a bound parameter). The bucket itself
-- (hour, UTC day, ISO week) is computed there and comes as data.
SELECT s.job_id AS key_id, s.bucket_start, s.succeeded, s.failed, s.skipped, s.missed, s.retries,
       s.duration_histogram, s.lateness_histogram
FROM {table} s
JOIN json_to_recordset(%(keys)s::json) AS k(id uuid, bucket_start timestamptz)
  ON s.job_id = k.id AND s.bucket_start = k.bucket_start;

-- name: job_stats_upsert
-- A template like job_stats_load ({table}, and {pkey}: that table's primary key constraint).
-- The row's new totals (the batch added to what _load returned; histograms merged in Python).
INSERT INTO {table} AS t (job_id, bucket_start, team_id, succeeded, failed, skipped,
                     missed, retries, duration_histogram, lateness_histogram, p50_duration_ms,
                     p95_duration_ms, p50_lateness_ms, p95_lateness_ms)
SELECT r.id, r.bucket_start, r.team_id, r.succeeded, r.failed, r.skipped, r.missed, r.retries,
       r.duration_histogram, r.lateness_histogram, r.p50_duration_ms, r.p95_duration_ms,
       r.p50_lateness_ms, r.p95_lateness_ms
FROM json_to_recordset(%(rows)s::json) AS r(
    id uuid, bucket_start timestamptz, team_id uuid, succeeded int, failed int, skipped int,
    missed int, retries int, duration_histogram jsonb, lateness_histogram jsonb,
    p50_duration_ms int, p95_duration_ms int, p50_lateness_ms int, p95_lateness_ms int)
ON CONFLICT ON CONSTRAINT {pkey} DO UPDATE SET
    succeeded = excluded.succeeded, failed = excluded.failed, skipped = excluded.skipped,
    missed = excluded.missed, retries = excluded.retries,
    duration_histogram = excluded.duration_histogram,
    lateness_histogram = excluded.lateness_histogram,
    p50_duration_ms = excluded.p50_duration_ms, p95_duration_ms = excluded.p95_duration_ms,
    p50_lateness_ms = excluded.p50_lateness_ms, p95_lateness_ms = excluded.p95_lateness_ms;

-- name: team_runs_hourly_load
SELECT s.team_id AS key_id, s.bucket_start, s.succeeded, s.failed, s.skipped, s.missed
FROM team_runs_hourly s
JOIN json_to_recordset(%(keys)s::json) AS k(id uuid, bucket_start timestamptz)
  ON s.team_id = k.id AND s.bucket_start = k.bucket_start;

-- name: team_runs_hourly_upsert
INSERT INTO team_runs_hourly AS t (team_id, bucket_start, succeeded, failed, skipped, missed)
SELECT r.id, r.bucket_start, r.succeeded, r.failed, r.skipped, r.missed
FROM json_to_recordset(%(rows)s::json) AS r(
    id uuid, bucket_start timestamptz, succeeded int, failed int, skipped int, missed int)
ON CONFLICT ON CONSTRAINT team_runs_hourly_pkey DO UPDATE SET
    succeeded = excluded.succeeded, failed = excluded.failed, skipped = excluded.skipped,
    missed = excluded.missed;

-- name: job_health_load
SELECT h.job_id, h.team_id, h.name, h.status, h.last_outcome, h.last_outcome_at,
       h.last_failure_at, h.last_error_class, h.last_error, h.consecutive_failures, h.updated_at
FROM job_health h
JOIN json_to_recordset(%(keys)s::json) AS k(id uuid) ON h.job_id = k.id;

-- name: job_health_upsert
INSERT INTO job_health AS t (job_id, team_id, name, status, last_outcome, last_outcome_at,
                             last_failure_at, last_error_class, last_error,
                             consecutive_failures, updated_at)
SELECT r.job_id, r.team_id, r.name, r.status, r.last_outcome, r.last_outcome_at,
       r.last_failure_at, r.last_error_class, r.last_error, r.consecutive_failures, r.updated_at
FROM json_to_recordset(%(rows)s::json) AS r(
    job_id uuid, team_id uuid, name text, status text, last_outcome text,
    last_outcome_at timestamptz, last_failure_at timestamptz, last_error_class text,
    last_error text, consecutive_failures int, updated_at timestamptz)
ON CONFLICT ON CONSTRAINT job_health_pkey DO UPDATE SET
    name = excluded.name, status = excluded.status, last_outcome = excluded.last_outcome,
    last_outcome_at = excluded.last_outcome_at, last_failure_at = excluded.last_failure_at,
    last_error_class = excluded.last_error_class, last_error = excluded.last_error,
    consecutive_failures = excluded.consecutive_failures, updated_at = excluded.updated_at;

-- name: monitor_state_load
SELECT m.monitor_id, m.team_id, m.name, m.status, m.last_ping_at, m.down_since, m.created_at,
       m.deleted_at, m.updated_at
FROM monitor_state m
JOIN json_to_recordset(%(keys)s::json) AS k(id uuid) ON m.monitor_id = k.id;

-- name: monitor_state_upsert
INSERT INTO monitor_state AS t (monitor_id, team_id, name, status, last_ping_at, down_since,
                                created_at, deleted_at, updated_at)
SELECT r.monitor_id, r.team_id, r.name, r.status, r.last_ping_at, r.down_since, r.created_at,
       r.deleted_at, r.updated_at
FROM json_to_recordset(%(rows)s::json) AS r(
    monitor_id uuid, team_id uuid, name text, status text, last_ping_at timestamptz,
    down_since timestamptz, created_at timestamptz, deleted_at timestamptz,
    updated_at timestamptz)
ON CONFLICT ON CONSTRAINT monitor_state_pkey DO UPDATE SET
    name = excluded.name, status = excluded.status, last_ping_at = excluded.last_ping_at,
    down_since = excluded.down_since, deleted_at = excluded.deleted_at,
    updated_at = excluded.updated_at;

-- name: monitor_pings_daily_add
INSERT INTO monitor_pings_daily AS t (monitor_id, day, team_id, pings, success, start, fail, log)
SELECT r.monitor_id, r.day, r.team_id, r.pings, r.success, r.start, r.fail, r.log
FROM json_to_recordset(%(rows)s::json) AS r(
    monitor_id uuid, day date, team_id uuid, pings int, success int, start int, fail int,
    log int)
ON CONFLICT ON CONSTRAINT monitor_pings_daily_pkey DO UPDATE SET
    pings = t.pings + excluded.pings, success = t.success + excluded.success,
    start = t.start + excluded.start, fail = t.fail + excluded.fail, log = t.log + excluded.log;

-- name: monitor_downtime_upsert
INSERT INTO monitor_downtime AS t (monitor_id, started_at, team_id, ended_at, end_reason)
SELECT r.monitor_id, r.started_at, r.team_id, r.ended_at, r.end_reason
FROM json_to_recordset(%(rows)s::json) AS r(
    monitor_id uuid, started_at timestamptz, team_id uuid, ended_at timestamptz,
    end_reason text)
ON CONFLICT ON CONSTRAINT monitor_downtime_pkey DO UPDATE SET
    ended_at = excluded.ended_at, end_reason = excluded.end_reason;
