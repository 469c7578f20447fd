-- name: monitor_upsert
-- Writes the monitor projection row from the state folded over the monitor's stream (commands).
INSERT INTO monitors (id, team_id, name, schedule, timezone, period_seconds, grace_seconds,
                      methods, manual_resume, ping_token_hash, status, last_ping_at,
                      last_start_at, last_start_rid, last_duration_ms, next_expected_at,
                      alert_at, version, created_at, updated_at)
VALUES (%(id)s::uuid, %(team_id)s::uuid, %(name)s::text, %(schedule)s::text, %(timezone)s::text,
        %(period_seconds)s::float8, %(grace_seconds)s::int, %(methods)s::text,
        %(manual_resume)s::bool, %(ping_token_hash)s::bytea, %(status)s::text,
        %(last_ping_at)s::timestamptz, %(last_start_at)s::timestamptz,
        %(last_start_rid)s::uuid, %(last_duration_ms)s::bigint,
        %(next_expected_at)s::timestamptz, %(alert_at)s::timestamptz, %(version)s::int,
        %(created_at)s::timestamptz, %(updated_at)s::timestamptz)
ON CONFLICT ON CONSTRAINT monitors_pkey DO UPDATE SET
    name = excluded.name, schedule = excluded.schedule, timezone = excluded.timezone,
    period_seconds = excluded.period_seconds, grace_seconds = excluded.grace_seconds,
    methods = excluded.methods, manual_resume = excluded.manual_resume,
    ping_token_hash = excluded.ping_token_hash, status = excluded.status,
    last_ping_at = excluded.last_ping_at, last_start_at = excluded.last_start_at,
    last_start_rid = excluded.last_start_rid, last_duration_ms = excluded.last_duration_ms,
    next_expected_at = excluded.next_expected_at, alert_at = excluded.alert_at,
    version = excluded.version, updated_at = excluded.updated_at;

-- name: monitor_lock
-- The current state of one monitor, locked for a command (deleted monitors are not found).
SELECT id, team_id, name, schedule, timezone, period_seconds, grace_seconds, methods,
       manual_resume, ping_token_hash, status, last_ping_at, last_start_at, last_start_rid,
       last_duration_ms, next_expected_at, alert_at, version, created_at, updated_at
FROM monitors
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND status <> 'deleted'
FOR UPDATE;

-- name: monitor_get
SELECT id, team_id, name, schedule, timezone, grace_seconds, methods, manual_resume, status,
       last_ping_at, last_start_at, last_duration_ms, next_expected_at, alert_at, version,
       created_at, updated_at
FROM monitors
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND status <> 'deleted';

-- name: monitor_list
-- Keyset pagination on (created_at, id).
SELECT id, team_id, name, schedule, timezone, grace_seconds, methods, manual_resume, status,
       last_ping_at, last_start_at, last_duration_ms, next_expected_at, alert_at, version,
       created_at, updated_at
FROM monitors
WHERE team_id = %(team_id)s::uuid
  AND status <> 'deleted'
  AND (%(after_created)s::timestamptz IS NULL
       OR (created_at, id) > (%(after_created)s::timestamptz, %(after_id)s::uuid))
ORDER BY created_at, id
LIMIT %(limit)s::int;

-- name: monitor_exists_any
-- Deleted monitors included: their history stays readable.
SELECT 1 FROM monitors WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid;

-- name: monitor_ping_list
-- Latest first; keyset on the ping id.
SELECT id, version, received_at, kind, method, exit_status, rid, remote_addr, user_agent, body,
       body_size, duration_ms
FROM monitor_pings
WHERE monitor_id = %(monitor_id)s::uuid
  AND (%(before_id)s::bigint IS NULL OR id < %(before_id)s::bigint)
ORDER BY id DESC
LIMIT %(limit)s::int;

-- name: monitor_notify
SELECT pg_notify('cronledger_monitors', %(reason)s::text);

