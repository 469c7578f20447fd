"""Monitor names are labels again, as healthchecks' check names are (docs/healthchecks.md):
two live monitors of a team may share a name. A monitor is identified by its id in the API and
by its slug (``monitors_team_slug_key``, unique among a team's live monitors) in slug pings
and in declarative files (docs/config.md). Job and channel names stay unique.

    DROP INDEX monitors_team_name_key   (made by 0014)

Downgrade renames every live monitor that shares its team's name with an older one to
``<name> (<first 8 of its id>)`` with a ``monitor.updated`` event (as 0014 did), then makes the
index again.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0025"
down_revision = "0024"
branch_labels = None
depends_on = None

_RENAME = """
WITH ranked AS (
    SELECT id, team_id, name, version,
           row_number() OVER (PARTITION BY team_id, name ORDER BY created_at, id) AS position
    FROM monitors
    WHERE status <> 'deleted'
), renamed AS (
    SELECT id, team_id, version + 1 AS version,
           left(name, 189) || ' (' || left(id::text, 8) || ')' AS name
    FROM ranked WHERE position > 1
), appended AS (
    INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, data,
                        metadata, occurred_at)
    SELECT 'monitor', id, version, 'monitor.updated', team_id,
           jsonb_build_object('changes', jsonb_build_object('name', name)),
           '{"actor": "migration", "migration": "0025"}'::jsonb, now()
    FROM renamed
)
UPDATE monitors t SET name = r.name, version = r.version, updated_at = now()
FROM renamed r WHERE t.id = r.id;
"""


def upgrade() -> None:
    op.execute("DROP INDEX monitors_team_name_key;")


def downgrade() -> None:
    op.execute(_RENAME)
    op.execute("CREATE UNIQUE INDEX monitors_team_name_key ON monitors (team_id, name) "
               "WHERE status <> 'deleted';")
