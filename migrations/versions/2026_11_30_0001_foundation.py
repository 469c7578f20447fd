"""Foundation: teams, API keys, the append-only event log, jobs, due_jobs, runs and attempts.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    CREATE TABLE teams (
        id          uuid        NOT NULL DEFAULT gen_random_uuid(),
        name        text        NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT teams_pkey PRIMARY KEY (id),
        CONSTRAINT teams_name_key UNIQUE (name),
        CONSTRAINT teams_name_check CHECK (length(name) BETWEEN 1 AND 100)
    );

    CREATE TABLE api_keys (
        id            uuid        NOT NULL DEFAULT gen_random_uuid(),
        team_id       uuid        NOT NULL,
        name          text        NOT NULL DEFAULT '',
        prefix        text        NOT NULL,
        key_hash      bytea       NOT NULL,
        scope         text        NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now(),
        revoked_at    timestamptz,
        CONSTRAINT api_keys_pkey PRIMARY KEY (id),
        CONSTRAINT api_keys_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash),
        CONSTRAINT api_keys_scope_check CHECK (scope IN ('read', 'write'))
    );

    -- The event log: the source of truth. Append-only, enforced below.
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
        CONSTRAINT events_pkey PRIMARY KEY (global_position),
        CONSTRAINT events_event_id_key UNIQUE (event_id),
        CONSTRAINT events_stream_version_key UNIQUE (stream_id, stream_version),
        CONSTRAINT events_stream_version_check CHECK (stream_version >= 1)
    );
    CREATE INDEX events_tx_id_position_idx ON events (tx_id, global_position);
    CREATE INDEX events_team_id_position_idx ON events (team_id, global_position);

    CREATE FUNCTION events_reject_change() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
        RAISE EXCEPTION 'events is append-only: % is not allowed', TG_OP
            USING ERRCODE = 'restrict_violation';
    END;
    $fn$;
    CREATE TRIGGER events_append_only_rows BEFORE UPDATE OR DELETE ON events
        FOR EACH ROW EXECUTE FUNCTION events_reject_change();
    CREATE TRIGGER events_append_only_truncate BEFORE TRUNCATE ON events
        FOR EACH STATEMENT EXECUTE FUNCTION events_reject_change();

    -- Inline projection of the job streams.
    CREATE TABLE jobs (
        id               uuid        NOT NULL,
        team_id          uuid        NOT NULL,
        name             text        NOT NULL,
        schedule         text        NOT NULL,
        timezone         text        NOT NULL,
        request          jsonb       NOT NULL,
        timeout_seconds  double precision NOT NULL,
        retry            jsonb       NOT NULL,
        overlap          text        NOT NULL,
        catchup          text        NOT NULL,
        status           text        NOT NULL,
        version          integer     NOT NULL,
        anchor_at        timestamptz NOT NULL,
        created_at       timestamptz NOT NULL,
        updated_at       timestamptz NOT NULL,
        CONSTRAINT jobs_pkey PRIMARY KEY (id),
        CONSTRAINT jobs_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT jobs_status_check CHECK (status IN ('active', 'paused', 'completed', 'deleted')),
        CONSTRAINT jobs_overlap_check CHECK (overlap IN ('skip', 'allow', 'queue')),
        CONSTRAINT jobs_catchup_check CHECK (catchup IN ('latest', 'skip', 'all'))
    );
    CREATE INDEX jobs_team_id_created_idx ON jobs (team_id, created_at, id);

    -- One row per active job: its next fire instant.
    CREATE TABLE due_jobs (
        job_id  uuid        NOT NULL,
        due_at  timestamptz NOT NULL,
        CONSTRAINT due_jobs_pkey PRIMARY KEY (job_id),
        CONSTRAINT due_jobs_job_id_fkey FOREIGN KEY (job_id) REFERENCES jobs (id) ON DELETE CASCADE
    );
    CREATE INDEX due_jobs_due_at_idx ON due_jobs (due_at);

    CREATE TABLE runs (
        id                uuid        NOT NULL,
        job_id            uuid        NOT NULL,
        team_id           uuid        NOT NULL,
        scheduled_for     timestamptz NOT NULL,
        trigger           text        NOT NULL,
        status            text        NOT NULL,
        attempt           integer     NOT NULL DEFAULT 0,
        max_attempts      integer     NOT NULL DEFAULT 1,
        available_at      timestamptz,
        lease_expires_at  timestamptz,
        lease_token       uuid,
        worker_id         text,
        started_at        timestamptz,
        finished_at       timestamptz,
        lateness_ms       integer,
        duration_ms       integer,
        response_status   integer,
        error_class       text,
        error             text,
        reason            text,
        version           integer     NOT NULL,
        created_at        timestamptz NOT NULL,
        CONSTRAINT runs_pkey PRIMARY KEY (id),
        CONSTRAINT runs_job_id_fkey FOREIGN KEY (job_id) REFERENCES jobs (id) ON DELETE CASCADE,
        CONSTRAINT runs_trigger_check CHECK (trigger IN ('schedule', 'manual', 'catchup')),
        CONSTRAINT runs_status_check CHECK (status IN
            ('queued', 'running', 'succeeded', 'failed', 'skipped', 'missed'))
    );
    -- Each slot fires at most once, however many workers race (manual triggers are not slots).
    CREATE UNIQUE INDEX runs_job_slot_key ON runs (job_id, scheduled_for)
        WHERE trigger <> 'manual';
    CREATE INDEX runs_job_history_idx ON runs (job_id, scheduled_for DESC, id DESC);
    CREATE INDEX runs_queued_idx ON runs (available_at) WHERE status = 'queued';
    CREATE INDEX runs_lease_idx ON runs (lease_expires_at) WHERE status = 'running';
    CREATE INDEX runs_in_flight_idx ON runs (job_id) WHERE status IN ('queued', 'running');

    -- Every HTTP attempt of a run, request and response as sent and received.
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
        CONSTRAINT run_attempts_pkey PRIMARY KEY (run_id, attempt),
        CONSTRAINT run_attempts_run_id_fkey FOREIGN KEY (run_id) REFERENCES runs (id)
            ON DELETE CASCADE
    );
    """)


def downgrade() -> None:
    op.execute("""
    DROP TABLE run_attempts;
    DROP TABLE runs;
    DROP TABLE due_jobs;
    DROP TABLE jobs;
    DROP TRIGGER events_append_only_truncate ON events;
    DROP TRIGGER events_append_only_rows ON events;
    DROP TABLE events;
    DROP FUNCTION events_reject_change();
    DROP TABLE api_keys;
    DROP TABLE teams;
    """)
