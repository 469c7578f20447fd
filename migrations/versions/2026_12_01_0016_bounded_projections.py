"""Indexes for the prune's deletions of projection rows (docs/operations.md, "Retention";
core/retention/prune.py): finished runs past the runs horizon, finished notifications past the
deliveries horizon, hourly statistics buckets past the runs horizon. Without them each prune
walks the whole table.

    runs_finished_idx               runs (finished_at) WHERE the run is final
    notifications_finished_idx      notifications (finished_at) WHERE delivered or given up
    job_stats_hourly_bucket_idx     job_stats_hourly (bucket_start)
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    CREATE INDEX runs_finished_idx ON runs (finished_at)
        WHERE status IN ('succeeded', 'failed', 'skipped', 'missed');
    CREATE INDEX notifications_finished_idx ON notifications (finished_at)
        WHERE status IN ('sent', 'failed', 'cancelled');
    CREATE INDEX job_stats_hourly_bucket_idx ON job_stats_hourly (bucket_start);
    """)


def downgrade() -> None:
    op.execute("""
    DROP INDEX job_stats_hourly_bucket_idx;
    DROP INDEX notifications_finished_idx;
    DROP INDEX runs_finished_idx;
    """)
