"""Bounded storage (docs/operations.md, "Retention"; docs/storage.md):
the event log, run attempts and ping bodies in partitions, pruned a whole partition at a time.

    events                 PARTITION BY LIST (event_retention_kind(stream_type, event_type)):
      events_keep            definitions and everything else, kept forever (unpartitioned leaf,
                             with the global UNIQUE (stream_id, stream_version) and the primary key
                             of the old table, under their old names)
      events_pings           monitor.pinged, PARTITION BY RANGE (occurred_at), one leaf per UTC day
      events_runs            run streams, likewise
      events_deliveries      notification streams, likewise
      events_<kind>_default  events outside every daily leaf (never pruned)
    run_attempts           PARTITION BY RANGE (started_at), daily; primary key (run_id, attempt,
                           started_at). No foreign key to runs any more (nor from ping bodies to
                           monitors): dropping a leaf that has one takes an ACCESS EXCLUSIVE
                           lock on the referenced table, which would stall claims and pings;
                           the writers insert only for rows they hold (docs/storage.md)
    monitor_ping_bodies    gains received_at (the ping's arrival); PARTITION BY RANGE
                           (received_at), daily
    retention_partition_create(parent, day)
                           creates one daily leaf with its named constraints (the migration and
                           the maintenance service, core/retention/partitions.py, both use it)
    retention_snapshots    one row per prune: the transaction snapshot and the projector
                           checkpoint at which the copies in schema cronledger_snapshots were taken
    retention_lock         the row the maintenance pass holds FOR UPDATE SKIP LOCKED
    monitor_pings_kept     copies of the pings of pruned partitions that are among their monitor's
                           newest 100 (not the log: a read cache, docs/operations.md)

Existing rows are copied into the new tables (positions, versions and ids unchanged).

Revision ID: 0013
Revises: 0007
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(r"""
    CREATE FUNCTION event_retention_kind(stream_type text, event_type text) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT CASE WHEN event_type = 'monitor.pinged' THEN 'pings'
                    WHEN stream_type = 'run' THEN 'runs'
                    WHEN stream_type = 'notification' THEN 'deliveries'
                    ELSE 'keep' END
    $fn$;

    -- One daily leaf of a partitioned history table, [day, day + 1) in UTC, with its named
    -- constraints; false when it exists already. A leaf of events gets the per-partition
    -- uniqueness of the log (docs/storage.md) and the TRUNCATE guard.
    CREATE FUNCTION retention_partition_create(parent text, day date) RETURNS boolean
    LANGUAGE plpgsql AS $fn$
    DECLARE
        leaf text := parent || '_p' || to_char(day, 'YYYYMMDD');
    BEGIN
        IF to_regclass(leaf) IS NOT NULL THEN
            RETURN false;
        END IF;
        EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES FROM (%L) TO (%L)',
                       leaf, parent, (day::timestamp AT TIME ZONE 'UTC'),
                       ((day + 1)::timestamp AT TIME ZONE 'UTC'));
        IF parent LIKE 'events\_%' THEN
            EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (global_position), '
                           'ADD CONSTRAINT %I UNIQUE (event_id), '
                           'ADD CONSTRAINT %I UNIQUE (stream_id, stream_version)',
                           leaf, leaf || '_pkey', leaf || '_event_id_key',
                           leaf || '_stream_version_key');
            EXECUTE format('CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON %I '
                           'FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change()', leaf);
        END IF;
        RETURN true;
    END
    $fn$;

    DROP VIEW reporting.events;
    ALTER TABLE events RENAME TO events_unpartitioned;

    CREATE TABLE events (
        global_position bigint      GENERATED ALWAYS AS IDENTITY,
        event_id        uuid        NOT NULL DEFAULT gen_random_uuid(),
        stream_type     text        NOT NULL,
        stream_id       uuid        NOT NULL,
        stream_version  integer     NOT NULL,
        event_type      text        NOT NULL,
        team_id         uuid        NOT NULL,
        data            jsonb       NOT NULL DEFAULT '{}'::jsonb,
        metadata        jsonb       NOT NULL DEFAULT '{}'::jsonb,
        occurred_at     timestamptz NOT NULL,
        recorded_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
        tx_id           xid8        NOT NULL DEFAULT pg_current_xact_id(),
        CONSTRAINT events_stream_version_check CHECK (stream_version >= 1)
    ) PARTITION BY LIST (event_retention_kind(stream_type, event_type));
    CREATE TABLE events_keep PARTITION OF events FOR VALUES IN ('keep');
    CREATE TABLE events_pings PARTITION OF events FOR VALUES IN ('pings')
        PARTITION BY RANGE (occurred_at);
    CREATE TABLE events_runs PARTITION OF events FOR VALUES IN ('runs')
        PARTITION BY RANGE (occurred_at);
    CREATE TABLE events_deliveries PARTITION OF events FOR VALUES IN ('deliveries')
        PARTITION BY RANGE (occurred_at);
    CREATE TABLE events_pings_default PARTITION OF events_pings DEFAULT;
    CREATE TABLE events_runs_default PARTITION OF events_runs DEFAULT;
    CREATE TABLE events_deliveries_default PARTITION OF events_deliveries DEFAULT;

    ALTER TABLE run_attempts RENAME TO run_attempts_unpartitioned;
    ALTER TABLE run_attempts_unpartitioned
        RENAME CONSTRAINT run_attempts_pkey TO run_attempts_unpartitioned_pkey;
    ALTER TABLE run_attempts_unpartitioned
        RENAME CONSTRAINT run_attempts_run_id_fkey TO run_attempts_unpartitioned_run_id_fkey;
    CREATE TABLE run_attempts (
        run_id             uuid        NOT NULL,
        attempt            integer     NOT NULL,
        started_at         timestamptz NOT NULL,
        finished_at        timestamptz NOT NULL,
        duration_ms        integer     NOT NULL,
        request            jsonb       NOT NULL,
        response_status    integer,
        response_headers   jsonb,
        response_body      bytea,
        response_truncated boolean     NOT NULL DEFAULT false,
        error_class        text,
        error              text,
        lateness_ms        integer,
        worker_id          text,
        CONSTRAINT run_attempts_pkey PRIMARY KEY (run_id, attempt, started_at)
    ) PARTITION BY RANGE (started_at);
    CREATE TABLE run_attempts_default PARTITION OF run_attempts DEFAULT;

    ALTER TABLE monitor_ping_bodies RENAME TO monitor_ping_bodies_unpartitioned;
    ALTER TABLE monitor_ping_bodies_unpartitioned
        RENAME CONSTRAINT monitor_ping_bodies_pkey TO monitor_ping_bodies_unpartitioned_pkey;
    ALTER TABLE monitor_ping_bodies_unpartitioned
        RENAME CONSTRAINT monitor_ping_bodies_monitor_id_fkey
        TO monitor_ping_bodies_unpartitioned_monitor_id_fkey;
    CREATE TABLE monitor_ping_bodies (
        monitor_id   uuid        NOT NULL,
        version      integer     NOT NULL,
        body         bytea       NOT NULL,
        received_at  timestamptz NOT NULL,
        CONSTRAINT monitor_ping_bodies_pkey PRIMARY KEY (monitor_id, version, received_at)
    ) PARTITION BY RANGE (received_at);
    CREATE TABLE monitor_ping_bodies_default PARTITION OF monitor_ping_bodies DEFAULT;

    -- Daily leaves for the history already there and the next days (the maintenance service
    -- keeps creating them ahead).
    DO $do$
    DECLARE
        first_day date;
        parent text;
        d date;
    BEGIN
        SELECT least(current_date,
                     (SELECT min(occurred_at AT TIME ZONE 'UTC')::date FROM events_unpartitioned
                      WHERE event_retention_kind(stream_type, event_type) <> 'keep'),
                     (SELECT min(started_at AT TIME ZONE 'UTC')::date
                      FROM run_attempts_unpartitioned))
        INTO first_day;
        FOREACH parent IN ARRAY ARRAY['events_pings', 'events_runs', 'events_deliveries',
                                      'run_attempts', 'monitor_ping_bodies'] LOOP
            d := first_day;
            WHILE d <= current_date + 3 LOOP
                PERFORM retention_partition_create(parent, d);
                d := d + 1;
            END LOOP;
        END LOOP;
    END
    $do$;

    INSERT INTO events OVERRIDING SYSTEM VALUE SELECT * FROM events_unpartitioned;
    SELECT setval(pg_get_serial_sequence('events', 'global_position'),
                  greatest((SELECT max(global_position) FROM events_unpartitioned), 1),
                  (SELECT max(global_position) FROM events_unpartitioned) IS NOT NULL);
    INSERT INTO run_attempts SELECT * FROM run_attempts_unpartitioned;
    INSERT INTO monitor_ping_bodies (monitor_id, version, body, received_at)
    SELECT b.monitor_id, b.version, b.body, coalesce(e.occurred_at, now())
    FROM monitor_ping_bodies_unpartitioned b
    LEFT JOIN events e ON e.stream_id = b.monitor_id AND e.stream_version = b.version;

    DROP TRIGGER events_append_only_truncate ON events_unpartitioned;
    DROP TRIGGER events_append_only_rows ON events_unpartitioned;
    DROP TABLE events_unpartitioned;
    DROP TABLE run_attempts_unpartitioned;
    DROP TABLE monitor_ping_bodies_unpartitioned;

    ALTER TABLE events_keep
        ADD CONSTRAINT events_pkey PRIMARY KEY (global_position),
        ADD CONSTRAINT events_event_id_key UNIQUE (event_id),
        ADD CONSTRAINT events_stream_version_key UNIQUE (stream_id, stream_version);
    CREATE INDEX events_tx_id_position_idx ON events (tx_id, global_position);
    CREATE INDEX events_team_id_position_idx ON events (team_id, global_position);

    CREATE TRIGGER events_append_only_rows BEFORE UPDATE OR DELETE ON events
        FOR EACH ROW EXECUTE FUNCTION events_reject_change();
    CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events
        FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change();
    CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events_keep
        FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change();
    CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events_pings
        FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change();
    CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events_runs
        FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change();
    CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events_deliveries
        FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change();
    CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events_pings_default
        FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change();
    CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events_runs_default
        FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change();
    CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events_deliveries_default
        FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change();

    CREATE VIEW reporting.events AS
    SELECT global_position, event_id, stream_type, stream_id, stream_version, event_type,
           team_id, reporting.redact(data) AS data, reporting.redact(metadata) AS metadata,
           occurred_at, recorded_at
    FROM events;

    CREATE SCHEMA cronledger_snapshots;
    COMMENT ON SCHEMA cronledger_snapshots IS
        'cronledger: copies of the projections at the last prune (docs/operations.md)';

    CREATE TABLE retention_snapshots (
        id                   bigint      GENERATED ALWAYS AS IDENTITY,
        taken_at             timestamptz NOT NULL,
        tx_snapshot          pg_snapshot NOT NULL,
        checkpoint_tx_id     xid8        NOT NULL,
        checkpoint_position  bigint      NOT NULL,
        checkpoint_events_applied bigint NOT NULL,
        tables               text[]      NOT NULL,
        CONSTRAINT retention_snapshots_pkey PRIMARY KEY (id)
    );

    CREATE TABLE retention_lock (
        name  text NOT NULL,
        CONSTRAINT retention_lock_pkey PRIMARY KEY (name)
    );
    INSERT INTO retention_lock (name) VALUES ('maintenance');

    CREATE TABLE monitor_pings_kept (
        monitor_id      uuid        NOT NULL,
        team_id         uuid        NOT NULL,
        stream_version  integer     NOT NULL,
        occurred_at     timestamptz NOT NULL,
        data            jsonb       NOT NULL,
        body            bytea,
        CONSTRAINT monitor_pings_kept_pkey PRIMARY KEY (monitor_id, stream_version)
    );
    """)


def downgrade() -> None:
    op.execute("""
    DROP TABLE monitor_pings_kept;
    DROP TABLE retention_lock;
    DROP TABLE retention_snapshots;
    DROP SCHEMA cronledger_snapshots CASCADE;
    DROP VIEW reporting.events;

    CREATE TABLE events_old (LIKE events INCLUDING DEFAULTS);
    ALTER TABLE events_old ALTER COLUMN global_position DROP DEFAULT;
    INSERT INTO events_old SELECT * FROM events;
    CREATE TABLE run_attempts_old (LIKE run_attempts INCLUDING DEFAULTS);
    INSERT INTO run_attempts_old SELECT * FROM run_attempts;
    CREATE TABLE monitor_ping_bodies_old AS SELECT monitor_id, version, body
        FROM monitor_ping_bodies;
    DROP TABLE events;
    DROP TABLE run_attempts;
    DROP TABLE monitor_ping_bodies;
    DROP FUNCTION retention_partition_create(text, date);
    DROP FUNCTION event_retention_kind(text, text);

    ALTER TABLE events_old RENAME TO events;
    ALTER TABLE events ALTER COLUMN global_position ADD GENERATED ALWAYS AS IDENTITY;
    SELECT setval(pg_get_serial_sequence('events', 'global_position'),
                  greatest((SELECT max(global_position) FROM events), 1),
                  (SELECT max(global_position) FROM events) IS NOT NULL);
    ALTER TABLE events
        ADD CONSTRAINT events_pkey PRIMARY KEY (global_position),
        ADD CONSTRAINT events_event_id_key UNIQUE (event_id),
        ADD CONSTRAINT events_stream_version_key UNIQUE (stream_id, stream_version),
        ADD CONSTRAINT events_stream_version_check CHECK (stream_version >= 1);
    CREATE INDEX events_tx_id_position_idx ON events (tx_id, global_position);
    CREATE INDEX events_team_id_position_idx ON events (team_id, global_position);
    CREATE TRIGGER events_append_only_rows BEFORE UPDATE OR DELETE ON events
        FOR EACH ROW EXECUTE FUNCTION events_reject_change();
    CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events
        FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change();
    CREATE VIEW reporting.events AS
    SELECT global_position, event_id, stream_type, stream_id, stream_version, event_type,
           team_id, reporting.redact(data) AS data, reporting.redact(metadata) AS metadata,
           occurred_at, recorded_at
    FROM events;

    ALTER TABLE run_attempts_old RENAME TO run_attempts;
    ALTER TABLE run_attempts
        ADD CONSTRAINT run_attempts_pkey PRIMARY KEY (run_id, attempt),
        ADD CONSTRAINT run_attempts_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id)
            ON DELETE CASCADE;
    ALTER TABLE monitor_ping_bodies_old RENAME TO monitor_ping_bodies;
    ALTER TABLE monitor_ping_bodies
        ALTER COLUMN monitor_id SET NOT NULL, ALTER COLUMN version SET NOT NULL,
        ALTER COLUMN body SET NOT NULL,
        ADD CONSTRAINT monitor_ping_bodies_pkey PRIMARY KEY (monitor_id, version),
        ADD CONSTRAINT monitor_ping_bodies_monitor_id_fkey FOREIGN KEY (monitor_id)
            REFERENCES monitors (id) ON DELETE CASCADE;
    """)
