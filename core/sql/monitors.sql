-- Monitors: the `monitors` inline projection and its team-scoped reads, the ping statement
-- (core/monitors/ping.py) and the checker's claim, decisions and locks. Their alert state is in
-- notifications.sql, their uptime read models in projections.sql (writes) and reports.sql (reads).

-- name: monitor_upsert
-- Writes the monitor projection row from the state folded over the monitor's stream (commands).
INSERT INTO monitors (id, team_id, name, schedule, timezone, period_seconds, grace_seconds,
                      methods, manual_resume, ping_token_hash, status, last_ping_at,
                      last_start_at, last_start_rid, last_duration_ms, next_expected_at,
                      alert_at, channels, realert_every, version, created_at, updated_at,
                      broken_at, broken_reason, slug, tags, schedule_text)
VALUES (%(id)s::uuid, %(team_id)s::uuid, %(name)s::text, %(schedule)s::text, %(timezone)s::text,
        %(period_seconds)s::float8, %(grace_seconds)s::int, %(methods)s::text,
        %(manual_resume)s::bool, %(ping_token_hash)s::bytea, %(status)s::text,
        %(last_ping_at)s::timestamptz, %(last_start_at)s::timestamptz,
        %(last_start_rid)s::uuid, %(last_duration_ms)s::bigint,
        %(next_expected_at)s::timestamptz, %(alert_at)s::timestamptz, %(channels)s::uuid[],
        %(realert_every)s::int, %(version)s::int,
        %(created_at)s::timestamptz, %(updated_at)s::timestamptz,
        %(broken_at)s::timestamptz, %(broken_reason)s::text, %(slug)s::text,
        %(tags)s::text[], %(schedule_text)s::text)
ON CONFLICT ON CONSTRAINT monitors_pkey DO UPDATE SET
    name = excluded.name, schedule = excluded.schedule, timezone = excluded.timezone,
    period_seconds = excluded.period_seconds, grace_seconds = excluded.grace_seconds,
    methods = excluded.methods, manual_resume = excluded.manual_resume,
    ping_token_hash = excluded.ping_token_hash, status = excluded.status,
    last_ping_at = excluded.last_ping_at, last_start_at = excluded.last_start_at,
    last_start_rid = excluded.last_start_rid, last_duration_ms = excluded.last_duration_ms,
    next_expected_at = excluded.next_expected_at, alert_at = excluded.alert_at,
    channels = excluded.channels, realert_every = excluded.realert_every,
    version = excluded.version, updated_at = excluded.updated_at,
    broken_at = excluded.broken_at, broken_reason = excluded.broken_reason,
    slug = excluded.slug, tags = excluded.tags, schedule_text = excluded.schedule_text;

-- name: monitor_lock
-- The current state of one monitor, locked for a command (deleted monitors are not found).
SELECT id, team_id, name, schedule, timezone, period_seconds, grace_seconds, methods,
       manual_resume, ping_token_hash, status, last_ping_at, last_start_at, last_start_rid,
       last_duration_ms, next_expected_at, alert_at, channels, realert_every, version,
       created_at, updated_at, broken_at, broken_reason, slug, tags, schedule_text
FROM monitors
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND status <> 'deleted'
FOR UPDATE;

-- name: monitor_get
SELECT id, team_id, name, schedule, timezone, grace_seconds, methods, manual_resume, status,
       last_ping_at, last_start_at, last_duration_ms, next_expected_at, alert_at, channels,
       realert_every, version, created_at, updated_at, broken_at, broken_reason, slug, tags,
       schedule_text
FROM monitors
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND status <> 'deleted';