-- name: monitor_ping
-- One round trip per ping (run in autocommit): lock the monitor by its token hash, decide the
-- effective action and the new state (the rules of core/monitors/timing.py and
-- core/monitors/state.py apply_ping, healthchecks' Check.ping), update the projection with the
-- stream version bumped by the number of events, record the ping, append monitor.pinged and the
-- status transition if any, and wake the checker when the next alert moved earlier. Cron
-- monitors get their expected instant from the checker (alert_at = now): SQL has no cron engine.
-- No row comes back for an unknown or deleted token, and then nothing was written.
WITH m AS (
    SELECT id, team_id, status, methods, manual_resume, period_seconds, last_ping_at,
           last_start_at, last_start_rid, next_expected_at, alert_at, version,
           make_interval(secs => grace_seconds) AS grace
    FROM monitors
    WHERE ping_token_hash = %(token_hash)s::bytea AND status <> 'deleted'
    FOR UPDATE
),
a AS (
    SELECT m.*,
           CASE WHEN (m.status = 'paused' AND m.manual_resume)
                  OR (m.methods = 'post' AND %(method)s::text <> 'POST') THEN 'ignored'
                ELSE %(kind)s::text END AS action
    FROM m
),
n AS (
    SELECT a.*,
           a.action IN ('success', 'fail') AS finishes,
           CASE a.action WHEN 'success' THEN 'up' WHEN 'fail' THEN 'down'
                ELSE a.status END AS new_status,
           a.action IN ('success', 'fail') AND a.last_start_at IS NOT NULL
               AND (a.last_start_rid IS NOT DISTINCT FROM %(rid)s::uuid
                    OR a.action = 'fail' OR %(rid)s::uuid IS NULL) AS closes_start,
           CASE WHEN a.action IN ('success', 'fail') AND a.last_start_at IS NOT NULL
                     AND a.last_start_rid IS NOT DISTINCT FROM %(rid)s::uuid
                THEN floor(extract(epoch FROM %(now)s::timestamptz - a.last_start_at)
                           * 1000)::bigint
           END AS duration_ms
    FROM a
),
t AS (
    SELECT n.*,
           CASE WHEN n.finishes THEN %(now)s::timestamptz ELSE n.last_ping_at END AS ping_at,
           CASE WHEN n.action = 'start' THEN %(now)s::timestamptz
                WHEN n.closes_start THEN NULL ELSE n.last_start_at END AS start_at,
           CASE WHEN n.action = 'start' THEN %(rid)s::uuid
                WHEN n.closes_start THEN NULL ELSE n.last_start_rid END AS start_rid
    FROM n
),
e AS (
    SELECT t.*,
           CASE WHEN t.new_status NOT IN ('up', 'late') THEN NULL
                WHEN t.period_seconds IS NOT NULL
                    THEN t.ping_at + make_interval(secs => t.period_seconds)
                WHEN t.finishes THEN NULL
                ELSE t.next_expected_at END AS expected
    FROM t
),
u AS (
    UPDATE monitors mo SET
        status = e.new_status,
        last_ping_at = e.ping_at,
        last_start_at = e.start_at,
        last_start_rid = e.start_rid,
        last_duration_ms = CASE WHEN e.finishes THEN e.duration_ms ELSE mo.last_duration_ms END,
        next_expected_at = e.expected,
        -- Only ever moved earlier: a ping that pushes the deadline out leaves alert_at (an
        -- indexed column) alone, so the update stays HOT; the checker, woken at the old
        -- instant, finds the monitor on time and moves alert_at to the exact one.
        alert_at = least(mo.alert_at, CASE
            WHEN e.new_status IN ('up', 'late') AND e.expected IS NULL
                 AND e.period_seconds IS NULL THEN %(now)s::timestamptz
            WHEN e.new_status = 'up' THEN least(e.expected, e.start_at + e.grace)
            WHEN e.new_status = 'late' THEN least(e.expected + e.grace, e.start_at + e.grace)
            WHEN e.new_status IN ('new', 'paused') THEN e.start_at + e.grace
        END),
        version = mo.version + CASE WHEN e.new_status <> e.status THEN 2 ELSE 1 END,
        updated_at = %(now)s::timestamptz
    FROM e
    WHERE mo.id = e.id
    RETURNING mo.id, mo.team_id, mo.status, mo.alert_at, mo.version, e.status AS old_status,
              e.version AS old_version, e.alert_at AS old_alert_at, e.action, e.duration_ms
),
p AS (
    INSERT INTO monitor_pings (monitor_id, version, received_at, kind, method, exit_status, rid,
                               remote_addr, user_agent, body, body_size, duration_ms)
    SELECT u.id, u.old_version + 1, %(now)s::timestamptz, u.action, %(method)s::text,
           %(exit_status)s::smallint, %(rid)s::uuid, %(remote_addr)s::text,
           %(user_agent)s::text, %(body)s::bytea, %(body_size)s::int, u.duration_ms
    FROM u
    RETURNING id
),
ev AS (
    INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, data,
                        metadata, occurred_at)
    SELECT 'monitor', u.id, x.version, x.event_type, u.team_id, x.data,
           '{"actor": "ping"}'::jsonb, %(now)s::timestamptz
    FROM u CROSS JOIN LATERAL (VALUES
        (u.old_version + 1, 'monitor.pinged', jsonb_build_object(
            'kind', u.action, 'method', %(method)s::text, 'rid', %(rid)s::uuid,
            'exit_status', %(exit_status)s::smallint, 'body_size', %(body_size)s::int,
            'remote_addr', %(remote_addr)s::text, 'user_agent', %(user_agent)s::text,
            'duration_ms', u.duration_ms, 'ping_id', (SELECT p.id FROM p))),
        (u.old_version + 2, CASE u.status WHEN 'up' THEN 'monitor.up' ELSE 'monitor.down' END,
         CASE u.status
             WHEN 'up' THEN jsonb_build_object('previous_status', u.old_status, 'reason', 'ping')
             ELSE jsonb_build_object('previous_status', u.old_status, 'reason', 'fail',
                                     'exit_status', %(exit_status)s::smallint) END)
    ) AS x(version, event_type, data)
    WHERE x.version <= u.version
),
w AS (
    SELECT pg_notify('cronledger_monitors', 'ping') FROM u
    WHERE u.alert_at IS NOT NULL AND (u.old_alert_at IS NULL OR u.alert_at < u.old_alert_at)
)
SELECT u.id, u.status, u.action, (SELECT count(*) FROM w) AS woke FROM u;

