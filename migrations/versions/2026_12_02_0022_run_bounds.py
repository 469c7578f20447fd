"""Run-time bounds of monitors (docs/heartbeats.md, *Run-time bounds*): the shortest and longest
a run between ``/start`` and its end may take, in seconds (``NULL``: no bound). The ping
statement reads them (a success sooner than ``min_duration`` is a failure), the checker too (a
run still going at ``start + max_duration`` is down while it runs).

    monitors    min_duration int, max_duration int
"""

from __future__ import annotations

from alembic import op

revision = "0022"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE monitors
        ADD COLUMN min_duration int,
        ADD COLUMN max_duration int,
        ADD CONSTRAINT monitors_min_duration_check CHECK (min_duration > 0),
        ADD CONSTRAINT monitors_max_duration_check CHECK (max_duration > 0);
    """)


def downgrade() -> None:
    op.execute("""
    ALTER TABLE monitors
        DROP COLUMN min_duration,
        DROP COLUMN max_duration;
    """)
