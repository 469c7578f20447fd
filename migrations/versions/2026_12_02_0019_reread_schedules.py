"""Stored words read again: systemd calendar events (docs/schedules.md, *OnCalendar*).

From this revision on, a string that systemd's calendar grammar reads whole is a calendar
event (``Mon..Fri 09:00`` was read as words, dropping the ``..``: ``0 9 * * 1,5``, Monday and
Friday; ``hourly`` is systemd's, which fires once in a repeated hour). Every live job and
monitor whose ``schedule_text`` no longer means its stored ``schedule`` (same fires) keeps its
``schedule`` - nothing fires differently - and loses the words, which no longer describe it:
a ``job.updated`` / ``monitor.updated`` event ``{"changes": {"schedule_text": null},
"reread": {"schedule_text", "schedule", "reads_as", "reason"}}``, metadata ``{"actor":
"migration", "migration": "0019"}``, at the next stream version, with the row's
``schedule_text``, ``version`` and ``updated_at`` updated to match (the rule and the reader:
``core/schedule/reread.py``). Setting the schedule again adopts the new reading.

Downgrade changes nothing: the events stay (the log is append-only) and so does the row.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-02
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

MIGRATION = "0019"
_TABLES = (("jobs", "job", "anchor_at"), ("monitors", "monitor", "created_at"))


def reread_stored(bind: sa.engine.Connection, migration: str) -> int:
    """Read every live definition's words again; returns how many lost their words.

    Shared by the revisions that change a reader (0019 on): each runs the reader in force.
    """
    from core.schedule.reread import reread  # the reader in force when the revision runs

    now = datetime.now(UTC)
    changed = 0
    for table, stream, anchor in _TABLES:
        rows = bind.execute(sa.text(
            f"SELECT id, team_id, schedule, timezone, schedule_text, version, {anchor} AS anchor "  # noqa: S608
            f"FROM {table} WHERE schedule_text IS NOT NULL AND status <> 'deleted' "
            "ORDER BY id")).mappings().all()
        for row in rows:
            found = reread(row["schedule_text"], row["schedule"], row["timezone"],
                           row["anchor"], now)
            if found is None:
                continue
            data = {"changes": {"schedule_text": None}, "reread": found.as_data()}
            bind.execute(sa.text(
                "INSERT INTO events (stream_type, stream_id, stream_version, event_type, "
                "team_id, data, metadata, occurred_at) VALUES (:stream, :id, :version, "
                ":event_type, :team_id, CAST(:data AS jsonb), CAST(:metadata AS jsonb), "
                ":now)"), {
                "stream": stream, "id": row["id"], "version": row["version"] + 1,
                "event_type": f"{stream}.updated", "team_id": row["team_id"],
                "data": json.dumps(data),
                "metadata": json.dumps({"actor": "migration", "migration": migration}),
                "now": now})
            bind.execute(sa.text(
                f"UPDATE {table} SET schedule_text = NULL, version = :version, "  # noqa: S608
                "updated_at = :now WHERE id = :id"),
                {"version": row["version"] + 1, "now": now, "id": row["id"]})
            changed += 1
    return changed


def upgrade() -> None:
    reread_stored(op.get_bind(), MIGRATION)


def downgrade() -> None:
    pass