-- name: monitor_list
-- Keyset pagination on (created_at, id).
SELECT id, team_id, name, schedule, timezone, grace_seconds, methods, manual_resume, status,
       last_ping_at, last_start_at, last_duration_ms, next_expected_at, alert_at, channels,
       realert_every, version, created_at, updated_at, broken_at, broken_reason, slug, tags,
       schedule_text
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
-- A monitor's pings, latest first, from its monitor.pinged events and their stored bodies, and
-- the newest 100 kept past the retention of their partition (monitor_pings_kept,
-- core/retention/prune.py); keyset on the stream version. The partition keys are named (the
-- pings' kind of events; a body's received_at is its ping's occurred_at): the read visits the
-- daily leaves of pings only, and each body is looked up in its own day's leaf.
SELECT e.stream_version AS version, e.occurred_at AS received_at, e.data ->> 'kind' AS kind,
       e.data ->> 'method' AS method, (e.data ->> 'exit_status')::int AS exit_status,
       (e.data ->> 'rid')::uuid AS rid, e.data ->> 'remote_addr' AS remote_addr,
       e.data ->> 'user_agent' AS user_agent, (e.data ->> 'body_size')::int AS body_size,
       (e.data ->> 'duration_ms')::bigint AS duration_ms, e.body
FROM (SELECT e.stream_version, e.occurred_at, e.data, b.body
      FROM events e
      LEFT JOIN monitor_ping_bodies b
        ON b.monitor_id = e.stream_id AND b.version = e.stream_version
       AND b.received_at = e.occurred_at
      WHERE e.stream_id = %(monitor_id)s::uuid
        AND event_retention_kind(e.stream_type, e.event_type) = 'pings'
        AND e.team_id = %(team_id)s::uuid
        AND e.event_type = 'monitor.pinged'
        AND (%(before_version)s::int IS NULL OR e.stream_version < %(before_version)s::int)
      UNION ALL
      SELECT k.stream_version, k.occurred_at, k.data, k.body
      FROM monitor_pings_kept k
      WHERE k.monitor_id = %(monitor_id)s::uuid
        AND k.team_id = %(team_id)s::uuid
        AND (%(before_version)s::int IS NULL OR k.stream_version < %(before_version)s::int)
     ) AS e
ORDER BY e.stream_version DESC
LIMIT %(limit)s::int;

-- name: monitor_notify
SELECT pg_notify('cronledger_monitors', %(reason)s::text);

-- name: monitor_ping_batch
-- Records a batch of pings in one statement and one commit. The batch is one JSON array, in
-- arrival order, of {"i": position, "h": token SHA-256 (base64), "k": kind, "m": method,
-- "r": rid, "t": arrival, "x": exit status, "a": address, "u": user agent, "b": body (base64),
-- "s": body size} (one JSON text costs the driver far less to send than ten arrays). A slug
-- ping (docs/healthchecks.md) has no "h" but "pk": the team's ping key SHA-256 (base64) and
-- "sl": the slug, resolved here to the monitor's token hash (teams_ping_key_hash_key and
-- monitors_team_slug_key make it two index probes); the rest is the same.
-- Its specification is core/monitors/rules.py (ping, ping_timing: healthchecks' Check.ping);
-- tests/test_monitor_rules_property.py checks that the two agree, so change both together.
-- Per monitor it locks the row (in id order, so concurrent batches cannot deadlock), folds the
-- monitor's pings in order with a recursive CTE (effective action, status, pending start and
-- rid pairing, duration, stream version), writes the final state, stores the bodies of the
-- pings that have one (at the stream version of their monitor.pinged), appends monitor.pinged
-- and each status transition, and wakes the checker when the next alert moved earlier.
-- alert_at only ever moves earlier here, so a ping that pushes the deadline out is a HOT update;
-- the checker corrects it when it comes. Cron monitors get their expected instant from the
-- checker (alert_at = the ping time): SQL has no cron engine. Returns one row per input position: the monitor's status after that
-- ping, or NULL when no live monitor has the token (nothing is written for it), and the token
-- hash the ping resolved to.
-- With %(defer)s, a monitor that notifies (non-empty channels) and is down, or gets a fail ping
-- in this batch, is left alone (not locked, nothing written) and its pings come back with
-- `deferred`: their status change queues an alert, which must commit with it, so the caller
-- records them again in an explicit transaction (core/monitors/ping.py). Ordinary pings never
-- take that path.
WITH RECURSIVE b AS (
    SELECT r.i AS pos,
           coalesce(decode(r.h, 'base64'), (
               SELECT mo.ping_token_hash FROM teams t
               JOIN monitors mo ON mo.team_id = t.id AND mo.slug = r.sl
                               AND mo.status <> 'deleted' AND mo.slug IS NOT NULL
               WHERE t.ping_key_hash = decode(r.pk, 'base64'))) AS token_hash,
           r.k AS kind, r.m AS method,
           r.r AS rid, r.t AS at, r.x AS exit_status, r.a AS remote_addr, r.u AS user_agent,
           decode(r.b, 'base64') AS body, r.s AS body_size
    FROM json_to_recordset(%(pings)s::json)
         AS r(i bigint, h text, k text, m text, r uuid, t timestamptz, x smallint, a text,
              u text, b text, s int, pk text, sl text)
),
m AS (
    SELECT id, team_id, status, methods, manual_resume, period_seconds, ping_token_hash,
           last_ping_at, last_start_at, last_start_rid, last_duration_ms, next_expected_at,
           alert_at, version, make_interval(secs => grace_seconds) AS grace
    FROM monitors
    -- = ANY (ARRAY(...)), not IN (SELECT ...): the planner then expects a handful of rows
    -- and probes the token index (and the primary key in the UPDATE below) instead of
    -- hash-joining a sequential scan of every monitor, which it chose for IN against the
    -- 100 rows it assumes json_to_recordset returns (measured: pings/s fell by half as
    -- the table grew to a few thousand rows without ANALYZE).
    WHERE ping_token_hash = ANY (ARRAY(SELECT token_hash FROM b)) AND status <> 'deleted'
      AND NOT (%(defer)s::bool AND channels <> '{}'
               AND (status = 'down'
                    OR ping_token_hash IN (SELECT token_hash FROM b WHERE kind = 'fail')))
    ORDER BY id
    FOR UPDATE
),
q AS (
    SELECT b.*, m.id AS monitor_id,
           row_number() OVER (PARTITION BY m.id ORDER BY b.pos) AS seq,
           CASE WHEN (m.status = 'paused' AND m.manual_resume)
                  OR (m.methods = 'post' AND b.method <> 'POST') THEN 'ignored'
                ELSE b.kind END AS action
    FROM b JOIN m ON m.ping_token_hash = b.token_hash
),
f AS (
    -- The state of each monitor after its first seq pings (seq 0: as locked).
    SELECT m.id AS monitor_id, 0::bigint AS seq, m.status, m.last_ping_at, m.last_start_at,
           m.last_start_rid, m.last_duration_ms, m.version, 0 AS pinged_version,
           NULL::text AS action, NULL::text AS previous_status, NULL::bigint AS duration_ms,
           NULL::timestamptz AS at
    FROM m
    UNION ALL
    SELECT f.monitor_id, q.seq, x.status,
           CASE WHEN x.finishes THEN q.at ELSE f.last_ping_at END,
           CASE WHEN q.action = 'start' THEN q.at WHEN x.closes THEN NULL
                ELSE f.last_start_at END,
           CASE WHEN q.action = 'start' THEN q.rid WHEN x.closes THEN NULL
                ELSE f.last_start_rid END,
           CASE WHEN x.finishes THEN x.duration_ms ELSE f.last_duration_ms END,
           f.version + CASE WHEN x.status <> f.status THEN 2 ELSE 1 END,
           f.version + 1, q.action, f.status, x.duration_ms, q.at
    FROM f
    JOIN q ON q.monitor_id = f.monitor_id AND q.seq = f.seq + 1
    CROSS JOIN LATERAL (
        SELECT CASE q.action WHEN 'success' THEN 'up' WHEN 'fail' THEN 'down'
                    ELSE f.status END AS status,
               q.action IN ('success', 'fail') AS finishes,
               q.action IN ('success', 'fail') AND f.last_start_at IS NOT NULL
                   AND (f.last_start_rid IS NOT DISTINCT FROM q.rid OR q.action = 'fail'
                        OR q.rid IS NULL) AS closes,
               CASE WHEN q.action IN ('success', 'fail') AND f.last_start_at IS NOT NULL
                         AND f.last_start_rid IS NOT DISTINCT FROM q.rid
                    THEN floor(extract(epoch FROM q.at - f.last_start_at) * 1000)::bigint
               END AS duration_ms
    ) x
),
fin AS (
    SELECT DISTINCT ON (f.monitor_id) f.*, m.period_seconds, m.grace,
           m.last_ping_at AS old_last_ping_at, m.next_expected_at AS old_expected,
           m.alert_at AS old_alert_at
    FROM f JOIN m ON m.id = f.monitor_id
    ORDER BY f.monitor_id, f.seq DESC
),
e AS (
    SELECT fin.*,
           CASE WHEN fin.status NOT IN ('up', 'late') THEN NULL
                WHEN fin.period_seconds IS NOT NULL
                    THEN fin.last_ping_at + make_interval(secs => fin.period_seconds)
                WHEN fin.last_ping_at IS DISTINCT FROM fin.old_last_ping_at THEN NULL
                ELSE fin.old_expected END AS expected
    FROM fin
),
u AS (
    UPDATE monitors mo SET
        status = e.status,
        last_ping_at = e.last_ping_at,
        last_start_at = e.last_start_at,
        last_start_rid = e.last_start_rid,
        last_duration_ms = e.last_duration_ms,
        next_expected_at = e.expected,
        alert_at = least(mo.alert_at, CASE
            WHEN e.status IN ('up', 'late') AND e.expected IS NULL
                 AND e.period_seconds IS NULL THEN e.at
            WHEN e.status = 'up' THEN least(e.expected, e.last_start_at + e.grace)
            WHEN e.status = 'late' THEN least(e.expected + e.grace, e.last_start_at + e.grace)
            WHEN e.status IN ('new', 'paused') THEN e.last_start_at + e.grace
        END),
        version = e.version,
        updated_at = e.at
    FROM e
    WHERE mo.id = e.monitor_id
    RETURNING mo.alert_at, e.old_alert_at
),
p AS (
    INSERT INTO monitor_ping_bodies (monitor_id, version, body, received_at)
    SELECT f.monitor_id, f.pinged_version, q.body, q.at
    FROM f JOIN q ON q.monitor_id = f.monitor_id AND q.seq = f.seq
    WHERE q.body IS NOT NULL
),
ev AS (
    INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, data,
                        metadata, occurred_at)
    SELECT 'monitor', f.monitor_id, x.version, x.event_type, m.team_id, x.data,
           '{"actor": "ping"}'::jsonb, q.at
    FROM f
    JOIN q ON q.monitor_id = f.monitor_id AND q.seq = f.seq
    JOIN m ON m.id = f.monitor_id
    CROSS JOIN LATERAL (VALUES
        (f.pinged_version, 'monitor.pinged', jsonb_build_object(
            'kind', f.action, 'method', q.method, 'rid', q.rid, 'exit_status', q.exit_status,
            'body_size', q.body_size, 'remote_addr', q.remote_addr,
            'user_agent', q.user_agent, 'duration_ms', f.duration_ms)),
        (f.pinged_version + 1, CASE f.status WHEN 'up' THEN 'monitor.up' ELSE 'monitor.down' END,
         CASE f.status
             WHEN 'up' THEN jsonb_build_object('previous_status', f.previous_status,
                                               'reason', 'ping')
             ELSE jsonb_build_object('previous_status', f.previous_status, 'reason', 'fail',
                                     'exit_status', q.exit_status) END)
    ) AS x(version, event_type, data)
    WHERE x.version <= f.version
    ORDER BY q.pos, x.version
),
w AS (
    SELECT pg_notify('cronledger_monitors', 'ping') FROM u
    WHERE u.alert_at IS NOT NULL AND (u.old_alert_at IS NULL OR u.alert_at < u.old_alert_at)
    LIMIT 1
),
d AS (
    -- the live monitors left alone above (only tokens that matched no locked monitor)
    SELECT mo.ping_token_hash FROM monitors mo
    WHERE %(defer)s::bool AND mo.status <> 'deleted'
      AND mo.ping_token_hash IN (SELECT b.token_hash FROM b
                                 WHERE NOT EXISTS (SELECT 1 FROM q WHERE q.pos = b.pos))
)
SELECT b.pos, f.status, (SELECT count(*) FROM w) AS woke,
       q.pos IS NULL AND b.token_hash IN (SELECT ping_token_hash FROM d) AS deferred,
       b.token_hash
