"""Heartbeat monitors: the monitors projection and the received pings.

Revision ID: 0003
Revises: 0001
Create Date: 2026-11-30
"""

from alembic import op

revision = "0003"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    -- Inline projection of the monitor streams (DESIGN 3.3). The ping token is a credential:
    -- only its SHA-256 is stored (like api_keys.key_hash), in the projection and in the events.
    CREATE TABLE monitors (
        id                uuid        NOT NULL,
        team_id           uuid        NOT NULL,
        name              text        NOT NULL,
        schedule          text        NOT NULL,
        timezone          text        NOT NULL,
        -- the period of an interval schedule (NULL for cron): lets the ping statement compute
        -- the next expected instant without the schedule engine
        period_seconds    double precision,
        grace_seconds     integer     NOT NULL,
        methods           text        NOT NULL,
        manual_resume     boolean     NOT NULL,
        ping_token_hash   bytea,
        status            text        NOT NULL,
        last_ping_at      timestamptz,
        last_start_at     timestamptz,
        last_start_rid    uuid,
        last_duration_ms  bigint,
        next_expected_at  timestamptz,
        -- the next instant at which the checker has something to decide (NULL: nothing); never
        -- later than the next status change, possibly earlier (the checker then re-decides)
        alert_at          timestamptz,
        version           integer     NOT NULL,
        created_at        timestamptz NOT NULL,
        updated_at        timestamptz NOT NULL,
        CONSTRAINT monitors_pkey PRIMARY KEY (id),
        CONSTRAINT monitors_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT monitors_ping_token_hash_key UNIQUE (ping_token_hash),
        CONSTRAINT monitors_status_check CHECK (status IN
            ('new', 'up', 'late', 'down', 'paused', 'deleted')),
        CONSTRAINT monitors_methods_check CHECK (methods IN ('any', 'post')),
        CONSTRAINT monitors_grace_seconds_check CHECK (grace_seconds >= 1),
        CONSTRAINT monitors_period_seconds_check CHECK (period_seconds IS NULL
            OR period_seconds >= 1)
    ) WITH (fillfactor = 70);  -- room on the page for HOT updates by pings
    CREATE INDEX monitors_team_id_created_idx ON monitors (team_id, created_at, id);
    CREATE INDEX monitors_alert_at_idx ON monitors (alert_at) WHERE alert_at IS NOT NULL;

    -- Every ping received for a monitor, with its (truncated) body. Events carry the metadata
    -- (monitor.pinged); the body lives only here, like run_attempts.response_body.
    CREATE TABLE monitor_pings (
        id            bigint      GENERATED ALWAYS AS IDENTITY,
        monitor_id    uuid        NOT NULL,
        version       integer     NOT NULL,
        received_at   timestamptz NOT NULL,
        kind          text        NOT NULL,
        method        text        NOT NULL,
        exit_status   smallint,
        rid           uuid,
        remote_addr   text,
        user_agent    text,
        body          bytea,
        body_size     integer     NOT NULL,
        duration_ms   bigint,
        CONSTRAINT monitor_pings_pkey PRIMARY KEY (id),
        CONSTRAINT monitor_pings_monitor_id_fkey FOREIGN KEY (monitor_id) REFERENCES monitors (id)
            ON DELETE CASCADE,
        CONSTRAINT monitor_pings_kind_check CHECK (kind IN
            ('success', 'start', 'fail', 'log', 'ignored')),
        CONSTRAINT monitor_pings_exit_status_check CHECK (exit_status BETWEEN 0 AND 255),
        CONSTRAINT monitor_pings_body_size_check CHECK (body_size >= 0)
    );
    CREATE INDEX monitor_pings_monitor_id_idx ON monitor_pings (monitor_id, id);
    """)


def downgrade() -> None:
    op.execute("""
    DROP TABLE monitor_pings;
    DROP TABLE monitors;
    """)
