"""The ping statement becomes a PL/pgSQL function, ``monitor_ping_batch(pings json, defer
boolean)``, so PostgreSQL plans it once per server process instead of once per call
(docs/benchmarks.md, "Pings": the planning cost four times the execution).

The API's pools prepare no statements, so that they work behind PgBouncer in transaction mode
(docs/operations.md, "PgBouncer"): a statement sent as text is planned on every call, and the
plan of this one (eight CTEs over ``monitors``, ``teams``, the partitioned ``events`` and
``monitor_ping_bodies``) took 1.3-1.4 ms of CPU against 0.3-0.4 ms of execution for a batch of
four pings. PL/pgSQL keeps the plans of its statements for the life of the server process
(custom plans for the first five calls, then the generic plan): nothing of it lives in the
client's session, so any pooler may send the call to any server process, which plans it
there once. ``core/sql/monitors.sql`` (``monitor_ping_batch``) calls it; a change of the
statement is a new migration that replaces the function.

A kept plan keeps the table sizes it was made with: a generic plan made while ``monitors`` had
a few rows scans it sequentially, and went on doing so after it grew (measured: 200-600 ms a
call at 100,000 monitors without ANALYZE, where a new plan takes under 1 ms). The function is
planned with ``enable_seqscan = off`` (its ``SET`` clause, for its own statements only), so
every table is reached through its keys whatever the statistics were: the token and ping-key
indexes, the primary key in the UPDATE (tests/integration/test_ping_plan.py).

What the statement does (``pings`` and ``defer`` are the function's arguments; the names of
its result columns are also PL/pgSQL variables, so ``#variable_conflict use_column`` makes an
unqualified name in the statement the column, and the arguments are qualified):

    Records a batch of pings in one statement and one commit. The batch is one JSON array, in
    arrival order, of {"i": position, "h": token SHA-256 (base64), "k": kind, "m": method,
    "r": rid, "t": arrival, "x": exit status, "a": address, "u": user agent, "b": body (base64),
    "s": body size} (one JSON text costs the driver far less to send than ten arrays). A slug
    ping (docs/healthchecks.md) has no "h" but "pk": the team's ping key SHA-256 (base64) and
    "sl": the slug, resolved here to the monitor's token hash (teams_ping_key_hash_key and
    monitors_team_slug_key make it two index probes); the rest is the same.
    Its specification is core/monitors/rules.py (ping, ping_timing: healthchecks' Check.ping);
    tests/integration/test_monitor_rules_property.py checks that the two agree, so change both
    together.
    Per monitor it locks the row (in id order, so concurrent batches cannot deadlock), folds the
    monitor's pings in order with a recursive CTE (effective action, status, pending start and
    rid pairing, duration, stream version), writes the final state, stores the bodies of the
    pings that have one (at the stream version of their monitor.pinged), appends monitor.pinged
    and each status transition, and wakes the checker when the next alert moved earlier.
    alert_at only ever moves earlier here, so a ping that pushes the deadline out is a HOT update;
    the checker corrects it when it comes. Cron monitors get their expected instant from the
    checker (alert_at = the ping time): SQL has no cron engine. Returns one row per input
    position: the monitor's status after that ping, or NULL when no live monitor has the token
    (nothing is written for it), and the token hash the ping resolved to.
    With defer, a monitor that notifies (non-empty channels) and is down, or gets a fail ping
    in this batch, is left alone (not locked, nothing written) and its pings come back with
    `deferred`: their status change queues an alert, which must commit with it, so the caller
    records them again in an explicit transaction (core/monitors/ping.py). Ordinary pings never
    take that path.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # The statement as it stood in core/sql/monitors.sql, unindented.
    op.execute("""
CREATE FUNCTION monitor_ping_batch(pings json, defer boolean)
RETURNS TABLE (pos bigint, status text, woke bigint, deferred boolean, token_hash bytea)
LANGUAGE plpgsql
SET enable_seqscan = off
AS $fn$
#variable_conflict use_column
BEGIN
RETURN QUERY
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
    FROM json_to_recordset(monitor_ping_batch.pings)
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
      AND NOT (monitor_ping_batch.defer AND channels <> '{}'
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
    WHERE monitor_ping_batch.defer AND mo.status <> 'deleted'
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
END
$fn$;
""")


def downgrade() -> None:
    op.execute("DROP FUNCTION monitor_ping_batch(json, boolean);")
