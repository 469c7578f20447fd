"""Alerts as records of their own (docs/notifications.md, *Alerts and why*): every alert the
rules raise for a job or monitor with channels is a row with an id, written with its
``alert.raised`` event (stream ``alert``, kept forever) in the transaction that queues its
notifications (core/notifications/outbox.py); each notification row names its alert.
``GET /v1/alerts`` lists them, ``GET /v1/alerts/{id}/explain`` explains one from the log
(core/alerts/).

    alerts         id, team_id, subject_type (job | monitor), subject_id, event, title,
                   rule jsonb (what the rule said: the monitor.down data, a job's streak),
                   held_until (a maintenance window held it until then), created_at
    notifications  alert_id uuid (NULL for a channel's test send and rows older than this)
"""

from __future__ import annotations

from alembic import op

revision = "0028"
down_revision = "0027"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    CREATE TABLE alerts (
        id            uuid        NOT NULL,
        team_id       uuid        NOT NULL,
        subject_type  text        NOT NULL,
        subject_id    uuid        NOT NULL,
        event         text        NOT NULL,
        title         text,
        rule          jsonb       NOT NULL DEFAULT '{}',
        held_until    timestamptz,
        created_at    timestamptz NOT NULL,
        CONSTRAINT alerts_pkey PRIMARY KEY (id),
        CONSTRAINT alerts_team_id_fkey FOREIGN KEY (team_id) REFERENCES teams (id),
        CONSTRAINT alerts_subject_type_check CHECK (subject_type IN ('job', 'monitor'))
    );
    CREATE INDEX alerts_team_idx ON alerts (team_id, created_at DESC, id DESC);
    CREATE INDEX alerts_subject_idx ON alerts (team_id, subject_id, created_at DESC, id DESC);
    ALTER TABLE notifications ADD COLUMN alert_id uuid;
    """)


def downgrade() -> None:
    op.execute("""
    ALTER TABLE notifications DROP COLUMN alert_id;
    DROP TABLE alerts;
    """)
