-- Monitors: the `monitors` inline projection and its team-scoped reads, the ping statement
-- (core/monitors/ping.py) and the checker's claim, decisions and locks. Their alert state is in
-- notifications.sql, their uptime read models in projections.sql (writes) and reports.sql (reads).

-- name: monitor_upsert
-- Writes the monitor projection row from the state folded over the monitor's stream (commands).
INSERT INTO monitors (id, team_id, name, schedule, timezone, period_seconds, grace_seconds,
                      methods, manual_resume, ping_token_hash, status, last_ping_at,
                      last_start_at, last_start_rid, last_duration_ms, next_expected_at,
                      alert_at, channels, realert_every, version, created_at, updated_at,
                      broken_at, broken_reason, slug, tags, schedule_text, min_duration,
                      max_duration, start_keywords, success_keywords, failure_keywords,
                      alert_after_failures, recover_after_successes, depends_on)
VALUES (%(id)s::uuid, %(team_id)s::uuid, %(name)s::text, %(schedule)s::text, %(timezone)s::text,
        %(period_seconds)s::float8, %(grace_seconds)s::int, %(methods)s::text,
        %(manual_resume)s::bool, %(ping_token_hash)s::bytea, %(status)s::text,
        %(last_ping_at)s::timestamptz, %(last_start_at)s::timestamptz,
        %(last_start_rid)s::uuid, %(last_duration_ms)s::bigint,
        %(next_expected_at)s::timestamptz, %(alert_at)s::timestamptz, %(channels)s::uuid[],
        %(realert_every)s::int, %(version)s::int,
        %(created_at)s::timestamptz, %(updated_at)s::timestamptz,
        %(broken_at)s::timestamptz, %(broken_reason)s::text, %(slug)s::text,
        %(tags)s::text[], %(schedule_text)s::text, %(min_duration)s::int,
        %(max_duration)s::int, %(start_keywords)s::text[], %(success_keywords)s::text[],
        %(failure_keywords)s::text[], %(alert_after_failures)s::int,
        %(recover_after_successes)s::int, %(depends_on)s::uuid[])
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
    slug = excluded.slug, tags = excluded.tags, schedule_text = excluded.schedule_text,
    min_duration = excluded.min_duration, max_duration = excluded.max_duration,
    start_keywords = excluded.start_keywords, success_keywords = excluded.success_keywords,
    failure_keywords = excluded.failure_keywords,
    alert_after_failures = excluded.alert_after_failures,
    recover_after_successes = excluded.recover_after_successes,
    depends_on = excluded.depends_on;

-- name: monitor_lock
-- The current state of one monitor, locked for a command (deleted monitors are not found).
SELECT id, team_id, name, schedule, timezone, period_seconds, grace_seconds, methods,
       manual_resume, ping_token_hash, status, last_ping_at, last_start_at, last_start_rid,
       last_duration_ms, next_expected_at, alert_at, channels, realert_every, version,
       created_at, updated_at, broken_at, broken_reason, slug, tags, schedule_text,
       min_duration, max_duration, start_keywords, success_keywords, failure_keywords,
       alert_after_failures, recover_after_successes, depends_on
FROM monitors
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND status <> 'deleted'
FOR UPDATE;

-- name: monitor_get
SELECT id, team_id, name, schedule, timezone, grace_seconds, methods, manual_resume, status,
       last_ping_at, last_start_at, last_duration_ms, next_expected_at, alert_at, channels,
       realert_every, version, created_at, updated_at, broken_at, broken_reason, slug, tags,
       schedule_text, min_duration, max_duration, start_keywords, success_keywords,
       failure_keywords, alert_after_failures, recover_after_successes, depends_on
FROM monitors
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND status <> 'deleted';

-- name: monitor_choices
-- The team's live monitors, id and name only, in creation order (a form's picker by name).
SELECT id, name
FROM monitors
WHERE team_id = %(team_id)s::uuid AND status <> 'deleted'
ORDER BY created_at, id
LIMIT %(limit)s::int;

