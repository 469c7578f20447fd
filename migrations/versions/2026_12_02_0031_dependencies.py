"""Dependencies between monitors and jobs (docs/notifications.md, *Dependencies*): a monitor or
job names the monitors and jobs of its team it depends on; while one of them is down, its own
problem alerts are held, recorded and folded into the parent's messages, and sent when the
parents are back if it is still down.

    monitors  depends_on uuid[] NOT NULL DEFAULT '{}': the parents (monitor or job ids)
    jobs      depends_on uuid[] NOT NULL DEFAULT '{}'
    alerts    held_by uuid[]: the parents that were down when the alert was raised (it was
              held; NULL: not held by a dependency), released_at: when the hold ended,
              released_as: the alert sent then (NULL: the subject had come back, nothing owed)
"""

from __future__ import annotations

from alembic import op

revision = "0031"
down_revision = "0030"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE monitors ADD COLUMN depends_on uuid[] NOT NULL DEFAULT '{}';
    ALTER TABLE jobs ADD COLUMN depends_on uuid[] NOT NULL DEFAULT '{}';
    ALTER TABLE alerts
        ADD COLUMN held_by     uuid[],
        ADD COLUMN released_at timestamptz,
        ADD COLUMN released_as uuid;
    CREATE INDEX alerts_held_idx ON alerts (team_id, subject_id)
        WHERE held_by IS NOT NULL AND released_at IS NULL;
    """)


def downgrade() -> None:
    op.execute("""
    DROP INDEX alerts_held_idx;
    ALTER TABLE alerts DROP COLUMN released_as, DROP COLUMN released_at, DROP COLUMN held_by;
    ALTER TABLE jobs DROP COLUMN depends_on;
    ALTER TABLE monitors DROP COLUMN depends_on;
    """)
