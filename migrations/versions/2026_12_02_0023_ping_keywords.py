"""Keywords in ping bodies (docs/heartbeats.md, *Keywords in ping bodies*): healthchecks'
``start_kw``, ``success_kw`` and ``failure_kw`` with ``filter_http_body``, as lists. When a
monitor has any, the ping statement decides a ping's action from its body (core/monitors/
rules.py, ``keyword_action``).

    monitors    start_keywords, success_keywords, failure_keywords  text[] NOT NULL DEFAULT '{}'

And the ping function of migration 0021, ``monitor_ping_batch(pings json, defer boolean)``,
replaced by the statement that applies the rules of this migration and of 0022 (a success
sooner than ``min_duration`` is a failure, a started run's deadline is ``max_duration``, the
body's keywords decide the action, ``monitor.pinged`` keeps the ``requested`` kind), with two
more result columns: ``duration_ms`` (of the run the ping closed) and ``action`` (its effective
action), which the alerting path reads (core/monitors/ping.py). Its specification is
core/monitors/rules.py; tests/integration/test_monitor_rules_property.py keeps them equal.
Downgrade puts 0021's function back.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from alembic import op

revision = "0023"
down_revision = "0022"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE monitors
        ADD COLUMN start_keywords text[] NOT NULL DEFAULT '{}',
        ADD COLUMN success_keywords text[] NOT NULL DEFAULT '{}',
        ADD COLUMN failure_keywords text[] NOT NULL DEFAULT '{}';
    """)
    op.execute("DROP FUNCTION monitor_ping_batch(json, boolean);")
    op.execute(FUNCTION)


def downgrade() -> None:
    op.execute("DROP FUNCTION monitor_ping_batch(json, boolean);")
    path = Path(__file__).with_name("2026_12_02_0021_ping_batch_function.py")
    spec = importlib.util.spec_from_file_location("cronledger_migration_0021", path)
    assert spec is not None and spec.loader is not None
    previous = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(previous)
    previous.upgrade()  # 0021's function, as it was
    op.execute("""
    ALTER TABLE monitors
        DROP COLUMN start_keywords,
        DROP COLUMN success_keywords,
        DROP COLUMN failure_keywords;
    """)


