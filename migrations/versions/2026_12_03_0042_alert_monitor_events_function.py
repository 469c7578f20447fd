"""A monitor alert's page reads the monitor's stream around the alert (its latest events up to
the alert: pings, flips, edits) through the PL/pgSQL function ``alert_monitor_events(monitor,
team, until_at, lim)``, so PostgreSQL plans the read once per server process instead of on
every call, as ``monitor_ping_list`` (migration 0039).

Planned per call, the read spent 6.3 ms planning (10.9-38.8 ms on a fresh backend) for about
1 ms of execution at 1,000 monitors (docs/benchmarks.md, "Dashboard pages"): it names the
partitions of a monitor's stream (``keep`` and ``pings``, core/events.py ``STREAM_KINDS``) but
leaves every daily leaf of pings to plan. The function names the two kinds as constants (a
kept plan prunes the other leaves when it is made) and reads each remaining leaf backwards on
its unique ``(stream_id, stream_version)`` index, merged; the leaves after ``until_at`` are
pruned when the plan starts.

``SET`` clause (for its own statement only), as 0035: ``plan_cache_mode =
force_generic_plan``, ``enable_seqscan``, ``enable_sort`` and ``enable_incremental_sort`` off,
so that a plan made while a leaf was empty (today's, created days ahead) still reads it by its
index and in order. A leaf created or dropped invalidates the plan.

Revision ID: 0042
Revises: 0041
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0042"
down_revision = "0041"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
CREATE FUNCTION alert_monitor_events(monitor uuid, team uuid, until_at timestamptz,
                                     lim integer)
RETURNS TABLE (stream_version integer, event_type text, data jsonb, occurred_at timestamptz)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_sort = off
SET enable_incremental_sort = off
AS $fn$
#variable_conflict use_column
BEGIN
RETURN QUERY
SELECT e.stream_version, e.event_type, e.data, e.occurred_at
FROM events e
WHERE e.stream_id = alert_monitor_events.monitor
  AND e.team_id = alert_monitor_events.team
  AND event_retention_kind(e.stream_type, e.event_type) IN ('keep', 'pings')
  AND e.stream_type = 'monitor'
  AND e.occurred_at <= alert_monitor_events.until_at
ORDER BY e.stream_version DESC
LIMIT alert_monitor_events.lim;
END;
$fn$;
""")


def downgrade() -> None:
    op.execute("DROP FUNCTION alert_monitor_events(uuid, uuid, timestamptz, integer);")