FROM b
LEFT JOIN q ON q.pos = b.pos
LEFT JOIN f ON f.monitor_id = q.monitor_id AND f.seq = q.seq
ORDER BY b.pos;

-- name: monitor_claim_due
-- The checker's claim (docs/heartbeats.md): monitors with a decision due, oldest first, skipping rows
-- another checker - or an in-flight ping - holds.
SELECT id, team_id, name, schedule, timezone, period_seconds, grace_seconds, status,
       last_ping_at, last_start_at, next_expected_at, alert_at, channels, realert_every,
       version, created_at, broken_at
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

-- name: monitor_lock_for_ping_alerts
-- The monitors of pings that may change a notifying monitor's status, locked in id order (like
-- the ping statement), with the start of the current outage (its last monitor.down event).
SELECT m.id, m.team_id, m.name, m.status, m.channels, m.realert_every, m.ping_token_hash,
       CASE WHEN m.status = 'down' THEN (
           SELECT e.occurred_at FROM events e
           WHERE e.stream_id = m.id AND e.event_type = 'monitor.down'
             AND event_retention_kind(e.stream_type, e.event_type) = 'keep'
           ORDER BY e.stream_version DESC LIMIT 1) END AS down_since
FROM monitors m
WHERE m.ping_token_hash = ANY(%(hashes)s::bytea[]) AND m.status <> 'deleted'
ORDER BY m.id
FOR UPDATE;

