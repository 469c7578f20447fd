"""The team's newest events without a filter (the dashboard's overview and the audit log's
pages, keyset on the log position) become the PL/pgSQL function
``event_list_team(team, before_position, lim)``, so PostgreSQL plans the read once per server
process instead of on every page.

The read names no partition key, so the planner visits every leaf of ``events`` (three daily
leaves a day of history, and their defaults): measured 27-41 ms of planning for 3 ms of
execution (docs/benchmarks.md). It cannot be bounded by time: ``occurred_at`` is the partition
key but the order is ``global_position``, and an event appended late with an older
``occurred_at`` (a caught-up missed slot) is among the newest by position while it sits in an
old leaf (tests/integration/test_event_list.py). PL/pgSQL keeps its statements' plans in the
server process (as ``monitor_ping_batch``, migration 0021): nothing lives in the client's
session, so it works behind PgBouncer in transaction mode like any statement sent as text.

The function's ``SET`` clause (for its own statement only):

- ``plan_cache_mode = force_generic_plan``: the plan is made on the first call, not after five
  custom plans (a custom plan would prune nothing here: no partition key is named);
- ``enable_seqscan = off`` and ``enable_sort = off``: a kept plan keeps the sizes its leaves had
  when it was made (today's leaf is created empty, days ahead), so every leaf is read backwards
  on ``events_team_id_position_idx`` whatever the statistics said then. A leaf created, attached
  or dropped invalidates the plan (the parent's relcache): the next call plans it again.

The filtered reads (stream type, actor, time range) stay statements planned per call
(core/sql/events.sql, ``event_list_team_filtered``): a generic plan cannot know which of their
values are rare in which leaf (measured: 200-400 ms walking the team's index through leaves
without a single event of the stream type asked for, against 25 ms planned per call).

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0035"
down_revision = "0034"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
CREATE FUNCTION event_list_team(team uuid, before_position bigint, lim integer)
RETURNS TABLE (global_position bigint, event_id uuid, stream_type text, stream_id uuid,
               stream_version integer, event_type text, data jsonb, metadata jsonb,
               occurred_at timestamptz)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_sort = off
AS $fn$
#variable_conflict use_column
BEGIN
RETURN QUERY
SELECT e.global_position, e.event_id, e.stream_type, e.stream_id, e.stream_version,
       e.event_type, e.data, e.metadata, e.occurred_at
FROM events e
WHERE e.team_id = event_list_team.team
  AND e.global_position < coalesce(event_list_team.before_position, 9223372036854775807)
ORDER BY e.global_position DESC
LIMIT event_list_team.lim;
END;
$fn$;
""")


def downgrade() -> None:
    op.execute("DROP FUNCTION event_list_team(uuid, bigint, integer);")
