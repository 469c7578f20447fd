"""Asynchronous projections (dashboard read models, checkpoint) and the ``reporting`` schema.

Read models (no foreign keys: they are rebuilt from the log and may describe streams, such as
monitors, whose inline tables live elsewhere):
    projection_checkpoints   one forward-only checkpoint per asynchronous projector
    job_stats_hourly/daily/weekly   per job per UTC hour/day/ISO week (from Monday): runs by
                             outcome, duration and lateness
                             histograms (sparse jsonb, see core/projections/histogram.py)
    team_runs_hourly         per team per UTC hour: runs by outcome (the dashboard's 24 hours)
    job_health               per job: name, status, last outcome, consecutive failures
    monitor_state            per monitor: status, last ping, open downtime
    monitor_pings_daily      per monitor per UTC day: pings by kind
    monitor_downtime         one row per downtime period

The read models are rewritten in place batch after batch: a low fillfactor leaves room in each
page for HOT updates (no index entry, dead versions pruned within the page), which keeps them
compact. The day and week expression indexes serve the views' ``day``/``week`` filters.

The ``reporting`` schema holds the stable, documented views of docs/reporting.md and their
helper functions. ``cronledger_reporting`` may read that schema and nothing else. Roles are
cluster-wide: the role is created only if missing (tolerating a concurrent creation by another
database's migration), and the downgrade only revokes this database's privileges, leaving the
role for the other databases that may use it (drop it by hand once none does).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30
"""

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

ROLE = "cronledger_reporting"


