"""An alert's notifications found by its id: ``notifications_alert_idx``.

    notifications  (alert_id) WHERE alert_id IS NOT NULL: the alert list counts each alert's
                   notifications (core/sql/alerts.sql, alert_list); without it that count read
                   the whole outbox once per alert listed (1.1 s for a page of 50 with 100,000
                   notifications, bench/pages.py)
"""

from __future__ import annotations

from alembic import op

revision = "0032"
down_revision = "0031"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("CREATE INDEX notifications_alert_idx ON notifications (alert_id) "
               "WHERE alert_id IS NOT NULL;")


def downgrade() -> None:
    op.execute("DROP INDEX notifications_alert_idx;")
