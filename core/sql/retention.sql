-- Retention (core/retention/): the daily partitions of the history tables (migration 0013),
-- the maintenance pass's lock row, the prune's snapshot of the projections, the pings kept
-- past their partition, and the database size per kind (docs/operations.md, "Retention").

-- name: retention_lock_take
-- One maintenance pass at a time across processes, for the pass's transaction only (a row
-- lock, not a session advisory lock: safe behind a transaction pooler).
SELECT name FROM retention_lock WHERE name = 'maintenance' FOR UPDATE SKIP LOCKED;

-- name: retention_lock_timeout
-- DDL on a history table waits this long for its lock, then gives up until the next pass:
-- pings and claims never queue behind a DETACH for longer.
SELECT set_config('lock_timeout', %(timeout)s, true);

-- name: retention_repeatable_read
SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;

-- name: retention_partitions
-- The daily leaves of the given partitioned tables (named <parent>_pYYYYMMDD by
-- retention_partition_create), with their size in bytes.
SELECT p.relname AS parent, c.relname AS leaf, pg_total_relation_size(c.oid) AS bytes
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
JOIN pg_class p ON p.oid = i.inhparent
WHERE p.relname = ANY(%(parents)s::text[]) AND c.relname ~ '_p[0-9]{8}$'
ORDER BY p.relname, c.relname;

-- name: retention_partition_create
SELECT retention_partition_create(%(parent)s::text, %(day)s::date) AS created;

-- name: retention_default_has_rows
-- A template: {table} is a default partition, {column} its partition column. Rows in the
-- range of a new leaf keep that leaf from being created (they stay in the default).
SELECT EXISTS (SELECT 1 FROM {table} WHERE {column} >= %(start)s::timestamptz
                                      AND {column} < %(end)s::timestamptz) AS found;

-- name: retention_event_leaf_stats
-- A template: {table} is a daily leaf of events. covered: every event in it is behind the
-- projector's checkpoint (the snapshot of the read models includes it).
SELECT count(*)::bigint AS events, min(global_position) AS first_position,
       max(global_position) AS last_position, min(occurred_at) AS first_at,
       max(occurred_at) AS last_at,
       coalesce(bool_and((tx_id, global_position) <= (%(tx_id)s::xid8, %(position)s::bigint)),
                true) AS covered
FROM {table};

-- name: retention_leaf_count
-- A template: {table} is a daily leaf of run_attempts or monitor_ping_bodies.
SELECT count(*)::bigint AS rows FROM {table};

-- name: retention_checkpoint_hold
-- The projector's checkpoint, held for the prune's transaction: the read models do not move
-- while they are copied (the projector skips a locked checkpoint).
SELECT tx_id::text AS tx_id, global_position, events_applied
FROM projection_checkpoints WHERE name = %(name)s
FOR UPDATE;

-- name: retention_pings_keep
-- A template: {table} is a daily leaf of events_pings about to be dropped. Its pings that are
-- among their monitor's newest 100 are copied, with their bodies, into monitor_pings_kept (per
-- monitor in the leaf: the version of its 100th newest ping, from the leaves' indexes).
INSERT INTO monitor_pings_kept (monitor_id, team_id, stream_version, occurred_at, data, body)
SELECT e.stream_id, e.team_id, e.stream_version, e.occurred_at, e.data, b.body
FROM (SELECT DISTINCT stream_id FROM {table}) AS m
CROSS JOIN LATERAL (
    SELECT min(newest.stream_version) AS lowest
    FROM (SELECT p.stream_version FROM events_pings p
          WHERE p.stream_id = m.stream_id
          ORDER BY p.stream_version DESC LIMIT %(keep)s::int) AS newest) AS cut
JOIN {table} e ON e.stream_id = m.stream_id AND e.stream_version >= cut.lowest
LEFT JOIN monitor_ping_bodies b
  ON b.monitor_id = e.stream_id AND b.version = e.stream_version
ON CONFLICT ON CONSTRAINT monitor_pings_kept_pkey DO NOTHING;

-- name: retention_pings_kept_trim
-- Kept pings that are no longer among their monitor's newest 100 (counting the log's; UNION:
-- a ping just copied from a leaf not yet dropped counts once).
DELETE FROM monitor_pings_kept k
WHERE k.stream_version < (
    SELECT min(v) FROM (
        SELECT v FROM (SELECT p.stream_version AS v FROM events_pings p
                       WHERE p.stream_id = k.monitor_id
                       UNION
                       SELECT o.stream_version FROM monitor_pings_kept o
                       WHERE o.monitor_id = k.monitor_id) AS everything
        ORDER BY v DESC LIMIT %(keep)s::int) AS newest
    HAVING count(*) >= %(keep)s::int);

-- name: retention_snapshot_insert
INSERT INTO retention_snapshots (taken_at, tx_snapshot, checkpoint_tx_id, checkpoint_position,
                                 checkpoint_events_applied, tables, runs_before)
