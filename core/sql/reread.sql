-- Stored words read again (core/stored.py, reread_stored; migrations 0019 on): the live jobs and
-- monitors written in words, and the removal of words that no longer mean the stored schedule
-- (the definition event and the row, at the next stream version).

-- name: reread_jobs
SELECT id, team_id, schedule, timezone, schedule_text, version, anchor_at AS anchor
FROM jobs WHERE schedule_text IS NOT NULL AND status <> 'deleted' ORDER BY id;

-- name: reread_monitors
SELECT id, team_id, schedule, timezone, schedule_text, version, created_at AS anchor
FROM monitors WHERE schedule_text IS NOT NULL AND status <> 'deleted' ORDER BY id;

-- name: reread_event_append
INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, data, metadata,
                    occurred_at)
VALUES (%(stream)s::text, %(id)s::uuid, %(version)s::int, %(stream)s::text || '.updated',
        %(team_id)s::uuid, %(data)s::jsonb, %(metadata)s::jsonb, %(now)s::timestamptz);

-- name: reread_job_words_remove
UPDATE jobs SET schedule_text = NULL, version = %(version)s::int, updated_at = %(now)s::timestamptz
WHERE id = %(id)s::uuid;

-- name: reread_monitor_words_remove
UPDATE monitors SET schedule_text = NULL, version = %(version)s::int,
       updated_at = %(now)s::timestamptz
WHERE id = %(id)s::uuid;
