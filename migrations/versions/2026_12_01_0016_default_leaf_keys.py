"""The default partitions of the log get the keys every daily leaf has (docs/storage.md).

Migration 0013 made ``events_pings_default``, ``events_runs_default`` and
``events_deliveries_default`` (the events whose day has no leaf) without the per-leaf keys that
``retention_partition_create`` gives a daily leaf: a stream read there was a sequential scan
(40-100 ms per read with 100,000 pings in the default, measured by bench/pages.py) and an
append there was not checked against ``(stream_id, stream_version)``. They get the same named
constraints as a daily leaf:

    <default>_pkey                 PRIMARY KEY (global_position)
    <default>_event_id_key         UNIQUE (event_id)
    <default>_stream_version_key   UNIQUE (stream_id, stream_version)

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-01
"""

from __future__ import annotations

from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

DEFAULTS = ("events_pings_default", "events_runs_default", "events_deliveries_default")


def upgrade() -> None:
    for leaf in DEFAULTS:
        op.execute(f"""
        ALTER TABLE {leaf}
            ADD CONSTRAINT {leaf}_pkey PRIMARY KEY (global_position),
            ADD CONSTRAINT {leaf}_event_id_key UNIQUE (event_id),
            ADD CONSTRAINT {leaf}_stream_version_key UNIQUE (stream_id, stream_version);
        """)


def downgrade() -> None:
    for leaf in DEFAULTS:
        op.execute(f"""
        ALTER TABLE {leaf}
            DROP CONSTRAINT {leaf}_stream_version_key,
            DROP CONSTRAINT {leaf}_event_id_key,
            DROP CONSTRAINT {leaf}_pkey;
        """)