VALUES (%(now)s::timestamptz, pg_current_snapshot(), %(tx_id)s::xid8, %(position)s::bigint,
        %(applied)s::bigint, %(tables)s::text[], %(runs_before)s::timestamptz)
RETURNING id;

-- name: retention_runs_dropped_before
-- Every event of runs before this instant may be gone: the end of the newest events_runs
-- leaf a prune dropped or set out to drop (the latest snapshot's runs_before, the log.pruned
-- events' runs ranges: a snapshot from before migration 0017 has none), NULL if none.
SELECT greatest((SELECT max(runs_before) FROM retention_snapshots),
                (SELECT max((e.data -> 'kinds' -> 'runs' ->> 'to')::timestamptz)
                 FROM events e
                 WHERE e.team_id = %(team_id)s::uuid AND e.stream_type = 'log'
                   AND e.event_type = 'log.pruned')) AS before;

-- name: retention_snapshot_copy_runs
-- A template: {copy} is cronledger_snapshots.s<id>_runs: the runs rows created before
-- %(before)s (each run with an event that may be gone); a rebuild replays the others from the
-- log (core/rebuild.py).
CREATE TABLE {copy} AS SELECT * FROM runs WHERE created_at < %(before)s::timestamptz;

-- name: retention_snapshot_copy
-- A template: {copy} is cronledger_snapshots.s<id>_<table>, {table} the projection.
CREATE TABLE {copy} AS SELECT * FROM {table};

-- name: retention_snapshot_drop_copy
-- A template: {copy} as above.
DROP TABLE IF EXISTS {copy};

-- name: retention_snapshots_older
SELECT id, tables FROM retention_snapshots WHERE id < %(id)s::bigint;

-- name: retention_snapshot_delete
DELETE FROM retention_snapshots WHERE id = %(id)s::bigint;

-- name: retention_snapshot_latest
-- The latest snapshot, the one a rebuild starts from (core/rebuild.py).
SELECT id, tx_snapshot::text AS tx_snapshot, checkpoint_tx_id::text AS checkpoint_tx_id,
       checkpoint_position, checkpoint_events_applied, tables, runs_before
FROM retention_snapshots ORDER BY id DESC LIMIT 1;

-- name: retention_lock_holders
-- Who holds a lock on a table the prune waits for (its log line names them).
SELECT a.pid, a.backend_type, l.mode, left(a.query, 120) AS query
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.granted AND l.relation IN (to_regclass(%(parent)s), to_regclass(%(leaf)s))
  AND a.pid <> pg_backend_pid();

-- name: retention_lock_leaves
-- A template: {parent} and its daily leaf {leaf} about to be detached, locked in one statement
-- before the DETACH (so a ping or a claim that holds one of them is never stuck behind a
-- prune holding the other: the prune gives up on lock_timeout and releases both). ONLY: a
-- partitioned table locked without it locks every partition, today's too.
LOCK TABLE ONLY {parent}, ONLY {leaf} IN ACCESS EXCLUSIVE MODE;

-- name: retention_detach
-- A template: {parent} and its daily leaf {leaf}.
ALTER TABLE {parent} DETACH PARTITION {leaf};

-- name: retention_drop
-- A template: {leaf}, detached.
DROP TABLE {leaf};

-- name: retention_analyze
-- A template: {table}, a history table the pass changed.
ANALYZE {table};

-- name: retention_sizes
-- Bytes per table family, for `cronledger db-size`: a partition counts with its partitioned
-- table, the partitions of events with their kind's table (events_pings, events_keep …).
SELECT CASE WHEN n.nspname = 'cronledger_snapshots' THEN 'snapshots' ELSE p.relname END
           AS family,
       sum(pg_total_relation_size(c.oid))::bigint AS bytes, count(*)::int AS tables
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
CROSS JOIN LATERAL (
    WITH RECURSIVE up(oid, depth) AS (
        SELECT c.oid, 0
        UNION ALL
        SELECT i.inhparent, up.depth + 1 FROM pg_inherits i JOIN up ON i.inhrelid = up.oid)
    SELECT pc.relname FROM up JOIN pg_class pc ON pc.oid = up.oid
    WHERE NOT EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class pp ON pp.oid = i.inhparent
                      WHERE i.inhrelid = up.oid AND pp.relname <> 'events')
    ORDER BY up.depth LIMIT 1) AS p
WHERE c.relkind IN ('r', 'm') AND n.nspname IN ('public', 'cronledger_snapshots')
GROUP BY 1
ORDER BY 2 DESC;

-- name: retention_database_size
SELECT pg_database_size(current_database())::bigint AS bytes;

