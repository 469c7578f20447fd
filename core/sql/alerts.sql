-- Alerts: the record of every alert the rules raised for a job or monitor with channels
-- (`alerts`, migration 0028), written by the outbox with its notifications, and its reads
-- (core/alerts/: the list, newest first, and the explanation).

-- name: alert_record_many
-- held_by comes as a JSON array of parent ids per alert (or JSON null: not held).
INSERT INTO alerts (id, team_id, subject_type, subject_id, event, title, rule, held_until,
                    held_by, created_at)
SELECT a.id, a.team_id, a.subject_type, a.subject_id, a.event, a.title, a.rule, a.held_until,
       CASE WHEN jsonb_typeof(a.held_by) = 'array' THEN
           ARRAY(SELECT p::uuid FROM jsonb_array_elements_text(a.held_by) AS p) END,
       %(now)s::timestamptz
FROM unnest(%(ids)s::uuid[], %(team_ids)s::uuid[], %(subject_types)s::text[],
            %(subject_ids)s::uuid[], %(events)s::text[], %(titles)s::text[],
            %(rules)s::jsonb[], %(held_until)s::timestamptz[], %(held_by)s::jsonb[])
     AS a(id, team_id, subject_type, subject_id, event, title, rule, held_until, held_by);

-- name: alert_list
-- Keyset pagination on (created_at, id), newest first; optionally of some jobs or monitors.
SELECT a.id, a.subject_type, a.subject_id, a.event, a.title, a.rule, a.held_until,
       a.held_by, a.released_at, a.released_as, a.created_at,
       CASE WHEN a.held_by IS NOT NULL AND a.released_at IS NULL THEN 'held'
            WHEN a.held_by IS NOT NULL THEN 'released'
            WHEN a.held_until IS NOT NULL THEN 'suppressed'
            ELSE 'sent' END AS state,
       (SELECT count(*) FROM notifications n WHERE n.alert_id = a.id)::int AS notifications
FROM alerts a
WHERE a.team_id = %(team_id)s::uuid
  AND ((%(monitor)s::uuid IS NULL AND %(job)s::uuid IS NULL)
       OR (a.subject_type = 'monitor' AND a.subject_id = %(monitor)s::uuid)
       OR (a.subject_type = 'job' AND a.subject_id = %(job)s::uuid))
  AND (%(before_created)s::timestamptz IS NULL
       OR (a.created_at, a.id) < (%(before_created)s::timestamptz, %(before_id)s::uuid))
ORDER BY a.created_at DESC, a.id DESC
LIMIT %(limit)s::int;

-- name: alert_get
SELECT a.id, a.subject_type, a.subject_id, a.event, a.title, a.rule, a.held_until,
       a.held_by, a.released_at, a.released_as, a.created_at,
       CASE WHEN a.held_by IS NOT NULL AND a.released_at IS NULL THEN 'held'
            WHEN a.held_by IS NOT NULL THEN 'released'
            WHEN a.held_until IS NOT NULL THEN 'suppressed'
            ELSE 'sent' END AS state,
       (SELECT count(*) FROM notifications n WHERE n.alert_id = a.id)::int AS notifications
FROM alerts a
WHERE a.id = %(id)s::uuid AND a.team_id = %(team_id)s::uuid;

-- name: alert_subject_events
-- The subject's stream around an alert: the latest events up to it (pings, flips, edits), from
-- the partitions a monitor's stream is in (keep and pings, core/events.py STREAM_KINDS). A
-- PL/pgSQL function, so its plan over the daily leaves of pings is made once per server
-- process (migrations/versions/2026_12_03_0042_alert_monitor_events_function.py).
SELECT stream_version, event_type, data, occurred_at
FROM alert_monitor_events(%(subject_id)s::uuid, %(team_id)s::uuid, %(at)s::timestamptz,
                          %(limit)s::int);

-- name: alert_job_runs
-- A job's runs around an alert: the latest slots at or before it.
SELECT id, scheduled_for, status, attempt, finished_at, response_status, error_class, reason
FROM runs
WHERE job_id = %(job_id)s::uuid AND scheduled_for <= %(at)s::timestamptz
ORDER BY scheduled_for DESC
LIMIT %(limit)s::int;

-- name: alert_subject_names
-- The names of the jobs and monitors some alerts are about (deleted ones keep their rows and
-- names), of the team's own rows only.
SELECT s.subject_type, s.subject_id,
       CASE s.subject_type WHEN 'job' THEN j.name ELSE m.name END AS name,
       CASE s.subject_type WHEN 'job' THEN j.status ELSE m.status END = 'deleted' AS deleted
FROM unnest(%(types)s::text[], %(ids)s::uuid[]) AS s(subject_type, subject_id)
LEFT JOIN jobs j ON s.subject_type = 'job' AND j.id = s.subject_id
                AND j.team_id = %(team_id)s::uuid
LEFT JOIN monitors m ON s.subject_type = 'monitor' AND m.id = s.subject_id
                    AND m.team_id = %(team_id)s::uuid;
