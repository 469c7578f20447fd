-- Notifications: the outbox (`notifications`: enqueue, claim with a lease, finish, list) and
-- the alert state of jobs and monitors (`alert_state_*`: failure streaks, when a monitor alert
-- went out and when to re-alert) that decides what is queued.

-- name: notification_enqueue
-- One outbox row per (alert, channel); channels of another team or deleted ones are skipped.
INSERT INTO notifications (id, team_id, channel_id, subject_type, subject_id, event, message,
                           status, attempt, max_attempts, available_at, version, created_at,
                           alert_id)
SELECT w.id, w.team_id, w.channel_id, w.subject_type, w.subject_id, w.event, w.message,
       'pending', 0, %(max_attempts)s::int, %(now)s::timestamptz, 1, %(now)s::timestamptz,
       w.alert_id
FROM unnest(%(ids)s::uuid[], %(team_ids)s::uuid[], %(channel_ids)s::uuid[],
            %(subject_types)s::text[], %(subject_ids)s::uuid[], %(events)s::text[],
            %(messages)s::jsonb[], %(alert_ids)s::uuid[])
     AS w(id, team_id, channel_id, subject_type, subject_id, event, message, alert_id)
JOIN channels c ON c.id = w.channel_id AND c.team_id = w.team_id AND c.deleted_at IS NULL
RETURNING id, team_id, channel_id, subject_type, subject_id, event, alert_id;

-- name: notification_notify
SELECT pg_notify('cronledger_notifications', '');

-- name: notification_cancel_for_channel
UPDATE notifications SET status = 'cancelled', finished_at = %(now)s::timestamptz,
       available_at = NULL, lease_token = NULL, lease_expires_at = NULL,
       last_error = 'the channel was deleted', version = version + 1
WHERE channel_id = %(channel_id)s::uuid AND status IN ('pending', 'sending')
RETURNING id, team_id, version;

-- name: notification_claim
-- Pending rows whose time has come, and rows whose sender's lease expired (it crashed between
-- claim and record): the same notification is sent again (at least once, never lost).
WITH ready AS (
    SELECT n.id, n.status AS previous_status
    FROM notifications n
    WHERE (n.status = 'pending' AND n.available_at <= %(now)s::timestamptz)
       OR (n.status = 'sending' AND n.lease_expires_at <= %(now)s::timestamptz)
    ORDER BY coalesce(n.available_at, n.lease_expires_at)
    LIMIT %(limit)s::int
    FOR UPDATE OF n SKIP LOCKED
)
UPDATE notifications n SET
    status = 'sending',
    attempt = CASE WHEN ready.previous_status = 'pending' THEN n.attempt + 1 ELSE n.attempt END,
    lease_token = gen_random_uuid(),
    lease_expires_at = %(now)s::timestamptz + make_interval(secs => %(lease_seconds)s::float8),
    worker_id = %(worker_id)s,
    available_at = NULL
FROM ready, channels c
WHERE n.id = ready.id AND c.id = n.channel_id
RETURNING n.id, n.team_id, n.channel_id, n.subject_type, n.subject_id, n.event, n.message,
          n.attempt, n.max_attempts, n.lease_token, n.version, ready.previous_status,
          c.name AS channel_name, c.kind, c.config, c.key_id, c.sealed, c.deleted_at;

-- name: notification_finish_many
-- Compare-and-set on the lease token: a sender whose lease was taken over records nothing.
UPDATE notifications n SET
    status = o.status,
    available_at = o.available_at,
    lease_token = NULL,
    lease_expires_at = NULL,
    last_error_class = o.error_class,
    last_error = o.error,
    last_response_status = o.response_status,
    last_response_body = o.answer,
    sent_at = CASE WHEN o.status = 'sent' THEN %(now)s::timestamptz END,
    finished_at = CASE WHEN o.status <> 'pending' THEN %(now)s::timestamptz END,
    version = n.version + 1
FROM unnest(%(ids)s::uuid[], %(lease_tokens)s::uuid[], %(statuses)s::text[],
            %(available_at)s::timestamptz[], %(error_class)s::text[], %(error)s::text[],
            %(response_status)s::int[], %(answer)s::text[])
     AS o(id, lease_token, status, available_at, error_class, error, response_status, answer)
