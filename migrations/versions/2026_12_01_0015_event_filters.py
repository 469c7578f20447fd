"""Indexes for the dashboard's audit log (docs/dashboard.md, Events): the team's events filtered
by stream type or by actor, newest first (``event_list_team`` in core/sql/events.sql). Without
them a filter on a large log walks the team's whole history (1.2-1.7 s measured by
bench/pages.py at a million runs; 16-46 ms with them).

    events_team_stream_type_position_idx   (team_id, stream_type, global_position)
    events_team_actor_position_idx         (team_id, (metadata ->> 'actor'), global_position)
"""

from __future__ import annotations

from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    CREATE INDEX events_team_stream_type_position_idx
        ON events (team_id, stream_type, global_position);
    CREATE INDEX events_team_actor_position_idx
        ON events (team_id, (metadata ->> 'actor'), global_position);
    """)


def downgrade() -> None:
    op.execute("""
    DROP INDEX events_team_actor_position_idx;
    DROP INDEX events_team_stream_type_position_idx;
    """)
