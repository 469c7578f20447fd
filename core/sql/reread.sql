-- Stored words read again (core/stored.py, reread_stored; migrations 0019 on): the live jobs and
-- monitors written in words, and the removal of words that no longer mean the stored schedule
-- (the row, at the next stream version; the definition event goes through events.sql's
-- event_append, numbered by core/events.py:Head).

-- name: reread_jobs
SELECT id, team_id, schedule, timezone, schedule_text, version, anchor_at AS anchor
FROM jobs WHERE schedule_text IS NOT NULL AND status <> 'deleted' ORDER BY id;

-- name: reread_monitors
SELECT id, team_id, schedule, timezone, schedule_text, version, created_at AS anchor
FROM monitors WHERE schedule_text IS NOT NULL AND status <> 'deleted' ORDER BY id;

-- name: reread_job_words_remove
UPDATE jobs SET schedule_text = NULL, version = %(version)s::int, updated_at = %(now)s::timestamptz
WHERE id = %(id)s::uuid;

-- name: reread_monitor_words_remove
UPDATE monitors SET schedule_text = NULL, version = %(version)s::int,
       updated_at = %(now)s::timestamptz
WHERE id = %(id)s::uuid;