-- name: monitor_list
-- Keyset pagination on (created_at, id).
SELECT id, team_id, name, schedule, timezone, grace_seconds, methods, manual_resume, status,
       last_ping_at, last_start_at, last_duration_ms, next_expected_at, alert_at, channels,
       realert_every, version, created_at, updated_at, broken_at, broken_reason, slug, tags,
       schedule_text, min_duration, max_duration, start_keywords, success_keywords,
       failure_keywords, alert_after_failures, recover_after_successes, depends_on
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
-- core/retention/prune.py); keyset on the stream version. A PL/pgSQL function, so its plan
-- over the daily leaves of pings and of their bodies is made once per server process
-- (migrations/versions/2026_12_02_0039_ping_list_event_filter_functions.py says how it reads).
SELECT p.stream_version AS version, p.occurred_at AS received_at, p.data ->> 'kind' AS kind,
       p.data ->> 'method' AS method, (p.data ->> 'exit_status')::int AS exit_status,
       (p.data ->> 'rid')::uuid AS rid, p.data ->> 'remote_addr' AS remote_addr,
       p.data ->> 'user_agent' AS user_agent, (p.data ->> 'body_size')::int AS body_size,
       (p.data ->> 'duration_ms')::bigint AS duration_ms, p.body
FROM monitor_ping_list(%(monitor_id)s::uuid, %(team_id)s::uuid, %(before_version)s::int,
                       %(limit)s::int) AS p;

-- name: monitor_ping_marks
-- A monitor's pings since %(since)s, latest first, without their bodies (the timeline of its
-- dashboard page): when, which kind, the exit status. A PL/pgSQL function, so its plan over
-- the daily leaves of pings is made once per server process
-- (migrations/versions/2026_12_02_0036_ping_marks_function.py).
SELECT received_at, kind, exit_status
FROM monitor_ping_marks(%(monitor_id)s::uuid, %(team_id)s::uuid, %(since)s::timestamptz,
                        %(limit)s::int);

-- name: monitor_notify
SELECT pg_notify('cronledger_monitors', %(reason)s::text);

-- name: monitor_ping_batch
-- Records a batch of pings in one statement and one commit: the PL/pgSQL function of the same
-- name (migrations/versions/2026_12_02_0021_ping_batch_function.py, which says what it does), so
-- that each server process plans the statement once, not on every call, without prepared
-- statements (docs/benchmarks.md, "Pings"). %(pings)s: one JSON array, in arrival order, of
-- {"i": position, "h": token SHA-256 (base64), "k": kind, "m": method, "r": rid, "t": arrival,
-- "x": exit status, "a": address, "u": user agent, "b": body (base64), "s": body size} or, for
-- a slug ping, "pk": the team's ping key SHA-256 (base64) and "sl": the slug instead of "h".
-- %(defer)s: leave the monitors whose status change queues an alert alone (`deferred`).
-- Its specification is core/monitors/rules.py; tests/integration/test_monitor_rules_property.py
-- checks that the two agree. One row per input position: the status after that ping (NULL: no
-- live monitor has the token), whether the checker was woken, deferred, the token hash, the
-- duration of the run it closed and its effective action (migration 0023: keywords and
-- run-time bounds).
SELECT pos, status, woke, deferred, token_hash, duration_ms, action
FROM monitor_ping_batch(%(pings)s::json, %(defer)s::bool);

-- name: monitor_claim_due
-- The checker's claim (docs/heartbeats.md): monitors with a decision due, oldest first, skipping rows
-- another checker - or an in-flight ping - holds.
SELECT id, team_id, name, schedule, timezone, period_seconds, grace_seconds, status,
       last_ping_at, last_start_at, next_expected_at, alert_at, channels, realert_every,
       version, created_at, broken_at, max_duration, alert_after_failures,
       recover_after_successes
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
       m.min_duration, m.schedule, m.timezone, m.created_at, m.grace_seconds,
       m.alert_after_failures, m.recover_after_successes,
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
SELECT id, team_id, name, status, channels, realert_every, last_ping_at, last_start_at,
       schedule, timezone, created_at, grace_seconds, alert_after_failures,
       recover_after_successes
FROM monitors
WHERE id = %(id)s::uuid
FOR UPDATE SKIP LOCKED;

