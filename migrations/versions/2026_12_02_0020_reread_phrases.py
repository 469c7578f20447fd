"""Stored words read again: phrases read exactly or refused (docs/schedules.md, *When the
reading of stored words changes*).

From this revision on, the phrase reader places every word or refuses the phrase: "every N
hours" alone is elapsed time (``every 2 hours`` was ``0 */2 * * *``, which a DST change
shortens or lengthens), "tous les quinze jours" is every 14 days (was 15), a period said with
"every" must agree with the days given (``every day and every monday`` was Mondays only,
``yearly weekday`` weekdays of January, ``mar the 1st of every month`` 1 March only), two day
words need "and" or "or" (``every weekday on saturday`` was Monday to Saturday), a dangling
"after" is refused (``every 15 minutes after`` was :15 past each hour), and a window's period
of hours starts at the window's start (``every 2 hours between 9:30am and 5pm`` was 11:00,
13:00 …). Exactly as 0019: every live job and monitor whose words no longer mean its stored
schedule keeps the schedule and loses the words, by a ``job.updated`` / ``monitor.updated``
event with metadata ``{"actor": "migration", "migration": "0020"}``
(``core/schedule/reread.py``).

Downgrade changes nothing: the events stay (the log is append-only) and so does the row.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-02
"""

from __future__ import annotations

from datetime import UTC, datetime

from alembic import op

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade() -> None:
    from core.stored import reread_stored  # the readers in force when the revision runs

    reread_stored(op.get_bind().connection.driver_connection, "0020", datetime.now(UTC))


def downgrade() -> None:
    pass
