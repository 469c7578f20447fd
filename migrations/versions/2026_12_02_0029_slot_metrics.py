"""The slots that did not run, by reason, on ``/metrics`` (``cronledger_slots_not_run``,
core/metrics.py): a partial index so that the scrape counts them from the index alone.

    runs   runs_not_run_idx (status, reason) WHERE status IN ('skipped', 'missed')
"""

from __future__ import annotations

from alembic import op

revision = "0029"
down_revision = "0028"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX runs_not_run_idx ON runs (status, reason) "
               "WHERE status IN ('skipped', 'missed');")


def downgrade() -> None:
    op.execute("DROP INDEX runs_not_run_idx;")
