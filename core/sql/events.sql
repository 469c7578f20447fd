-- The event log (core/events.py): append a batch, read one stream, and the
-- `cronledger_wakeup` notification that commits with the events.

-- name: event_append
-- Appends a batch of events, given as one JSON array in order. The unique
-- (stream_id, stream_version) constraint rejects a stale expected version: the caller maps it to
-- a concurrency conflict.
INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, data, metadata,
                    occurred_at)
SELECT e.stream_type, e.stream_id, e.stream_version, e.event_type, e.team_id, e.data,
       e.metadata, e.occurred_at
FROM ROWS FROM (jsonb_to_recordset(%(rows)s::jsonb) AS (
    stream_type text, stream_id uuid, stream_version int, event_type text, team_id uuid,
    data jsonb, metadata jsonb, occurred_at timestamptz)) WITH ORDINALITY AS e
ORDER BY e.ordinality
RETURNING global_position;

-- name: event_read_stream
-- One stream in version order. kinds: the partitions of events a stream of its type can be in
-- (core/retention/policy.py, stream_kinds): naming the partition key lets the planner skip the
-- daily leaves of the other kinds (a job's definition stream is all in events_keep).
SELECT global_position, event_id, stream_type, stream_id, stream_version, event_type, team_id,
       data, metadata, occurred_at, recorded_at
FROM events
WHERE stream_id = %(stream_id)s::uuid
  AND event_retention_kind(stream_type, event_type) = ANY(%(kinds)s::text[])
  AND stream_type = %(stream_type)s::text
  AND team_id = %(team_id)s::uuid
  AND stream_version > %(after_version)s::int
ORDER BY stream_version
LIMIT %(limit)s::int;

-- name: event_notify_wakeup
SELECT pg_notify('cronledger_wakeup', %(reason)s);

-- name: event_list_team
-- The team's events, newest first (the dashboard's overview and audit log); keyset on
-- global_position. A PL/pgSQL function, so its plan over every leaf of the log is made once per
-- server process (migrations/versions/2026_12_02_0035_event_list_function.py says why and how).
SELECT global_position, event_id, stream_type, stream_id, stream_version, event_type, data,
       metadata, occurred_at
FROM event_list_team(%(team_id)s::uuid, %(before)s::bigint, %(limit)s::int);

-- name: event_plans_warm_limits
-- For the rest of a warm-up's transaction (core/events.py:warm_event_plans): wait at most
-- 100 ms for a lock and 2 s in all.
SELECT set_config('lock_timeout', '100ms', true), set_config('statement_timeout', '2s', true);

-- name: event_list_team_filtered
-- The same with filters by stream type, actor (metadata.actor) and time range. A PL/pgSQL
-- function, so its plans over the leaves of the log are made once per server process
-- (migrations/versions/2026_12_02_0039_ping_list_event_filter_functions.py says how each
-- reads). kinds: the partitions of events a stream of that type can be in (core/events.py,
-- stream_kinds), NULL without a stream type.
SELECT global_position, event_id, stream_type, stream_id, stream_version, event_type, data,
       metadata, occurred_at
FROM event_list_team_filtered(%(team_id)s::uuid, %(before)s::bigint, %(kinds)s::text[],
                              %(stream_type)s::text, %(actor)s::text,
                              %(since)s::timestamptz, %(until)s::timestamptz,
                              %(limit)s::int);