-- name: monitor_claim_due
-- The checker's claim (DESIGN 3.3): monitors with a decision due, oldest first, skipping rows
-- another checker - or an in-flight ping - holds.
SELECT id, team_id, schedule, timezone, period_seconds, grace_seconds, status, last_ping_at,
       last_start_at, next_expected_at, alert_at, version, created_at
FROM monitors
WHERE alert_at <= %(now)s::timestamptz
ORDER BY alert_at
LIMIT %(limit)s::int
FOR UPDATE SKIP LOCKED;

-- name: monitor_decide_many
-- Compare-and-set on the stream version: a monitor pinged since it was read is left alone, so a
-- ping that got in first always wins and no transition is applied twice.
UPDATE monitors m SET
    status = d.status,
    next_expected_at = d.next_expected_at,
    alert_at = d.alert_at,
    version = d.version,
    updated_at = CASE WHEN d.version <> m.version THEN %(now)s::timestamptz ELSE m.updated_at END
FROM unnest(%(ids)s::uuid[], %(read_versions)s::int[], %(statuses)s::text[],
            %(next_expected_at)s::timestamptz[], %(alert_at)s::timestamptz[],
            %(versions)s::int[])
     AS d(id, read_version, status, next_expected_at, alert_at, version)
WHERE m.id = d.id AND m.version = d.read_version
RETURNING m.id;

-- name: monitor_next_alert
-- The earliest instant at which the checker has something to decide.
SELECT min(alert_at) AS alert_at FROM monitors WHERE alert_at IS NOT NULL;
