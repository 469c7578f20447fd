-- The log read as history (core/history/, core/replay/): one stream up to an instant (time
-- travel, what-if replay), a job's final run outcomes with their recording transaction, and
-- the alerts actually queued for a job or monitor, the maintenance windows of a period. Reads only: nothing here writes.

-- name: ledger_stream_until
-- A stream's events in version order, up to the last one that occurred at or before `until`
-- (the stream's prefix as it stood then; a clock that stepped back cannot cut it in two).
-- kinds: the partitions its type can be in (core/retention/policy.py, stream_kinds).
SELECT global_position, event_id, stream_type, stream_id, stream_version, event_type, team_id,
       data, metadata, occurred_at, recorded_at, tx_id::text AS tx_id
FROM events
WHERE stream_id = %(stream_id)s::uuid
  AND event_retention_kind(stream_type, event_type) = ANY(%(kinds)s::text[])
  AND team_id = %(team_id)s::uuid
  AND stream_type = %(stream_type)s
  AND stream_version <= (SELECT max(stream_version) FROM events
                         WHERE stream_id = %(stream_id)s::uuid
                           AND event_retention_kind(stream_type, event_type)
                               = ANY(%(kinds)s::text[])
                           AND team_id = %(team_id)s::uuid
                           AND occurred_at <= %(until)s::timestamptz)
ORDER BY stream_version;

-- name: ledger_job_finals
-- A job's final outcomes (`run.succeeded`, `run.failed`) recorded in [from, to], each with the
-- transaction that recorded it (the recorder's batch), in recording order.
SELECT e.stream_id AS run_id, e.event_type, e.occurred_at, e.tx_id::text AS tx_id,
       e.global_position, r.scheduled_for, e.data
FROM runs r
JOIN events e ON e.stream_id = r.id AND event_retention_kind(e.stream_type, e.event_type) = 'runs'
WHERE r.job_id = %(job_id)s::uuid AND r.team_id = %(team_id)s::uuid
  AND e.event_type IN ('run.succeeded', 'run.failed')
  AND e.occurred_at >= %(from)s::timestamptz AND e.occurred_at <= %(to)s::timestamptz
ORDER BY e.occurred_at, e.tx_id, e.global_position;

-- name: ledger_job_last_success_before
-- When the last success of a job before `before` was recorded (a success ends every streak).
SELECT max(e.occurred_at) AS at
FROM runs r
JOIN events e ON e.stream_id = r.id AND e.event_type = 'run.succeeded'
               AND event_retention_kind(e.stream_type, e.event_type) = 'runs'
WHERE r.job_id = %(job_id)s::uuid AND r.team_id = %(team_id)s::uuid
  AND e.occurred_at < %(before)s::timestamptz;

-- name: ledger_alerts_queued
-- The alerts queued for one job or monitor in [from, to]: one per (event, instant), whatever
-- the number of channels it went to; `suppressed`: a maintenance window held it.
SELECT event, created_at AS at, count(*) AS channels,
       bool_or(status = 'suppressed') AS suppressed
FROM notifications
WHERE subject_type = %(subject_type)s AND subject_id = %(subject_id)s::uuid
  AND team_id = %(team_id)s::uuid
  AND created_at >= %(from)s::timestamptz AND created_at <= %(to)s::timestamptz
GROUP BY event, created_at
ORDER BY created_at, event;

-- name: ledger_definition_events
-- A job or monitor stream without what a ping or the checker appends (pings and status
-- flips change no definition field): its creation, edits and lifecycle, in version order.
-- A definition event is never a ping: they are all in events_keep.
SELECT stream_id, stream_version, event_type, team_id, data, metadata, occurred_at
FROM events
WHERE stream_id = %(stream_id)s::uuid
  AND event_retention_kind(stream_type, event_type) = 'keep'
  AND team_id = %(team_id)s::uuid
  AND stream_type = %(stream_type)s
  AND event_type <> ALL (%(skip)s::text[])
ORDER BY stream_version;

-- name: ledger_maintenance_windows
-- The team's maintenance windows that may have been in effect in [from, to] (created by `to`,
-- not ended or over before `from`), as they are now: what a replay applies.
SELECT * FROM maintenance_windows
WHERE team_id = %(team_id)s::uuid
  AND created_at <= %(to)s::timestamptz
  AND (ended_at IS NULL OR ended_at > %(from)s::timestamptz)
  AND (schedule IS NOT NULL OR ends_at > %(from)s::timestamptz)
ORDER BY created_at, id;
