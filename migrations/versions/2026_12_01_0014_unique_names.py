"""Names are unique per team for live jobs and monitors (channels already are:
``channels_team_name_key``), so that a declarative file (docs/config.md) can match objects by
name.

Existing duplicates are resolved first: in each group of live objects of one team sharing a
name, the oldest keeps it and every other one is renamed ``<name> (<first 8 of its id>)``
(the name cut to keep at most 200 characters). Each rename is a ``job.updated`` /
``monitor.updated`` event (``{"changes": {"name": …}}``, metadata ``{"actor": "migration",
"migration": "0014"}``) appended at the next stream version, with the projection row's
``name``, ``version`` and ``updated_at`` updated to match, so the fold and a rebuild agree.

    jobs_team_name_key       UNIQUE (team_id, name) WHERE status <> 'deleted'
    monitors_team_name_key   UNIQUE (team_id, name) WHERE status <> 'deleted'
"""

from __future__ import annotations

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

_RENAME = """
WITH ranked AS (
    SELECT id, team_id, name, version,
           row_number() OVER (PARTITION BY team_id, name ORDER BY created_at, id) AS position
    FROM {table}
    WHERE status <> 'deleted'
), renamed AS (
    SELECT id, team_id, version + 1 AS version,
           left(name, 189) || ' (' || left(id::text, 8) || ')' AS name
    FROM ranked WHERE position > 1
), appended AS (
    INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, data,
                        metadata, occurred_at)
    SELECT '{stream}', id, version, '{stream}.updated', team_id,
           jsonb_build_object('changes', jsonb_build_object('name', name)),
           '{{"actor": "migration", "migration": "0014"}}'::jsonb, now()
    FROM renamed
)
UPDATE {table} t SET name = r.name, version = r.version, updated_at = now()
FROM renamed r WHERE t.id = r.id;
"""


def upgrade() -> None:
    op.execute(_RENAME.format(table="jobs", stream="job"))
    op.execute(_RENAME.format(table="monitors", stream="monitor"))
    op.execute("""
    CREATE UNIQUE INDEX jobs_team_name_key ON jobs (team_id, name) WHERE status <> 'deleted';
    CREATE UNIQUE INDEX monitors_team_name_key ON monitors (team_id, name)
        WHERE status <> 'deleted';
    """)


def downgrade() -> None:
    op.execute("DROP INDEX monitors_team_name_key; DROP INDEX jobs_team_name_key;")
