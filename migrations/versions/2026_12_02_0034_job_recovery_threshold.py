"""A job's failure tolerance gets its recovery half, as monitors have it (docs/notifications.md,
*Failure tolerance*): once ``failed`` was said, ``recovered`` only after this many good runs in
a row (the shared rule, core/alerting.py:tolerate).

    jobs  recover_after_successes int NOT NULL DEFAULT 1 (1 to 1000)
"""

from __future__ import annotations

from alembic import op

revision = "0034"
down_revision = "0033"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE jobs
        ADD COLUMN recover_after_successes int NOT NULL DEFAULT 1,
        ADD CONSTRAINT jobs_recover_after_successes_check CHECK (recover_after_successes >= 1);
    """)


def downgrade() -> None:
    op.execute("""
    ALTER TABLE jobs DROP CONSTRAINT jobs_recover_after_successes_check,
        DROP COLUMN recover_after_successes;
    """)