-- name: monitor_mark_broken_many
-- Monitors whose stored schedule no longer evaluates (core/monitors/checker.py): the projection takes the
-- `monitor.broken` event at the version the caller numbered it (core/events.py:Head) and is no
-- longer claimed (alert_at NULL). The version read is compared, as for decisions: a monitor
-- pinged since is left to the next claim.
UPDATE monitors m SET broken_at = %(now)s::timestamptz, broken_reason = b.reason,
                      alert_at = NULL, next_expected_at = NULL,
                      version = b.version, updated_at = %(now)s::timestamptz
FROM unnest(%(ids)s::uuid[], %(read_versions)s::int[], %(versions)s::int[], %(reasons)s::text[])
     AS b(id, read_version, version, reason)
WHERE m.id = b.id AND m.version = b.read_version
RETURNING m.id, m.team_id, m.version, m.broken_reason;

-- name: monitor_slug_taken
-- Whether a live monitor of the team other than %(id)s has the slug (core/monitors/commands.py).
SELECT EXISTS (SELECT 1 FROM monitors
               WHERE team_id = %(team_id)s::uuid AND slug = %(slug)s::text
                 AND status <> 'deleted' AND id <> %(id)s::uuid) AS taken;

-- name: monitor_slugs_numbered
-- The team's live slugs that are %(slug)s or %(slug)s-<n> (core/monitors/commands.py: the
-- slug derived from a name another monitor has already).
SELECT slug FROM monitors
WHERE team_id = %(team_id)s::uuid AND status <> 'deleted'
  AND (slug = %(slug)s::text OR slug ~ ('^' || %(slug)s::text || '-[0-9]+$'));

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

-- name: monitor_ping_token_upsert
-- Keeps a monitor's newly minted ping token, sealed (core/monitors/tokens.py), in the command's
-- transaction; a rotation replaces the row.
INSERT INTO monitor_ping_tokens (monitor_id, team_id, token_hash, key_id, nonce, ciphertext,
                                 updated_at)
VALUES (%(monitor_id)s::uuid, %(team_id)s::uuid, %(token_hash)s::bytea, %(key_id)s::text,
        %(nonce)s::bytea, %(ciphertext)s::bytea, %(now)s::timestamptz)
ON CONFLICT ON CONSTRAINT monitor_ping_tokens_pkey DO UPDATE SET
    team_id = excluded.team_id, token_hash = excluded.token_hash, key_id = excluded.key_id,
    nonce = excluded.nonce, ciphertext = excluded.ciphertext, updated_at = excluded.updated_at;

-- name: monitor_ping_token_delete
-- A token minted without a secret key: the sealed copy of the previous one goes too.
DELETE FROM monitor_ping_tokens WHERE monitor_id = %(monitor_id)s::uuid;

-- name: monitor_ping_token_fetch_many
-- The sealed tokens of a team's monitors that are still their current token (a rotated
-- token's row is never returned, even for the instant before its replacement commits).
SELECT t.monitor_id, t.team_id, t.key_id, t.nonce, t.ciphertext
FROM monitor_ping_tokens t
JOIN monitors m ON m.id = t.monitor_id AND m.team_id = t.team_id
WHERE t.monitor_id = ANY(%(ids)s::uuid[]) AND t.team_id = %(team_id)s::uuid
  AND m.ping_token_hash = t.token_hash AND m.status <> 'deleted';

-- name: monitor_ping_token_rotate_batch
-- Sealed ping tokens not under the current key, in id order after the keyset; locked until
-- re-sealed (core/secrets.py:rotate_key).
SELECT monitor_id, team_id, key_id, nonce, ciphertext
FROM monitor_ping_tokens
WHERE key_id <> %(current)s AND monitor_id > %(after)s::uuid
ORDER BY monitor_id
LIMIT %(limit)s::int
FOR UPDATE;

-- name: monitor_ping_token_reseal_many
UPDATE monitor_ping_tokens s SET key_id = n.key_id, nonce = n.nonce, ciphertext = n.ciphertext
FROM unnest(%(ids)s::uuid[], %(key_ids)s::text[], %(nonces)s::bytea[],
            %(ciphertexts)s::bytea[]) AS n(id, key_id, nonce, ciphertext)
WHERE s.monitor_id = n.id;