# The statement as it stands in this revision (core/sql/monitors.sql calls it), unindented.
FUNCTION = """
CREATE FUNCTION monitor_ping_batch(pings json, defer boolean)
RETURNS TABLE (pos bigint, status text, woke bigint, deferred boolean, token_hash bytea,
               duration_ms bigint, action text)
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
           alert_at, version, make_interval(secs => grace_seconds) AS grace, min_duration,
           max_duration,
           coalesce(make_interval(secs => max_duration),
                    make_interval(secs => grace_seconds)) AS start_window,
           start_keywords, success_keywords, failure_keywords,
           start_keywords <> '{}' OR success_keywords <> '{}'
               OR failure_keywords <> '{}' AS filtered
    FROM monitors
    -- = ANY (ARRAY(...)), not IN (SELECT ...): the planner then expects a handful of rows
    -- and probes the token index (and the primary key in the UPDATE below) instead of
    -- hash-joining a sequential scan of every monitor, which it chose for IN against the
    -- 100 rows it assumes json_to_recordset returns (measured: pings/s fell by half as
    -- the table grew to a few thousand rows without ANALYZE).
    WHERE ping_token_hash = ANY (ARRAY(SELECT token_hash FROM b)) AND status <> 'deleted'
      AND NOT (monitor_ping_batch.defer AND channels <> '{}'
               AND (status = 'down'
                    OR ping_token_hash IN (SELECT token_hash FROM b WHERE kind = 'fail')
                    OR failure_keywords <> '{}'
                    OR (min_duration IS NOT NULL
                        AND (success_keywords <> '{}'
                             OR ping_token_hash IN (SELECT token_hash FROM b
                                                    WHERE kind = 'success')))))
    ORDER BY id
    FOR UPDATE
),
q AS (
    SELECT b.*, m.id AS monitor_id, m.min_duration,
           row_number() OVER (PARTITION BY m.id ORDER BY b.pos) AS seq,
           CASE WHEN (m.status = 'paused' AND m.manual_resume)
                  OR (m.methods = 'post' AND b.method <> 'POST') THEN 'ignored'
                WHEN NOT m.filtered THEN b.kind
                WHEN EXISTS (SELECT FROM unnest(m.failure_keywords) w
                             WHERE position(convert_to(w, 'UTF8') IN coalesce(b.body, ''::bytea))
                                   > 0) THEN 'fail'
                WHEN EXISTS (SELECT FROM unnest(m.success_keywords) w
                             WHERE position(convert_to(w, 'UTF8') IN coalesce(b.body, ''::bytea))
                                   > 0) THEN 'success'
                WHEN EXISTS (SELECT FROM unnest(m.start_keywords) w
                             WHERE position(convert_to(w, 'UTF8') IN coalesce(b.body, ''::bytea))
                                   > 0) THEN 'start'
                ELSE 'ignored' END AS action
    FROM b JOIN m ON m.ping_token_hash = b.token_hash
),
f AS (
    -- The state of each monitor after its first seq pings (seq 0: as locked).
    SELECT m.id AS monitor_id, 0::bigint AS seq, m.status, m.last_ping_at, m.last_start_at,
           m.last_start_rid, m.last_duration_ms, m.version, 0 AS pinged_version,
           NULL::text AS action, NULL::text AS previous_status, NULL::bigint AS duration_ms,
           NULL::timestamptz AS at, false AS short
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
           f.version + 1, q.action, f.status, x.duration_ms, q.at, x.short
    FROM f
    JOIN q ON q.monitor_id = f.monitor_id AND q.seq = f.seq + 1
    CROSS JOIN LATERAL (
        SELECT CASE WHEN q.action = 'success' AND f.last_start_at IS NOT NULL
                         AND f.last_start_rid IS NOT DISTINCT FROM q.rid
                    THEN floor(extract(epoch FROM q.at - f.last_start_at) * 1000)::bigint
               END AS success_ms
    ) s
    CROSS JOIN LATERAL (
        -- a success closing a run shorter than min_duration is a failure (too_short)
        SELECT coalesce(s.success_ms < q.min_duration::bigint * 1000, false) AS short
    ) k
    CROSS JOIN LATERAL (
        SELECT CASE WHEN k.short THEN 'down'
                    ELSE CASE q.action WHEN 'success' THEN 'up' WHEN 'fail' THEN 'down'
                              ELSE f.status END END AS status,
               k.short,
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
    SELECT DISTINCT ON (f.monitor_id) f.*, m.period_seconds, m.grace, m.start_window,
           m.max_duration,
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
            -- a run going with a max_duration: its deadline only (rules.next_alert)
            WHEN e.status IN ('up', 'late') AND e.last_start_at IS NOT NULL
                 AND e.max_duration IS NOT NULL THEN e.last_start_at + e.start_window
            WHEN e.status = 'up' THEN least(e.expected, e.last_start_at + e.start_window)
            WHEN e.status = 'late'
                THEN least(e.expected + e.grace, e.last_start_at + e.start_window)
            WHEN e.status IN ('new', 'paused') THEN e.last_start_at + e.start_window
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
            'user_agent', q.user_agent, 'duration_ms', f.duration_ms,
            'requested', q.kind)),
        (f.pinged_version + 1, CASE f.status WHEN 'up' THEN 'monitor.up' ELSE 'monitor.down' END,
         CASE f.status
             WHEN 'up' THEN jsonb_build_object('previous_status', f.previous_status,
                                               'reason', 'ping')
             WHEN 'down' THEN CASE WHEN f.short
                 THEN jsonb_build_object('previous_status', f.previous_status,
                                         'reason', 'too_short', 'duration_ms', f.duration_ms,
                                         'min_duration', q.min_duration)
                 ELSE jsonb_build_object('previous_status', f.previous_status,
                                         'reason', CASE WHEN q.kind = 'fail' THEN 'fail'
                                                        ELSE 'failure_keyword' END,
                                         'exit_status', q.exit_status) END END)
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
       b.token_hash, f.duration_ms, q.action
FROM b
LEFT JOIN q ON q.pos = b.pos
LEFT JOIN f ON f.monitor_id = q.monitor_id AND f.seq = q.seq
ORDER BY b.pos;
END
$fn$;
"""
