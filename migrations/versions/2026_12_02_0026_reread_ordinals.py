"""Stored words read again: ordinals read exactly or refused (docs/schedules.md, *When the
reading of stored words changes*).

From this revision on, "second" is the ordinal unless it is a period said with "every" (``the
second of every month`` was every second of the 1st; now the 2nd at 00:00), an ordinal applies
to every weekday after it (``the last monday and friday of the month`` was every Friday and the
last Monday; now the last of each), ordinals joined by "and"/"or" before a weekday are ordinals
of that weekday (``the 2nd or 4th tuesday`` was day 2 or the 4th Tuesday; now ``2#2,2#4``), and
French ``tous les 2e mardis`` is refused as ``every 2nd tuesday`` is. Exactly as 0019: every
live job and monitor whose words no longer mean its stored schedule keeps the schedule and
loses the words, by a ``job.updated`` / ``monitor.updated`` event with metadata ``{"actor":
"migration", "migration": "0026"}`` (``core/schedule/reread.py``).

Downgrade changes nothing: the events stay (the log is append-only) and so does the row.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-02
"""

from __future__ import annotations

from datetime import UTC, datetime

from alembic import op

revision = "0026"
down_revision = "0025"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from core.stored import reread_stored  # the readers in force when the revision runs

    reread_stored(op.get_bind().connection.driver_connection, "0026", datetime.now(UTC))


def downgrade() -> None:
    pass
