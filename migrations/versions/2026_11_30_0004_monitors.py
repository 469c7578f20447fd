"""Heartbeat monitors: the monitors projection and the bodies of received pings.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    -- Inline projection of the monitor streams (docs/heartbeats.md). The ping token is a
    -- credential:
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

    -- The body of each ping that had one (most have none), truncated to the configured limit.
    -- Everything else about a ping is in its monitor.pinged event, at the same stream version.
    CREATE TABLE monitor_ping_bodies (
        monitor_id  uuid    NOT NULL,
        version     integer NOT NULL,
        body        bytea   NOT NULL,
        CONSTRAINT monitor_ping_bodies_pkey PRIMARY KEY (monitor_id, version),
        CONSTRAINT monitor_ping_bodies_monitor_id_fkey FOREIGN KEY (monitor_id)
            REFERENCES monitors (id) ON DELETE CASCADE
    );
    """)


def downgrade() -> None:
    op.execute("""
    DROP TABLE monitor_ping_bodies;
    DROP TABLE monitors;
    """)