WHERE n.id = o.id AND n.status = 'sending' AND n.lease_token = o.lease_token
RETURNING n.id, n.team_id, n.version;

-- name: notification_next_wakeup
SELECT least(
    (SELECT min(available_at) FROM notifications WHERE status = 'pending'),
    (SELECT min(lease_expires_at) FROM notifications WHERE status = 'sending')
) AS wake_at;

-- name: notification_list
-- Keyset pagination on (created_at, id), newest first; optional status and channel filters.
SELECT id, channel_id, subject_type, subject_id, event, message, status, attempt, max_attempts,
       available_at, last_error_class, last_error, last_response_status, last_response_body,
       created_at, sent_at, finished_at
FROM notifications
WHERE team_id = %(team_id)s::uuid
  AND (%(status)s::text IS NULL OR status = %(status)s::text)
  AND (%(channel_id)s::uuid IS NULL OR channel_id = %(channel_id)s::uuid)
  AND (%(before_created)s::timestamptz IS NULL
       OR (created_at, id) < (%(before_created)s::timestamptz, %(before_id)s::uuid))
ORDER BY created_at DESC, id DESC
LIMIT %(limit)s::int;

-- name: notification_get
SELECT id, channel_id, subject_type, subject_id, event, message, status, attempt, max_attempts,
       available_at, last_error_class, last_error, last_response_status, last_response_body,
       created_at, sent_at, finished_at
FROM notifications
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid;

-- name: alert_state_job_fail
-- A job's failure streak grows by `n` final failures (a new streak starts at `since`).
WITH up AS (
    INSERT INTO alert_states AS a (subject_type, subject_id, team_id, failing_since,
                                   consecutive_failures)
    SELECT 'job', f.job_id, f.team_id, f.since, f.n
    FROM unnest(%(job_ids)s::uuid[], %(team_ids)s::uuid[], %(since)s::timestamptz[],
                %(counts)s::int[]) AS f(job_id, team_id, since, n)
    ON CONFLICT ON CONSTRAINT alert_states_pkey DO UPDATE
        SET consecutive_failures = a.consecutive_failures + excluded.consecutive_failures,
            consecutive_successes = 0
    RETURNING a.subject_id, a.failing_since, a.consecutive_failures, a.last_alert_at
)
SELECT up.subject_id AS job_id, up.failing_since, up.consecutive_failures, up.last_alert_at,
       j.name, j.status, j.channels, j.alert_after_failures, j.realert_every
FROM up JOIN jobs j ON j.id = up.subject_id;

-- name: alert_state_job_recover
-- A success ends the streak; the returned row says whether a failure alert had gone out.
WITH gone AS (
    DELETE FROM alert_states a
    WHERE a.subject_type = 'job' AND a.subject_id = ANY(%(job_ids)s::uuid[])
    RETURNING a.subject_id, a.failing_since, a.consecutive_failures, a.last_alert_at
)
SELECT gone.subject_id AS job_id, gone.failing_since, gone.consecutive_failures,
       gone.last_alert_at, j.name, j.status, j.channels
FROM gone JOIN jobs j ON j.id = gone.subject_id;

-- name: alert_state_job_streaks
-- The failure streaks some successes may end or count towards (recover_after_successes),
-- locked for the recorder's transaction, in id order.
SELECT a.subject_id AS job_id, a.failing_since, a.consecutive_failures,
       a.consecutive_successes, a.last_alert_at, j.name, j.status, j.channels,
       j.recover_after_successes
FROM alert_states a
JOIN jobs j ON j.id = a.subject_id
WHERE a.subject_type = 'job' AND a.subject_id = ANY (%(job_ids)s::uuid[])
ORDER BY a.subject_id
FOR UPDATE OF a;

-- name: alert_state_job_successes
-- Good runs counted towards an alerted streak's recover_after_successes.
UPDATE alert_states a SET consecutive_successes = s.n
FROM unnest(%(job_ids)s::uuid[], %(successes)s::int[]) AS s(job_id, n)
WHERE a.subject_type = 'job' AND a.subject_id = s.job_id;

