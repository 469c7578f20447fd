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
SELECT global_position, event_id, stream_type, stream_id, stream_version, event_type, team_id,
       data, metadata, occurred_at, recorded_at
FROM events
WHERE stream_id = %(stream_id)s::uuid
  AND team_id = %(team_id)s::uuid
  AND stream_version > %(after_version)s::int
ORDER BY stream_version
LIMIT %(limit)s::int;

-- name: event_notify_wakeup
SELECT pg_notify('cronledger_wakeup', %(reason)s);
