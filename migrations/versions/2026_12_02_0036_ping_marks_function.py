"""A monitor's recent pings without their bodies (the time line of its dashboard page) become
the PL/pgSQL function ``monitor_ping_marks(monitor, team, since, lim)``, so PostgreSQL plans the
read once per server process instead of on every page, as ``event_list_team`` (migration 0035).

The read names the pings' kind of ``events`` and a time bound, but that still leaves every
daily leaf of pings since the bound to plan (30 with the page's 30 days): measured 7.3 ms of
planning for 0.8 ms of execution at 1,000 monitors (docs/benchmarks.md). The generic plan
prunes the leaves before ``since`` when it starts (initial pruning on ``occurred_at``) and reads
each remaining leaf backwards on its unique ``(stream_id, stream_version)`` index: 0.6-1.1 ms,
planned once.

``SET`` clause (for its own statement only): ``plan_cache_mode = force_generic_plan`` (the plan
made on the first call); ``enable_seqscan = off`` and ``enable_sort = off``, so a plan made
while a leaf was empty (today's, created days ahead) still reads it by its index. A leaf created
or dropped invalidates the plan.

Revision ID: 0036
Revises: 0035
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0036"
down_revision = "0035"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
CREATE FUNCTION monitor_ping_marks(monitor uuid, team uuid, since timestamptz, lim integer)
RETURNS TABLE (received_at timestamptz, kind text, exit_status integer)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_sort = off
AS $fn$
#variable_conflict use_column
BEGIN
RETURN QUERY
SELECT e.occurred_at, e.data ->> 'kind', (e.data ->> 'exit_status')::int
FROM events e
WHERE e.stream_id = monitor_ping_marks.monitor
  AND event_retention_kind(e.stream_type, e.event_type) = 'pings'
  AND e.team_id = monitor_ping_marks.team
  AND e.event_type = 'monitor.pinged'
  AND e.occurred_at >= monitor_ping_marks.since
ORDER BY e.stream_version DESC
LIMIT monitor_ping_marks.lim;
END;
$fn$;
""")


def downgrade() -> None:
    op.execute("DROP FUNCTION monitor_ping_marks(uuid, uuid, timestamptz, integer);")