-- name: alert_state_mark_alerted
UPDATE alert_states SET last_alert_at = %(now)s::timestamptz
WHERE subject_type = %(subject_type)s AND subject_id = ANY(%(ids)s::uuid[]);

-- name: alert_state_monitor_set
-- A monitor alert went out: remember when, and when to re-alert (NULL: never).
INSERT INTO alert_states AS a (subject_type, subject_id, team_id, failing_since, last_alert_at,
                               next_realert_at)
VALUES ('monitor', %(monitor_id)s::uuid, %(team_id)s::uuid, %(since)s::timestamptz,
        %(now)s::timestamptz, %(next_realert_at)s::timestamptz)
ON CONFLICT ON CONSTRAINT alert_states_pkey DO UPDATE SET
    failing_since = CASE WHEN %(reset)s::bool THEN excluded.failing_since
                         ELSE a.failing_since END,
    last_alert_at = excluded.last_alert_at,
    next_realert_at = excluded.next_realert_at;

-- name: alert_state_monitor_clear
DELETE FROM alert_states WHERE subject_type = 'monitor' AND subject_id = %(monitor_id)s::uuid;

-- name: alert_state_monitor_reschedule
UPDATE alert_states
SET next_realert_at = CASE WHEN %(realert_every)s::int IS NULL THEN NULL
                           ELSE last_alert_at + make_interval(secs => %(realert_every)s::int) END
WHERE subject_type = 'monitor' AND subject_id = %(monitor_id)s::uuid;

-- name: alert_state_monitor_claim_realerts
-- Down monitors whose re-alert is due; the caller checks they are still down, then queues.
SELECT subject_id AS monitor_id, team_id, failing_since AS down_since, last_alert_at,
       next_realert_at
FROM alert_states
WHERE subject_type = 'monitor' AND next_realert_at <= %(now)s::timestamptz
ORDER BY next_realert_at
LIMIT %(limit)s::int
FOR UPDATE SKIP LOCKED;

-- name: alert_state_monitor_next_realert
SELECT min(next_realert_at) AS at FROM alert_states
WHERE subject_type = 'monitor' AND next_realert_at IS NOT NULL;

-- name: alert_state_monitor_streak
-- A monitor's streak towards its next alert (core/alerting.py, tolerate), locked.
SELECT failing_since, consecutive_failures, consecutive_successes, last_alert_at,
       next_realert_at, next_miss_at, miss_slot_at
FROM alert_states
WHERE subject_type = 'monitor' AND subject_id = %(monitor_id)s::uuid
FOR UPDATE;

-- name: alert_state_monitor_count
-- A monitor's streak after a failure, a missed slot or a good ping (failing_since is kept
-- from the row when there is one: the start of the failures in a row).
INSERT INTO alert_states AS a (subject_type, subject_id, team_id, failing_since,
                               consecutive_failures, consecutive_successes, next_realert_at,
                               next_miss_at, miss_slot_at)
VALUES ('monitor', %(monitor_id)s::uuid, %(team_id)s::uuid, %(since)s::timestamptz,
        %(failures)s::int, %(successes)s::int, %(next_realert_at)s::timestamptz,
        %(next_miss_at)s::timestamptz, %(miss_slot_at)s::timestamptz)
ON CONFLICT ON CONSTRAINT alert_states_pkey DO UPDATE SET
    consecutive_failures = excluded.consecutive_failures,
    consecutive_successes = excluded.consecutive_successes,
    next_realert_at = excluded.next_realert_at,
    next_miss_at = excluded.next_miss_at,
    miss_slot_at = excluded.miss_slot_at;

-- name: alert_state_monitor_claim_misses
-- Down monitors whose next slot passed without a ping (core/monitors/tolerance.py).
SELECT subject_id AS monitor_id, failing_since, consecutive_failures, consecutive_successes,
       last_alert_at, next_realert_at, next_miss_at, miss_slot_at
FROM alert_states
WHERE subject_type = 'monitor' AND next_miss_at <= %(now)s::timestamptz
ORDER BY next_miss_at
LIMIT %(limit)s::int
FOR UPDATE SKIP LOCKED;

-- name: alert_state_monitor_next_miss
SELECT min(next_miss_at) AS at FROM alert_states
WHERE subject_type = 'monitor' AND next_miss_at IS NOT NULL;
