-- name: event_append
-- Appends a batch of events (one per array position). The unique (stream_id, stream_version)
-- constraint rejects a stale expected version: the caller maps it to a concurrency conflict.
INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, data, metadata,
                    occurred_at)
SELECT * FROM unnest(%(stream_types)s::text[], %(stream_ids)s::uuid[], %(versions)s::int[],
                     %(event_types)s::text[], %(team_ids)s::uuid[], %(data)s::jsonb[],
                     %(metadata)s::jsonb[], %(occurred_at)s::timestamptz[])
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
