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

from datetime import UTC, datetime

from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from core.stored import reread_stored  # the readers in force when the revision runs

    reread_stored(op.get_bind().connection.driver_connection, "0019", datetime.now(UTC))


def downgrade() -> None:
    pass
