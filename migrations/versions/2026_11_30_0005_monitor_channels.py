"""Monitor alerts: the channels a monitor notifies and its re-alert period.

Mirrors what 0003 added to ``jobs``: ``channels`` (ids, checked against the team's live
channels by the commands) and ``realert_every`` (seconds, NULL = no re-alerts while down).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-30
"""

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE monitors
        ADD COLUMN channels      uuid[]  NOT NULL DEFAULT '{}',
        ADD COLUMN realert_every integer,
        ADD CONSTRAINT monitors_realert_every_check CHECK (realert_every > 0);
    """)


def downgrade() -> None:
    op.execute("""
    ALTER TABLE monitors
        DROP CONSTRAINT monitors_realert_every_check,
        DROP COLUMN realert_every,
        DROP COLUMN channels;
    """)
