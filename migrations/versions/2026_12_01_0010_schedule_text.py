"""Schedules in words (docs/schedules.md, "Schedules in words"): the phrase a schedule was
written in, kept beside the canonical form that is evaluated.

    jobs.schedule_text       the words of the job's schedule ("every weekday at 9am"), or NULL
                             when the schedule was given in the canonical grammar; part of
                             the job's fold (``job.created`` / ``job.updated`` carry it)
    monitors.schedule_text   the same for monitors
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE jobs ADD COLUMN schedule_text text;
    ALTER TABLE monitors ADD COLUMN schedule_text text;
    """)


def downgrade() -> None:
    op.execute("""
    ALTER TABLE monitors DROP COLUMN schedule_text;
    ALTER TABLE jobs DROP COLUMN schedule_text;
    """)