def upgrade() -> None:
    op.execute("""
    CREATE TABLE projection_checkpoints (
        name             text        NOT NULL,
        tx_id            xid8        NOT NULL DEFAULT '0'::xid8,
        global_position  bigint      NOT NULL DEFAULT 0,
        events_applied   bigint      NOT NULL DEFAULT 0,
        updated_at       timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT projection_checkpoints_pkey PRIMARY KEY (name)
    );
    INSERT INTO projection_checkpoints (name) VALUES ('reporting');

    CREATE TABLE job_stats_hourly (
        job_id              uuid        NOT NULL,
        bucket_start        timestamptz NOT NULL,
        team_id             uuid        NOT NULL,
        succeeded           integer     NOT NULL DEFAULT 0,
        failed              integer     NOT NULL DEFAULT 0,
        skipped             integer     NOT NULL DEFAULT 0,
        missed              integer     NOT NULL DEFAULT 0,
        retries             integer     NOT NULL DEFAULT 0,
        duration_histogram  jsonb       NOT NULL DEFAULT '{}'::jsonb,
        lateness_histogram  jsonb       NOT NULL DEFAULT '{}'::jsonb,
        p50_duration_ms     integer,
        p95_duration_ms     integer,
        p50_lateness_ms     integer,
        p95_lateness_ms     integer,
        CONSTRAINT job_stats_hourly_pkey PRIMARY KEY (job_id, bucket_start)
    ) WITH (fillfactor = 50);
    CREATE INDEX job_stats_hourly_team_idx ON job_stats_hourly (team_id, bucket_start);

    CREATE TABLE job_stats_daily (
        job_id              uuid        NOT NULL,
        bucket_start        timestamptz NOT NULL,
        team_id             uuid        NOT NULL,
        succeeded           integer     NOT NULL DEFAULT 0,
        failed              integer     NOT NULL DEFAULT 0,
        skipped             integer     NOT NULL DEFAULT 0,
        missed              integer     NOT NULL DEFAULT 0,
        retries             integer     NOT NULL DEFAULT 0,
        duration_histogram  jsonb       NOT NULL DEFAULT '{}'::jsonb,
        lateness_histogram  jsonb       NOT NULL DEFAULT '{}'::jsonb,
        p50_duration_ms     integer,
        p95_duration_ms     integer,
        p50_lateness_ms     integer,
        p95_lateness_ms     integer,
        CONSTRAINT job_stats_daily_pkey PRIMARY KEY (job_id, bucket_start)
    ) WITH (fillfactor = 50);
    CREATE INDEX job_stats_daily_team_idx ON job_stats_daily (team_id, bucket_start);
    CREATE INDEX job_stats_daily_day_idx ON job_stats_daily
        (((bucket_start AT TIME ZONE 'UTC')::date));

    CREATE TABLE job_stats_weekly (
        job_id              uuid        NOT NULL,
        bucket_start        timestamptz NOT NULL,
        team_id             uuid        NOT NULL,
        succeeded           integer     NOT NULL DEFAULT 0,
        failed              integer     NOT NULL DEFAULT 0,
        skipped             integer     NOT NULL DEFAULT 0,
        missed              integer     NOT NULL DEFAULT 0,
        retries             integer     NOT NULL DEFAULT 0,
        duration_histogram  jsonb       NOT NULL DEFAULT '{}'::jsonb,
        lateness_histogram  jsonb       NOT NULL DEFAULT '{}'::jsonb,
        p50_duration_ms     integer,
        p95_duration_ms     integer,
        p50_lateness_ms     integer,
        p95_lateness_ms     integer,
        CONSTRAINT job_stats_weekly_pkey PRIMARY KEY (job_id, bucket_start)
    ) WITH (fillfactor = 50);
    CREATE INDEX job_stats_weekly_team_idx ON job_stats_weekly (team_id, bucket_start);
    CREATE INDEX job_stats_weekly_week_idx ON job_stats_weekly
        (((bucket_start AT TIME ZONE 'UTC')::date));

    CREATE TABLE team_runs_hourly (
        team_id       uuid        NOT NULL,
        bucket_start  timestamptz NOT NULL,
        succeeded     integer     NOT NULL DEFAULT 0,
        failed        integer     NOT NULL DEFAULT 0,
        skipped       integer     NOT NULL DEFAULT 0,
        missed        integer     NOT NULL DEFAULT 0,
        CONSTRAINT team_runs_hourly_pkey PRIMARY KEY (team_id, bucket_start)
    ) WITH (fillfactor = 70);

    CREATE TABLE job_health (
        job_id                uuid        NOT NULL,
        team_id               uuid        NOT NULL,
        name                  text        NOT NULL,
        status                text        NOT NULL,
        last_outcome          text,
        last_outcome_at       timestamptz,
        last_failure_at       timestamptz,
        last_error_class      text,
        last_error            text,
        consecutive_failures  integer     NOT NULL DEFAULT 0,
        updated_at            timestamptz NOT NULL,
        CONSTRAINT job_health_pkey PRIMARY KEY (job_id)
    ) WITH (fillfactor = 70);
    CREATE INDEX job_health_team_idx ON job_health (team_id, status);
    CREATE INDEX job_health_failing_idx ON job_health (team_id, last_failure_at DESC)
        WHERE last_outcome = 'failed';

    CREATE TABLE monitor_state (
        monitor_id    uuid        NOT NULL,
        team_id       uuid        NOT NULL,
        name          text        NOT NULL DEFAULT '',
        status        text        NOT NULL,
        last_ping_at  timestamptz,
        down_since    timestamptz,
        created_at    timestamptz NOT NULL,
        deleted_at    timestamptz,
        updated_at    timestamptz NOT NULL,
        CONSTRAINT monitor_state_pkey PRIMARY KEY (monitor_id)
    ) WITH (fillfactor = 70);
    CREATE INDEX monitor_state_team_idx ON monitor_state (team_id, status);

    CREATE TABLE monitor_pings_daily (
        monitor_id  uuid    NOT NULL,
        day         date    NOT NULL,
        team_id     uuid    NOT NULL,
        pings       integer NOT NULL DEFAULT 0,
        success     integer NOT NULL DEFAULT 0,
        start       integer NOT NULL DEFAULT 0,
        fail        integer NOT NULL DEFAULT 0,
        log         integer NOT NULL DEFAULT 0,
        CONSTRAINT monitor_pings_daily_pkey PRIMARY KEY (monitor_id, day)
    ) WITH (fillfactor = 70);
    CREATE INDEX monitor_pings_daily_team_idx ON monitor_pings_daily (team_id, day);
    CREATE INDEX monitor_pings_daily_day_idx ON monitor_pings_daily (day);

    CREATE TABLE monitor_downtime (
        monitor_id  uuid        NOT NULL,
        started_at  timestamptz NOT NULL,
        team_id     uuid        NOT NULL,
        ended_at    timestamptz,
        end_reason  text,
        CONSTRAINT monitor_downtime_pkey PRIMARY KEY (monitor_id, started_at),
        CONSTRAINT monitor_downtime_period_check CHECK (ended_at IS NULL OR ended_at >= started_at)
    );
    CREATE INDEX monitor_downtime_team_idx ON monitor_downtime (team_id, started_at);
    """)
    _reporting_schema()
    _reporting_role()


