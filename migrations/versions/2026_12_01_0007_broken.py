"""Poison isolation (docs/operations.md, "Poison items"): broken jobs and monitors, events the
projector skipped.

    jobs.broken_at / broken_reason       set by ``job.broken`` (the worker could not turn the
                                         stored definition into a schedule or a request),
                                         cleared by ``job.repaired``; part of the job's fold
    monitors.broken_at / broken_reason   the same for monitors (``monitor.broken`` /
                                         ``monitor.repaired``, written by the checker)
    projection_skipped                   events the asynchronous projector could not apply:
                                         one row per event, with the reason (docs/operations.md)
"""

from __future__ import annotations

from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE jobs
        ADD COLUMN broken_at     timestamptz,
        ADD COLUMN broken_reason text;
    ALTER TABLE monitors
        ADD COLUMN broken_at     timestamptz,
        ADD COLUMN broken_reason text;

    CREATE TABLE projection_skipped (
        name             text        NOT NULL,
        global_position  bigint      NOT NULL,
        tx_id            xid8        NOT NULL,
        event_type       text        NOT NULL,
        stream_id        uuid        NOT NULL,
        reason           text        NOT NULL,
        skipped_at       timestamptz NOT NULL,
        CONSTRAINT projection_skipped_pkey PRIMARY KEY (name, global_position)
    );
    """)


def downgrade() -> None:
    op.execute("""
    DROP TABLE projection_skipped;
    ALTER TABLE monitors DROP COLUMN broken_reason, DROP COLUMN broken_at;
    ALTER TABLE jobs DROP COLUMN broken_reason, DROP COLUMN broken_at;
    """)
