"""Notifications: channels, the notification outbox, alert state, and jobs' alert rules.

``channels`` is not a pure projection: its sealed column holds the only copy of a channel's
URL, token or signing secret (AES-256-GCM, channel and team bound as associated data). Its
``channel.*`` events carry the redacted view only.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    CREATE TABLE channels (
        id          uuid        NOT NULL,
        team_id     uuid        NOT NULL,
        name        text        NOT NULL,
        kind        text        NOT NULL,
        config      jsonb       NOT NULL DEFAULT '{}'::jsonb,
        key_id      text,
        sealed      bytea,
        version     integer     NOT NULL,
        created_at  timestamptz NOT NULL,
        updated_at  timestamptz NOT NULL,
        deleted_at  timestamptz,
        CONSTRAINT channels_pkey PRIMARY KEY (id),
        CONSTRAINT channels_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT channels_kind_check CHECK
            (kind IN ('webhook', 'slack', 'discord', 'telegram', 'email')),
        CONSTRAINT channels_name_check CHECK (length(name) BETWEEN 1 AND 200),
        CONSTRAINT channels_sealed_check CHECK ((key_id IS NULL) = (sealed IS NULL))
    );
    -- Names are unique among a team's live channels; a deleted name can be reused.
    CREATE UNIQUE INDEX channels_team_name_key ON channels (team_id, name)
        WHERE deleted_at IS NULL;
    CREATE INDEX channels_team_created_idx ON channels (team_id, created_at, id);

    -- The transactional outbox: one row per (alert, channel), written in the transaction of
    -- the event that caused it; the notifier claims rows with FOR UPDATE SKIP LOCKED.
    CREATE TABLE notifications (
        id                    uuid        NOT NULL,
        team_id               uuid        NOT NULL,
        channel_id            uuid        NOT NULL,
        subject_type          text        NOT NULL,
        subject_id            uuid        NOT NULL,
        event                 text        NOT NULL,
        message               jsonb       NOT NULL,
        status                text        NOT NULL,
        attempt               integer     NOT NULL DEFAULT 0,
        max_attempts          integer     NOT NULL,
        available_at          timestamptz,
        lease_expires_at      timestamptz,
        lease_token           uuid,
        worker_id             text,
        last_error_class      text,
        last_error            text,
        last_response_status  integer,
        last_response_body    text,
        version               integer     NOT NULL,
        created_at            timestamptz NOT NULL,
        sent_at               timestamptz,
        finished_at           timestamptz,
        CONSTRAINT notifications_pkey PRIMARY KEY (id),
        CONSTRAINT notifications_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT notifications_channel_id_fkey FOREIGN KEY (channel_id)
            REFERENCES channels (id),
        CONSTRAINT notifications_status_check CHECK
            (status IN ('pending', 'sending', 'sent', 'failed', 'cancelled')),
        CONSTRAINT notifications_subject_type_check CHECK
            (subject_type IN ('job', 'monitor', 'channel'))
    );
    CREATE INDEX notifications_pending_idx ON notifications (available_at)
        WHERE status = 'pending';
    CREATE INDEX notifications_lease_idx ON notifications (lease_expires_at)
        WHERE status = 'sending';
    CREATE INDEX notifications_team_created_idx ON notifications (team_id, created_at DESC, id);
    CREATE INDEX notifications_channel_idx ON notifications (channel_id)
        WHERE status IN ('pending', 'sending');

    -- Alert state of a job in a failure streak or of a monitor that is down (no row otherwise).
    -- Derived from run.failed / run.succeeded and monitor.down / monitor.up events and the
    -- alerts queued: an inline projection, written in the transaction of the event.
    CREATE TABLE alert_states (
        subject_type          text        NOT NULL,
        subject_id            uuid        NOT NULL,
        team_id               uuid        NOT NULL,
        failing_since         timestamptz NOT NULL,
        consecutive_failures  integer     NOT NULL DEFAULT 0,
        last_alert_at         timestamptz,
        next_realert_at       timestamptz,
        CONSTRAINT alert_states_pkey PRIMARY KEY (subject_type, subject_id),
        CONSTRAINT alert_states_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT alert_states_subject_type_check CHECK (subject_type IN ('job', 'monitor'))
    );
    CREATE INDEX alert_states_realert_idx ON alert_states (next_realert_at)
        WHERE subject_type = 'monitor' AND next_realert_at IS NOT NULL;

    ALTER TABLE jobs
        ADD COLUMN channels             uuid[]  NOT NULL DEFAULT '{}',
        ADD COLUMN alert_after_failures integer NOT NULL DEFAULT 1,
        ADD COLUMN realert_every        integer,
        ADD CONSTRAINT jobs_alert_after_failures_check CHECK (alert_after_failures >= 1),
        ADD CONSTRAINT jobs_realert_every_check CHECK (realert_every > 0);
    """)


def downgrade() -> None:
    op.execute("""
    ALTER TABLE jobs
        DROP CONSTRAINT jobs_realert_every_check,
        DROP CONSTRAINT jobs_alert_after_failures_check,
        DROP COLUMN realert_every,
        DROP COLUMN alert_after_failures,
        DROP COLUMN channels;
    DROP TABLE alert_states;
    DROP TABLE notifications;
    DROP TABLE channels;
    """)
