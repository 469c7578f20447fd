"""Run-time bounds for jobs, as monitors have them (docs/notifications.md, *Run-time bounds
of jobs*): a successful attempt shorter than ``min_duration`` is a failure, a run still going
past ``max_duration`` alerts while it runs.

    jobs  min_duration int, max_duration int: seconds (NULL: no bound)
    runs  overran_at timestamptz: when the run was found still going past its job's
          max_duration (event ``run.overran``; NULL: not, or not yet)
"""

from __future__ import annotations

from alembic import op

revision = "0033"
down_revision = "0032"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE jobs
        ADD COLUMN min_duration int,
        ADD COLUMN max_duration int,
        ADD CONSTRAINT jobs_min_duration_check CHECK (min_duration > 0),
        ADD CONSTRAINT jobs_max_duration_check CHECK (max_duration > 0);
    ALTER TABLE runs ADD COLUMN overran_at timestamptz;
    CREATE INDEX runs_unfinished_idx ON runs (job_id)
        WHERE status IN ('running', 'queued', 'awaiting_confirmation');
    """)


def downgrade() -> None:
    op.execute("""
    DROP INDEX runs_unfinished_idx;
    ALTER TABLE runs DROP COLUMN overran_at;
    ALTER TABLE jobs
        DROP CONSTRAINT jobs_max_duration_check, DROP CONSTRAINT jobs_min_duration_check,
        DROP COLUMN max_duration, DROP COLUMN min_duration;
    """)