-- name: monitor_lock_for_realert
-- A monitor with a re-alert due; SKIP LOCKED: the checker holds its alert state already, and
-- pings and commands take the monitor first, so waiting could deadlock.
SELECT id, team_id, name, status, channels, realert_every, last_ping_at, last_start_at
FROM monitors
WHERE id = %(id)s::uuid
FOR UPDATE SKIP LOCKED;

-- name: monitor_mark_broken_many
-- Monitors whose stored schedule no longer evaluates (core/monitors/checker.py): the projection takes the
-- `monitor.broken` event at the next version and is no longer claimed (alert_at NULL). The
-- version read is compared, as for decisions: a monitor pinged since is left to the next claim.
UPDATE monitors m SET broken_at = %(now)s::timestamptz, broken_reason = b.reason,
                      alert_at = NULL, next_expected_at = NULL,
                      version = m.version + 1, updated_at = %(now)s::timestamptz
FROM unnest(%(ids)s::uuid[], %(read_versions)s::int[], %(reasons)s::text[])
     AS b(id, read_version, reason)
WHERE m.id = b.id AND m.version = b.read_version
RETURNING m.id, m.team_id, m.version, m.broken_reason;

-- name: monitor_slug_taken
-- Whether a live monitor of the team other than %(id)s has the slug (core/monitors/commands.py).
SELECT EXISTS (SELECT 1 FROM monitors
               WHERE team_id = %(team_id)s::uuid AND slug = %(slug)s::text
                 AND status <> 'deleted' AND id <> %(id)s::uuid) AS taken;