def _reporting_schema() -> None:
    op.execute(r"""
    CREATE SCHEMA reporting;
    COMMENT ON SCHEMA reporting IS
        'cronledger: stable reporting views, documented in docs/reporting.md';

    -- Histograms are sparse jsonb objects {"bucket index": count}; see docs/reporting.md.
    CREATE FUNCTION reporting.histogram_merge(a jsonb, b jsonb) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT coalesce(jsonb_object_agg(key, total), '{}'::jsonb)
        FROM (SELECT key, sum(value::bigint) AS total
              FROM (SELECT * FROM jsonb_each_text(coalesce(a, '{}'::jsonb))
                    UNION ALL
                    SELECT * FROM jsonb_each_text(coalesce(b, '{}'::jsonb))) AS pairs
              GROUP BY key) AS sums
    $fn$;

    -- histogram_sum accumulates into an array indexed by bucket (far cheaper per row than
    -- merging jsonb objects), then returns the usual jsonb object.
    CREATE FUNCTION reporting.histogram_accumulate(state bigint[], h jsonb) RETURNS bigint[]
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $fn$
    DECLARE
        k text;
        v text;
    BEGIN
        IF h IS NOT NULL THEN
            FOR k, v IN SELECT key, value FROM jsonb_each_text(h) LOOP
                state[k::integer] := coalesce(state[k::integer], 0) + v::bigint;
            END LOOP;
        END IF;
        RETURN state;
    END
    $fn$;

    CREATE FUNCTION reporting.histogram_of_array(state bigint[]) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT coalesce(jsonb_object_agg(i::text, state[i]), '{}'::jsonb)
        FROM generate_subscripts(state, 1) AS i
        WHERE state[i] IS NOT NULL
    $fn$;

    CREATE AGGREGATE reporting.histogram_sum(jsonb) (
        SFUNC = reporting.histogram_accumulate, STYPE = bigint[], INITCOND = '{}',
        FINALFUNC = reporting.histogram_of_array
    );

    -- Nearest-rank percentile q (0 < q <= 1) of a histogram, in ms: the geometric middle of
    -- the bucket holding that rank (within 4.9 % + 0.5 ms of the exact value; 0 is exact).
    CREATE FUNCTION reporting.histogram_percentile(h jsonb, q double precision) RETURNS integer
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
        SELECT CASE WHEN b = 0 THEN 0 ELSE round(power(1.1, b - 0.5))::integer END
        FROM (SELECT key::integer AS b,
                     sum(value::bigint) OVER (ORDER BY key::integer) AS cumulative,
                     sum(value::bigint) OVER () AS total
              FROM jsonb_each_text(h)) AS buckets
        WHERE total > 0 AND cumulative >= greatest(1, ceil(q * total))
        ORDER BY b
        LIMIT 1
    $fn$;

    -- Event data as shown to reporting users: values under credential-like keys are replaced
    -- and URL user-info and credential-like query parameters are masked, at every depth.
    CREATE FUNCTION reporting.redact(doc jsonb) RETURNS jsonb
    LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $fn$
    DECLARE
        result jsonb := '{}'::jsonb;
        k text;
        v jsonb;
    BEGIN
        CASE jsonb_typeof(doc)
        WHEN 'object' THEN
            FOR k, v IN SELECT key, value FROM jsonb_each(doc) LOOP
                IF lower(k) ~ ('(secret|token|passw|authorization|cookie|api[_-]?key|'
                               || 'signature|credential|private|ciphertext|key_hash)') THEN
                    result := result || jsonb_build_object(k, '[redacted]');
                ELSE
                    result := result || jsonb_build_object(k, reporting.redact(v));
                END IF;
            END LOOP;
            RETURN result;
        WHEN 'array' THEN
            RETURN (SELECT coalesce(jsonb_agg(reporting.redact(e) ORDER BY i), '[]'::jsonb)
                    FROM jsonb_array_elements(doc) WITH ORDINALITY AS a(e, i));
        WHEN 'string' THEN
            RETURN to_jsonb(regexp_replace(
                regexp_replace(doc #>> '{}', '(://)[^/@\s]+@', '\1[redacted]@', 'g'),
                '([?&][^=&#\s]*(secret|token|passw|key|signature|auth)[^=&#\s]*=)[^&#\s]*',
                '\1[redacted]', 'gi'));
        ELSE
            RETURN doc;
        END CASE;
    END
    $fn$;

    CREATE VIEW reporting.runs AS
    SELECT r.id AS run_id, r.team_id, r.job_id, j.name AS job_name, r.scheduled_for, r.trigger,
           r.status, r.attempt AS attempts, r.max_attempts, r.started_at, r.finished_at,
           r.lateness_ms, r.duration_ms, r.response_status, r.error_class, r.error, r.reason,
           r.created_at
    FROM runs r
    JOIN jobs j ON j.id = r.job_id;

    CREATE VIEW reporting.job_daily AS
    SELECT s.team_id, s.job_id, j.name AS job_name,
           (s.bucket_start AT TIME ZONE 'UTC')::date AS day,
           s.succeeded + s.failed + s.skipped + s.missed AS runs,
           s.succeeded, s.failed, s.skipped, s.missed, s.retries,
           round(s.succeeded::numeric / nullif(s.succeeded + s.failed, 0), 4) AS success_rate,
           s.p50_duration_ms, s.p95_duration_ms, s.p50_lateness_ms, s.p95_lateness_ms,
           s.duration_histogram, s.lateness_histogram
    FROM job_stats_daily s
    LEFT JOIN jobs j ON j.id = s.job_id;

    CREATE VIEW reporting.job_weekly AS
    SELECT s.team_id, s.job_id, j.name AS job_name,
           (s.bucket_start AT TIME ZONE 'UTC')::date AS week,
           s.succeeded + s.failed + s.skipped + s.missed AS runs,
           s.succeeded, s.failed, s.skipped, s.missed, s.retries,
           round(s.succeeded::numeric / nullif(s.succeeded + s.failed, 0), 4) AS success_rate,
           s.p50_duration_ms, s.p95_duration_ms, s.p50_lateness_ms, s.p95_lateness_ms,
           s.duration_histogram, s.lateness_histogram
    FROM job_stats_weekly s
    LEFT JOIN jobs j ON j.id = s.job_id;

    CREATE VIEW reporting.job_hourly AS
    SELECT s.team_id, s.job_id, j.name AS job_name, s.bucket_start AS hour,
           s.succeeded + s.failed + s.skipped + s.missed AS runs,
           s.succeeded, s.failed, s.skipped, s.missed, s.retries,
           round(s.succeeded::numeric / nullif(s.succeeded + s.failed, 0), 4) AS success_rate,
           s.p50_duration_ms, s.p95_duration_ms, s.p50_lateness_ms, s.p95_lateness_ms,
           s.duration_histogram, s.lateness_histogram
    FROM job_stats_hourly s
    LEFT JOIN jobs j ON j.id = s.job_id;

    CREATE VIEW reporting.monitor_status AS
    SELECT monitor_id, team_id, name, status, last_ping_at, down_since, created_at, deleted_at,
           updated_at
    FROM monitor_state;

    CREATE VIEW reporting.monitor_downtime AS
    SELECT d.monitor_id, d.team_id, m.name AS monitor_name, d.started_at, d.ended_at,
           d.ended_at IS NULL AS ongoing,
           extract(epoch FROM coalesce(d.ended_at, now()) - d.started_at)::double precision
               AS duration_seconds,
           d.end_reason
    FROM monitor_downtime d
    LEFT JOIN monitor_state m ON m.monitor_id = d.monitor_id;

    CREATE VIEW reporting.monitor_daily AS
    SELECT p.monitor_id, p.team_id, m.name AS monitor_name, p.day, p.pings, p.success, p.start,
           p.fail, p.log
    FROM monitor_pings_daily p
    LEFT JOIN monitor_state m ON m.monitor_id = p.monitor_id;

    CREATE VIEW reporting.events AS
    SELECT global_position, event_id, stream_type, stream_id, stream_version, event_type,
           team_id, reporting.redact(data) AS data, reporting.redact(metadata) AS metadata,
           occurred_at, recorded_at
    FROM events;
    """)


