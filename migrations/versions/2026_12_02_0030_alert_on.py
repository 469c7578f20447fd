"""Skipped, missed and held slots are alertable: ``jobs.alert_on`` (docs/notifications.md,
*Slots that did not run*).

    jobs   alert_on text[] NOT NULL DEFAULT '{}': the reasons a slot that did not run alerts
           for, among 'skipped' (overlap), 'missed' (catch-up) and 'held' (maintenance)
"""

from __future__ import annotations

from alembic import op

revision = "0030"
down_revision = "0029"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE jobs
        ADD COLUMN alert_on text[] NOT NULL DEFAULT '{}',
        ADD CONSTRAINT jobs_alert_on_check
            CHECK (alert_on <@ ARRAY['skipped', 'missed', 'held']::text[]);
    """)


def downgrade() -> None:
    op.execute("ALTER TABLE jobs DROP CONSTRAINT jobs_alert_on_check, DROP COLUMN alert_on;")
