"""Bounded projections. Indexes for the prune's deletions of projection rows
(docs/operations.md, "Retention"; core/retention/prune.py): finished runs past the runs
horizon, finished notifications past the deliveries horizon, hourly statistics buckets past
the runs horizon. Without them each prune walks the whole table.

    runs_finished_idx               runs (finished_at) WHERE the run is final
    notifications_finished_idx      notifications (finished_at) WHERE delivered or given up
    job_stats_hourly_bucket_idx     job_stats_hourly (bucket_start)

and ``retention_snapshots.runs_before``: the snapshot's copy of ``runs`` holds the rows created
before it (every run with an event in a dropped leaf); the others are replayed from the log
(core/rebuild.py). NULL (a snapshot taken before this migration): every row.
"""

from __future__ import annotations

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    CREATE INDEX runs_finished_idx ON runs (finished_at)
        WHERE status IN ('succeeded', 'failed', 'skipped', 'missed');
    CREATE INDEX notifications_finished_idx ON notifications (finished_at)
        WHERE status IN ('sent', 'failed', 'cancelled');
    CREATE INDEX job_stats_hourly_bucket_idx ON job_stats_hourly (bucket_start);
    ALTER TABLE retention_snapshots ADD COLUMN runs_before timestamptz;
    """)


def downgrade() -> None:
    op.execute("""
    ALTER TABLE retention_snapshots DROP COLUMN runs_before;
    DROP INDEX job_stats_hourly_bucket_idx;
    DROP INDEX notifications_finished_idx;
    DROP INDEX runs_finished_idx;
    """)