def _reporting_role() -> None:
    op.execute(f"""
    DO $do$
    BEGIN
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN
            BEGIN
                CREATE ROLE {ROLE} NOLOGIN;
            EXCEPTION
                -- another database of this cluster created it concurrently
                WHEN duplicate_object OR unique_violation THEN NULL;
                WHEN insufficient_privilege THEN
                    RAISE NOTICE 'cannot create role {ROLE}: create it as an administrator '
                                 'and re-run the grants of docs/reporting.md';
            END;
        END IF;
        IF EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN
            GRANT USAGE ON SCHEMA reporting TO {ROLE};
            GRANT SELECT ON ALL TABLES IN SCHEMA reporting TO {ROLE};
            GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA reporting TO {ROLE};
            ALTER DEFAULT PRIVILEGES IN SCHEMA reporting GRANT SELECT ON TABLES TO {ROLE};
        END IF;
    END
    $do$;
    """)


def downgrade() -> None:
    # Privileges in this database only: the role itself is shared by the cluster's databases.
    op.execute(f"""
    DO $do$
    BEGIN
        IF EXISTS (SELECT FROM pg_roles WHERE rolname = '{ROLE}') THEN
            ALTER DEFAULT PRIVILEGES IN SCHEMA reporting REVOKE SELECT ON TABLES FROM {ROLE};
            REVOKE ALL ON ALL TABLES IN SCHEMA reporting FROM {ROLE};
            REVOKE ALL ON ALL FUNCTIONS IN SCHEMA reporting FROM {ROLE};
            REVOKE ALL ON SCHEMA reporting FROM {ROLE};
        END IF;
    END
    $do$;
    DROP VIEW reporting.events;
    DROP VIEW reporting.monitor_daily;
    DROP VIEW reporting.monitor_downtime;
    DROP VIEW reporting.monitor_status;
    DROP VIEW reporting.job_hourly;
    DROP VIEW reporting.job_weekly;
    DROP VIEW reporting.job_daily;
    DROP VIEW reporting.runs;
    DROP FUNCTION reporting.redact(jsonb);
    DROP FUNCTION reporting.histogram_percentile(jsonb, double precision);
    DROP AGGREGATE reporting.histogram_sum(jsonb);
    DROP FUNCTION reporting.histogram_of_array(bigint[]);
    DROP FUNCTION reporting.histogram_accumulate(bigint[], jsonb);
    DROP FUNCTION reporting.histogram_merge(jsonb, jsonb);
    DROP SCHEMA reporting;
    DROP TABLE monitor_downtime;
    DROP TABLE monitor_pings_daily;
    DROP TABLE monitor_state;
    DROP TABLE job_health;
    DROP TABLE team_runs_hourly;
    DROP TABLE job_stats_weekly;
    DROP TABLE job_stats_daily;
    DROP TABLE job_stats_hourly;
    DROP TABLE projection_checkpoints;
    """)
