-- The log read as history (core/history/, core/replay/): one stream up to an instant (time
-- travel, what-if replay), a job's final run outcomes with their recording transaction, and
-- the alerts actually queued for a job or monitor, the maintenance windows of a period, what
-- each event of a page is about (named). Reads only: nothing here writes.

-- name: ledger_stream_until
-- A stream's events in version order, up to the last one that occurred at or before `until`
-- (the stream's prefix as it stood then; a clock that stepped back cannot cut it in two).
-- kinds: the partitions its type can be in (core/retention/policy.py, stream_kinds).
-- With %(bodies)s, each monitor.pinged comes with its stored body (the replay of keywords,
-- core/replay/monitors.py), looked up in its own day's leaf; else `body` is NULL.
SELECT global_position, event_id, stream_type, stream_id, stream_version, event_type, team_id,
       data, metadata, occurred_at, recorded_at, tx_id::text AS tx_id,
       CASE WHEN %(bodies)s::bool AND event_type = 'monitor.pinged' THEN (
           SELECT b.body FROM monitor_ping_bodies b
           WHERE b.monitor_id = e.stream_id AND b.version = e.stream_version
             AND b.received_at = e.occurred_at) END AS body
FROM events e
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
-- transaction that recorded it (the recorder's batch), in recording order; `fire_at`: when its
-- slot was to fire, as the run's first event names it (a job with a spread), else null.
SELECT e.stream_id AS run_id, e.event_type, e.occurred_at, e.tx_id::text AS tx_id,
       e.global_position, r.scheduled_for, e.data,
       (SELECT (f.data->>'fire_at')::timestamptz FROM events f
        WHERE f.stream_id = r.id AND f.stream_version = 1
          AND event_retention_kind(f.stream_type, f.event_type) = 'runs') AS fire_at
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
-- `held`: a parent in depends_on held it (`held_by`: the parents down then, as recorded);
-- `released`: sent when the parents came back.
SELECT n.event, n.created_at AS at, count(*) AS channels,
       bool_or(n.status = 'suppressed') AS suppressed,
       coalesce(bool_or(a.held_by IS NOT NULL), false) AS held, max(a.held_by) AS held_by,
       coalesce(bool_or(a.rule ? 'released_from'), false) AS released
FROM notifications n
LEFT JOIN alerts a ON a.id = n.alert_id
WHERE n.subject_type = %(subject_type)s AND n.subject_id = %(subject_id)s::uuid
  AND n.team_id = %(team_id)s::uuid
  AND n.created_at >= %(from)s::timestamptz AND n.created_at <= %(to)s::timestamptz
GROUP BY n.event, n.created_at
ORDER BY n.created_at, n.event;

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

-- name: ledger_definition_until
-- ledger_definition_events up to the last definition event that occurred at or before
-- `until` (the prefix as it stood then): the definition at an instant, read from events_keep
-- only (not the daily leaves of pings: an alert's explanation, core/alerts/explain.py).
SELECT stream_id, stream_version, event_type, team_id, data, metadata, occurred_at
FROM events
WHERE stream_id = %(stream_id)s::uuid
  AND event_retention_kind(stream_type, event_type) = 'keep'
  AND team_id = %(team_id)s::uuid
  AND stream_type = %(stream_type)s
  AND event_type <> ALL (%(skip)s::text[])
  AND stream_version <= (SELECT max(stream_version) FROM events
                         WHERE stream_id = %(stream_id)s::uuid
                           AND event_retention_kind(stream_type, event_type) = 'keep'
                           AND team_id = %(team_id)s::uuid
                           AND stream_type = %(stream_type)s
                           AND event_type <> ALL (%(skip)s::text[])
                           AND occurred_at <= %(until)s::timestamptz)
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

-- name: event_subjects
-- What each of the team's events given (position, stream type, stream id and data, as read by
-- the page: the log is not read again) is about, named: a job (a run's job too), a monitor, a
-- channel, a secret, a maintenance window (its comment), or the job or monitor a notification
-- alerts about, with the channel it goes to. Deleted objects keep their names (their rows
-- stay; a deleted secret's name is in its events). The ids in event data are checked to be
-- UUIDs before the cast, so an odd payload gives no name rather than an error.
WITH ev AS (
    SELECT e.global_position, e.stream_type, e.stream_id, %(team_id)s::uuid AS team_id, e.data,
           n.subject_type AS n_subject_type, n.subject_id AS n_subject_id,
           n.channel_id AS n_channel_id
    FROM unnest(%(positions)s::bigint[], %(stream_types)s::text[], %(stream_ids)s::uuid[],
                %(datas)s::jsonb[]) AS e(global_position, stream_type, stream_id, data)
    LEFT JOIN notifications n ON e.stream_type = 'notification' AND n.id = e.stream_id
                             AND n.team_id = %(team_id)s::uuid
), subject AS (
    SELECT ev.*,
           CASE ev.stream_type WHEN 'run' THEN 'job'
                WHEN 'notification' THEN coalesce(ev.n_subject_type, ev.data->>'subject_type')
                ELSE ev.stream_type END AS subject_type,
           CASE ev.stream_type
                WHEN 'run' THEN CASE WHEN ev.data->>'job_id' ~* %(uuid)s
                                     THEN (ev.data->>'job_id')::uuid END
                WHEN 'notification' THEN coalesce(ev.n_subject_id, CASE
                    WHEN ev.data->>'subject_id' ~* %(uuid)s THEN (ev.data->>'subject_id')::uuid END)
                WHEN 'team' THEN NULL
                ELSE ev.stream_id END AS subject_id,
           CASE WHEN ev.stream_type = 'notification' THEN coalesce(ev.n_channel_id, CASE
                    WHEN ev.data->>'channel_id' ~* %(uuid)s THEN (ev.data->>'channel_id')::uuid END)
                END AS channel_id
    FROM ev
)
SELECT s.global_position, s.subject_type, s.subject_id,
       CASE s.subject_type WHEN 'job' THEN j.name WHEN 'monitor' THEN m.name
            WHEN 'channel' THEN c.name WHEN 'secret' THEN s.data->>'name'
            WHEN 'maintenance' THEN w.comment END AS subject_name,
       s.channel_id, nc.name AS channel_name
FROM subject s
LEFT JOIN jobs j ON s.subject_type = 'job' AND j.id = s.subject_id AND j.team_id = s.team_id
LEFT JOIN monitors m ON s.subject_type = 'monitor' AND m.id = s.subject_id
                    AND m.team_id = s.team_id
LEFT JOIN channels c ON s.subject_type = 'channel' AND c.id = s.subject_id
                    AND c.team_id = s.team_id
LEFT JOIN maintenance_windows w ON s.subject_type = 'maintenance' AND w.id = s.subject_id
                               AND w.team_id = s.team_id
LEFT JOIN channels nc ON nc.id = s.channel_id AND nc.team_id = s.team_id;

-- name: ledger_job_not_run
-- A job's slots recorded as not run (`run.skipped`, `run.missed`) in [from, to], in order: what
-- its `alert_on` may alert for (core/replay/jobs.py).
SELECT e.stream_id AS run_id, e.event_type, e.occurred_at, r.scheduled_for, e.data
FROM runs r
JOIN events e ON e.stream_id = r.id AND event_retention_kind(e.stream_type, e.event_type) = 'runs'
WHERE r.job_id = %(job_id)s::uuid AND r.team_id = %(team_id)s::uuid
  AND e.event_type IN ('run.skipped', 'run.missed')
  AND e.occurred_at >= %(from)s::timestamptz AND e.occurred_at <= %(to)s::timestamptz
ORDER BY e.occurred_at, e.global_position;

-- name: ledger_parent_flips
-- The status flips of some monitors up to `to`, in order: when each was down (from
-- monitor.down to what ends it), for the dependencies of a replay
-- (core/replay/dependencies.py; a job parent's spans come from its finals, ledger_job_finals).
SELECT e.stream_id AS parent, e.event_type, e.occurred_at
FROM events e
WHERE e.stream_id = ANY (%(ids)s::uuid[]) AND e.team_id = %(team_id)s::uuid
  AND e.event_type IN ('monitor.down', 'monitor.up', 'monitor.paused', 'monitor.resumed',
                       'monitor.deleted')
  AND e.occurred_at <= %(to)s::timestamptz
ORDER BY occurred_at;
