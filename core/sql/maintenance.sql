-- Maintenance windows: the `maintenance_windows` inline projection of the `maintenance` stream
-- (written by core/maintenance/commands.py), its team-scoped reads, the windows the alert
-- suppression, the claim and the release service look at, and the release's reads of the
-- monitors a closing window held alerts for (docs/ledger.md).

-- name: maintenance_upsert
INSERT INTO maintenance_windows (id, team_id, starts_at, ends_at, schedule, timezone,
                                 duration_seconds, jobs, monitors, tags, suppress, comment,
                                 ended_at, released_until, version, created_at, updated_at)
VALUES (%(id)s::uuid, %(team_id)s::uuid, %(from)s::timestamptz, %(to)s::timestamptz,
        %(schedule)s, %(timezone)s, %(duration_seconds)s::int, %(jobs)s::uuid[],
        %(monitors)s::uuid[], %(tags)s::text[], %(suppress)s, %(comment)s,
        %(ended_at)s::timestamptz, %(released_until)s::timestamptz, %(version)s::int,
        %(created_at)s::timestamptz, %(updated_at)s::timestamptz)
ON CONFLICT ON CONSTRAINT maintenance_windows_pkey DO UPDATE SET
    starts_at = excluded.starts_at, ends_at = excluded.ends_at, schedule = excluded.schedule,
    timezone = excluded.timezone, duration_seconds = excluded.duration_seconds,
    jobs = excluded.jobs, monitors = excluded.monitors, tags = excluded.tags,
    suppress = excluded.suppress, comment = excluded.comment, ended_at = excluded.ended_at,
    released_until = excluded.released_until, version = excluded.version,
    updated_at = excluded.updated_at;

-- name: maintenance_lock
SELECT * FROM maintenance_windows
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid
FOR UPDATE;

-- name: maintenance_get
SELECT * FROM maintenance_windows
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid;

-- name: maintenance_list
-- Keyset pagination on (created_at, id).
SELECT * FROM maintenance_windows
WHERE team_id = %(team_id)s::uuid
  AND (%(after_created)s::timestamptz IS NULL
       OR (created_at, id) > (%(after_created)s::timestamptz, %(after_id)s::uuid))
ORDER BY created_at, id
LIMIT %(limit)s::int;

-- name: maintenance_live_for_teams
-- The windows of these teams that may be in effect at or after `now` (recurring ones not
-- ended, one-off ones not over), optionally only those suppressing `suppress`.
SELECT * FROM maintenance_windows
WHERE team_id = ANY(%(team_ids)s::uuid[])
  AND (%(suppress)s::text IS NULL OR suppress = %(suppress)s::text)
  AND (ended_at IS NULL OR ended_at > %(now)s::timestamptz)
  AND (schedule IS NOT NULL OR ends_at > %(now)s::timestamptz);

-- name: maintenance_unreleased
-- Alert windows with closings the release service has not handled: recurring ones (checked
-- in Python) and one-off ones whose end, or early end, is not after `released_until`.
SELECT * FROM maintenance_windows
WHERE suppress = 'alerts'
  AND (released_until IS NULL OR released_until < coalesce(least(ended_at, ends_at), 'infinity'))
  AND (schedule IS NOT NULL OR least(ended_at, ends_at) <= %(now)s::timestamptz
       OR least(ended_at, ends_at) IS NULL)
ORDER BY created_at, id
LIMIT %(limit)s::int
FOR UPDATE SKIP LOCKED;

-- name: maintenance_mark_released
UPDATE maintenance_windows SET released_until = %(until)s::timestamptz
WHERE id = %(id)s::uuid;

-- name: maintenance_held_monitors
-- Monitors of a team that are down and whose latest alert is one a window held (`suppressed`):
-- the candidates for the one alert a closing window releases.
SELECT m.id, m.team_id, m.name, m.channels, m.realert_every, m.last_ping_at,
       a.failing_since AS down_since
FROM monitors m
LEFT JOIN alert_states a ON a.subject_type = 'monitor' AND a.subject_id = m.id
WHERE m.team_id = %(team_id)s::uuid AND m.status = 'down'
  AND (SELECT n.status FROM notifications n
       WHERE n.subject_id = m.id AND n.subject_type = 'monitor'
       ORDER BY n.created_at DESC, n.id DESC LIMIT 1) = 'suppressed'
FOR UPDATE OF m;

-- name: maintenance_subject_ids
-- Which of the given ids are live jobs and monitors of the team (a window may only name those).
SELECT 'job' AS kind, id FROM jobs
WHERE team_id = %(team_id)s::uuid AND id = ANY(%(jobs)s::uuid[]) AND status <> 'deleted'
UNION ALL
SELECT 'monitor', id FROM monitors
WHERE team_id = %(team_id)s::uuid AND id = ANY(%(monitors)s::uuid[]) AND status <> 'deleted';

-- name: notification_suppress
-- Rows the enqueue just wrote for alerts a maintenance window holds: never delivered.
UPDATE notifications SET status = 'suppressed', available_at = NULL,
       finished_at = %(now)s::timestamptz
WHERE id = ANY(%(ids)s::uuid[]);

-- name: maintenance_monitor_exists
SELECT id FROM monitors
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND status <> 'deleted';

-- name: maintenance_notify
SELECT pg_notify('cronledger_maintenance', '');

-- name: maintenance_job_tags
-- The tags of some jobs, for the windows that name tags (core/maintenance/queries.py).
SELECT id, tags FROM jobs WHERE id = ANY(%(ids)s::uuid[]);

-- name: maintenance_monitor_tags
SELECT id, tags FROM monitors WHERE id = ANY(%(ids)s::uuid[]);
