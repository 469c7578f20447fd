"""A job's load spread (docs/schedules.md, *Spread*): each slot fires at a fixed offset inside
the window after it (core/schedule/spread.py); ``due_jobs.due_at`` holds that fire time.

    jobs  spread int NULL (seconds, 1 to 86400; NULL: no spread)
"""

from __future__ import annotations

from alembic import op

revision = "0038"
down_revision = "0037"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE jobs
        ADD COLUMN spread int,
        ADD CONSTRAINT jobs_spread_check CHECK (spread BETWEEN 1 AND 86400);
    """)


def downgrade() -> None:
    op.execute("""
    ALTER TABLE jobs DROP CONSTRAINT jobs_spread_check, DROP COLUMN spread;
    """)
