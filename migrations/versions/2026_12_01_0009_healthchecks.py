"""The healthchecks drop-in (docs/healthchecks.md): team ping and badge keys, monitor slugs, tags.

    teams.ping_key_hash     SHA-256 of the team's ping key (``/ping/<ping-key>/<slug>``); the
                            key itself is shown once, when it is created or rotated
    teams.badge_key         the team's badge key (``/badge/<badge-key>/<tag>.svg``): a public,
                            read-only identifier meant to be pasted into README files, so it is
                            kept as is and shown on ``GET /v1/team``
    monitors.slug           the monitor's slug, unique among the team's live monitors
    monitors.tags, jobs.tags   short words, for badges and the per-team metrics
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    ALTER TABLE teams
        ADD COLUMN ping_key_hash bytea,
        -- 122 random bits (gen_random_uuid), for existing and new teams alike
        ADD COLUMN badge_key     text NOT NULL DEFAULT replace(gen_random_uuid()::text, '-', ''),
        ADD CONSTRAINT teams_ping_key_hash_key UNIQUE (ping_key_hash),
        ADD CONSTRAINT teams_badge_key_key UNIQUE (badge_key);
    ALTER TABLE monitors
        ADD COLUMN slug text,
        ADD COLUMN tags text[] NOT NULL DEFAULT '{}',
        ADD CONSTRAINT monitors_slug_check CHECK (slug ~ '^[a-z0-9_-]{1,100}$');
    CREATE UNIQUE INDEX monitors_team_slug_key ON monitors (team_id, slug)
        WHERE status <> 'deleted' AND slug IS NOT NULL;
    ALTER TABLE jobs ADD COLUMN tags text[] NOT NULL DEFAULT '{}';
    """)


def downgrade() -> None:
    op.execute("""
    ALTER TABLE jobs DROP COLUMN tags;
    DROP INDEX monitors_team_slug_key;
    ALTER TABLE monitors DROP CONSTRAINT monitors_slug_check, DROP COLUMN tags,
        DROP COLUMN slug;
    ALTER TABLE teams DROP CONSTRAINT teams_badge_key_key,
        DROP CONSTRAINT teams_ping_key_hash_key, DROP COLUMN badge_key,
        DROP COLUMN ping_key_hash;
    """)