-- name: monitor_count_live
-- The team's live monitors, for the monitor limit of ?create=1 pings.
SELECT count(*)::int AS monitors FROM monitors
WHERE team_id = %(team_id)s::uuid AND status <> 'deleted';

-- name: monitor_ping_counts
-- How many pings each of the monitors received (healthchecks' n_pings, api/hc/).
SELECT e.stream_id AS id, count(*)::int AS n_pings
FROM events e
WHERE e.stream_id = ANY (%(ids)s::uuid[]) AND e.team_id = %(team_id)s::uuid
  AND e.event_type = 'monitor.pinged'
  AND event_retention_kind(e.stream_type, e.event_type) = 'pings'
GROUP BY e.stream_id;

-- name: monitor_flip_list
-- A monitor's status changes (the dashboard's flips timeline), latest first: its events of
-- the given types (core/monitors/state.py, STATUS_AFTER); keyset on the stream version. None
-- of them is a ping: naming their partition (events_keep) spares the daily leaves.
SELECT stream_version AS version, event_type, data, occurred_at
FROM events
WHERE stream_id = %(monitor_id)s::uuid
  AND event_retention_kind(stream_type, event_type) = 'keep'
  AND team_id = %(team_id)s::uuid
  AND event_type = ANY(%(types)s::text[])
ORDER BY stream_version DESC
LIMIT %(limit)s::int;
