"""The worker registry (core/runs/registry.py; docs/architecture.md, "A run"):
one row per running worker process, upserted every few seconds, so that a claim can take its
fair share of what is due instead of the whole slot.

    workers     worker_id (``CRONLEDGER_WORKER_ID``), started_at, seen_at
"""

from __future__ import annotations

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
    CREATE TABLE workers (
        worker_id text NOT NULL,
        started_at timestamptz NOT NULL,
        seen_at timestamptz NOT NULL,
        CONSTRAINT workers_pkey PRIMARY KEY (worker_id)
    );
    """)


def downgrade() -> None:
    op.execute("DROP TABLE workers;")
