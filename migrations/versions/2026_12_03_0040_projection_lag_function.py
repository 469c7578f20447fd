"""The read models' lag (``GET /v1/dashboard``'s ``projection.lag_seconds``) becomes the
PL/pgSQL function ``projection_lag_seconds(after_tx, after_position)``, so PostgreSQL plans
the read once per server process instead of on every call, as ``event_list_team`` (migration
0035), ``monitor_ping_marks`` (0036) and ``monitor_ping_list`` (0039).

The read finds the oldest event after the projector's checkpoint in ``(tx_id,
global_position)`` order: the first row of a merge of every leaf of the log on its
``(tx_id, global_position)`` index, and nothing names the partition key, so each call planned
every leaf (about 110 at 10,000 jobs / 1,000,000 runs / 1,000 monitors: 18.5 ms of planning
for under 1 ms of execution, docs/benchmarks.md). The generic plan is the same merge, made on
the first call.

``SET`` clause (for its own statement only), as 0035: ``plan_cache_mode =
force_generic_plan``, ``enable_seqscan``, ``enable_sort`` and ``enable_incremental_sort`` off,
so that a plan made while a leaf was empty (today's, created days ahead) still reads it by its
index and in order. A leaf created or dropped invalidates the plan (the next call plans it
again).

Revision ID: 0040
Revises: 0039
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0040"
down_revision = "0039"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
CREATE FUNCTION projection_lag_seconds(after_tx xid8, after_position bigint)
RETURNS TABLE (lag_seconds float8)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_sort = off
SET enable_incremental_sort = off
AS $fn$
BEGIN
RETURN QUERY
SELECT coalesce(extract(epoch FROM clock_timestamp() - (
    SELECT e.recorded_at FROM events e
    WHERE (e.tx_id, e.global_position)
          > (projection_lag_seconds.after_tx, projection_lag_seconds.after_position)
    ORDER BY e.tx_id, e.global_position
    LIMIT 1)), 0)::float8;
END;
$fn$;
""")


def downgrade() -> None:
    op.execute("DROP FUNCTION projection_lag_seconds(xid8, bigint);")