-- name: retention_runs_delete
-- Finished runs rows past the runs horizon %(before)s, except each job's newest %(keep)s (by
-- slot, the order of the job's run list): final status (a final run receives no further
-- event), no lease, no open confirmation, created and finished before the horizon (every event
-- of the stream is in a daily leaf past the horizon), none of its events in the default
-- partition (never dropped). Their attempts go with them (run_attempts is not the log;
-- run_confirmations cascade). Run in the prune's snapshot transaction, before the copy: the
-- snapshot holds what is left (docs/storage.md); the dry run runs it too, in
-- a transaction it rolls back. The candidates come from runs_finished_idx (migration 0017:
-- one day's runs per daily prune), the cut per job of theirs from runs_job_history_idx;
-- neither walks a job's whole history.
WITH candidates AS MATERIALIZED (
    SELECT r.id, r.job_id, r.scheduled_for FROM runs r
    WHERE r.status IN ('succeeded', 'failed', 'skipped', 'missed')
      AND r.finished_at < %(before)s::timestamptz
      AND r.created_at < %(before)s::timestamptz
      AND r.lease_token IS NULL),
newest AS (
    SELECT j.job_id, k.scheduled_for, k.id
    FROM (SELECT DISTINCT job_id FROM candidates) AS j
    CROSS JOIN LATERAL (
        SELECT r.scheduled_for, r.id FROM runs r WHERE r.job_id = j.job_id
        ORDER BY r.scheduled_for DESC, r.id DESC
        OFFSET %(keep)s::int - 1 LIMIT 1) AS k),
doomed AS (
    SELECT c.id FROM candidates c JOIN newest n ON n.job_id = c.job_id
    WHERE (c.scheduled_for, c.id) < (n.scheduled_for, n.id)
      AND NOT EXISTS (SELECT 1 FROM run_confirmations rc
                      WHERE rc.run_id = c.id AND rc.outcome IS NULL)
      AND NOT EXISTS (SELECT 1 FROM events_runs_default d WHERE d.stream_id = c.id)),
gone AS (
    DELETE FROM runs r USING doomed d WHERE r.id = d.id RETURNING r.id),
attempts AS (
    DELETE FROM run_attempts a USING gone g
    WHERE a.run_id = g.id AND a.started_at < %(before)s::timestamptz
    RETURNING 1)
SELECT (SELECT count(*) FROM gone)::bigint AS runs,
       (SELECT count(*) FROM attempts)::bigint AS run_attempts;

-- name: retention_hourly_delete
-- Hourly statistics buckets (read models, core/projections/job_stats.py) starting before the
-- runs horizon %(before)s: hourly buckets are kept as long as runs, daily and weekly forever.
-- In the snapshot transaction, the projector's checkpoint held, before the copy.
WITH jobs_gone AS (DELETE FROM job_stats_hourly WHERE bucket_start < %(before)s::timestamptz
                   RETURNING 1),
     teams_gone AS (DELETE FROM team_runs_hourly WHERE bucket_start < %(before)s::timestamptz
                    RETURNING 1)
SELECT (SELECT count(*) FROM jobs_gone)::bigint AS job_stats_hourly,
       (SELECT count(*) FROM teams_gone)::bigint AS team_runs_hourly;

-- name: retention_notifications_delete
-- One batch of the outbox's finished rows (delivered, given up, cancelled; never pending or
-- sending) finished before the deliveries horizon %(before)s. Each batch is its own
-- transaction; the notifier never claims a finished row, so nothing waits on these locks.
DELETE FROM notifications WHERE id IN (
    SELECT id FROM notifications
    WHERE status IN ('sent', 'failed', 'cancelled') AND finished_at < %(before)s::timestamptz
    ORDER BY finished_at LIMIT %(batch)s::int);

-- name: retention_notifications_count
SELECT count(*)::bigint AS notifications FROM notifications
WHERE status IN ('sent', 'failed', 'cancelled') AND finished_at < %(before)s::timestamptz;

-- name: retention_signin_tokens_delete
-- Dashboard sign-in links expired before %(before)s (a day before the prune): an unknown
-- token is refused like an expired one (core/sessions.py), so the rows serve nothing.
DELETE FROM ui_signin_tokens WHERE expires_at < %(before)s::timestamptz;

-- name: retention_vacuum
-- A template: {table}, a projection the prune deleted rows from (outside a transaction).
VACUUM (ANALYZE) {table};

-- name: retention_vacuum_catalog
-- The system catalogs a prune churns (the leaves and snapshot copies it creates and drops,
-- the statistics ANALYZE rewrites), vacuumed after it (outside a transaction). A role that may
-- not vacuum them gets a warning per table, not an error; autovacuum does it then.
VACUUM pg_catalog.pg_statistic, pg_catalog.pg_attribute, pg_catalog.pg_class,
       pg_catalog.pg_depend, pg_catalog.pg_type, pg_catalog.pg_index, pg_catalog.pg_constraint,
       pg_catalog.pg_inherits;
