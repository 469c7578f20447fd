"""A monitor's pings with their bodies (``GET /v1/monitors/{id}/pings``, the last 30 on its
dashboard page) and the team's events with a filter (the audit log by stream type, actor or
time) become the PL/pgSQL functions ``monitor_ping_list`` and ``event_list_team_filtered``, so
PostgreSQL plans each read once per server process instead of on every call, as
``event_list_team`` (migration 0035) and ``monitor_ping_marks`` (migration 0036).

Planned per call, the pings read spent 12 ms planning for 2 ms running at 1,000 monitors (the
daily leaves of pings and of their bodies), the filtered events read 10-25 ms over the leaves
of its kinds (docs/benchmarks.md). A kept plan is made without the values, so each statement
is written so that its one good plan is the only one without a sort (sorts are off, as below):

- ``monitor_ping_list(monitor, team, before_version, lim)``: the newest ``lim`` pings below
  ``before_version`` (NULL: from the newest), read backwards on each leaf's unique
  ``(stream_id, stream_version)`` index and merged (the keyset is part of the index condition:
  ``coalesce``, not ``IS NULL OR``); the same from ``monitor_pings_kept`` on its primary key;
  then, for the ``lim`` rows only, each body by its primary key in the one leaf of bodies its
  ``received_at`` names (the other leaves pruned as the lookup runs).
- ``event_list_team_filtered(team, before_position, kinds, stream, actor, since, until,
  lim)``: the leaves are pruned when the plan starts, by ``kinds`` (the partitions of the
  stream type, core/events.py ``stream_kinds``; compared as a list of four values, since
  ``= ANY`` of an array parameter does not prune) and by ``[since, until)``
  (``coalesce``, not ``IS NULL OR``). A stream type, else an actor, else neither is read on
  its own index of every leaf (migration 0015: ``(team_id, stream_type, global_position)``,
  ``(team_id, metadata ->> 'actor', global_position)``; ``(team_id, global_position)``),
  backwards from the keyset's position: the value asked for is written as a range of one
  (``>=`` and ``<=``, not ``=``) and the order is the index's whole key, so that no other
  index gives the order (the log position's primary key would walk the team's events of
  every other value: measured 70 ms to 7 s with the generic plan's guess) and the scan stops
  where the value ends. An actor given with a stream type is a filter.

``SET`` clause (for their own statements only), as 0035: ``plan_cache_mode =
force_generic_plan`` (planned on the first call), ``enable_seqscan``, ``enable_sort`` and
``enable_incremental_sort`` off, so that a plan made while a leaf was empty (today's, created
days ahead) still reads it by its index and in order. A leaf created or dropped invalidates the
plan (the next call plans it again).

Revision ID: 0039
Revises: 0038
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0039"
down_revision = "0038"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("""
CREATE FUNCTION monitor_ping_list(monitor uuid, team uuid, before_version integer, lim integer)
RETURNS TABLE (stream_version integer, occurred_at timestamptz, data jsonb, body bytea)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_sort = off
SET enable_incremental_sort = off
AS $fn$
#variable_conflict use_column
BEGIN
RETURN QUERY
SELECT p.stream_version, p.occurred_at, p.data,
       CASE WHEN p.kept THEN p.body
            ELSE (SELECT b.body FROM monitor_ping_bodies b
                  WHERE b.monitor_id = monitor_ping_list.monitor
                    AND b.version = p.stream_version
                    AND b.received_at = p.occurred_at) END
FROM ((SELECT e.stream_version, e.occurred_at, e.data, NULL::bytea AS body, false AS kept
       FROM events e
       WHERE e.stream_id = monitor_ping_list.monitor
         AND event_retention_kind(e.stream_type, e.event_type) = 'pings'
         AND e.team_id = monitor_ping_list.team
         AND e.event_type = 'monitor.pinged'
         AND e.stream_version < coalesce(monitor_ping_list.before_version, 2147483647)
       ORDER BY e.stream_version DESC
       LIMIT monitor_ping_list.lim)
      UNION ALL
      (SELECT k.stream_version, k.occurred_at, k.data, k.body, true AS kept
       FROM monitor_pings_kept k
       WHERE k.monitor_id = monitor_ping_list.monitor
         AND k.team_id = monitor_ping_list.team
         AND k.stream_version < coalesce(monitor_ping_list.before_version, 2147483647)
       ORDER BY k.stream_version DESC
       LIMIT monitor_ping_list.lim)) AS p
ORDER BY p.stream_version DESC
LIMIT monitor_ping_list.lim;
END;
$fn$;

CREATE FUNCTION event_list_team_filtered(team uuid, before_position bigint, kinds text[],
                                         stream text, actor text, since timestamptz,
                                         until timestamptz, lim integer)
RETURNS TABLE (global_position bigint, event_id uuid, stream_type text, stream_id uuid,
               stream_version integer, event_type text, data jsonb, metadata jsonb,
               occurred_at timestamptz)
LANGUAGE plpgsql STABLE
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_sort = off
SET enable_incremental_sort = off
AS $fn$
#variable_conflict use_variable
DECLARE
    -- the partitions of the stream type (NULL: all four), compared as a list of values, not
    -- as = ANY (an array parameter): the plan prunes the others when it starts
    every text[] := coalesce(kinds, ARRAY['keep', 'pings', 'runs', 'deliveries']);
    kind1 text := every[1];
    kind2 text := coalesce(every[2], every[1]);
    kind3 text := coalesce(every[3], every[1]);
    kind4 text := coalesce(every[4], every[1]);
    below bigint := coalesce(before_position, 9223372036854775807);
BEGIN
-- Each statement reads one index of the leaves backwards, from the position below which it
-- reads to the end of its value: the value it asks for is a range of one (>= and <=, not =)
-- and the order is the index's, so that no other index can give the order (the log
-- position's would walk the team's every event, whatever the planner guessed of a value it
-- has not seen) and the scan stops where the value ends.
IF stream IS NOT NULL THEN
    RETURN QUERY
    SELECT e.global_position, e.event_id, e.stream_type, e.stream_id, e.stream_version,
           e.event_type, e.data, e.metadata, e.occurred_at
    FROM events e
    WHERE e.team_id = team
      AND e.stream_type >= stream AND e.stream_type <= stream
      AND e.global_position < below
      AND event_retention_kind(e.stream_type, e.event_type) IN (kind1, kind2, kind3, kind4)
      AND e.occurred_at >= coalesce(since, '-infinity')
      AND e.occurred_at < coalesce(until, 'infinity')
      AND (actor IS NULL OR e.metadata ->> 'actor' = actor)
    ORDER BY e.stream_type DESC, e.global_position DESC
    LIMIT lim;
ELSIF actor IS NOT NULL THEN
    RETURN QUERY
    SELECT e.global_position, e.event_id, e.stream_type, e.stream_id, e.stream_version,
           e.event_type, e.data, e.metadata, e.occurred_at
    FROM events e
    WHERE e.team_id = team
      AND e.metadata ->> 'actor' >= actor AND e.metadata ->> 'actor' <= actor
      AND e.global_position < below
      AND e.occurred_at >= coalesce(since, '-infinity')
      AND e.occurred_at < coalesce(until, 'infinity')
    ORDER BY e.metadata ->> 'actor' DESC, e.global_position DESC
    LIMIT lim;
ELSE
    RETURN QUERY
    SELECT e.global_position, e.event_id, e.stream_type, e.stream_id, e.stream_version,
           e.event_type, e.data, e.metadata, e.occurred_at
    FROM events e
    WHERE e.team_id >= team AND e.team_id <= team
      AND e.global_position < below
      AND e.occurred_at >= coalesce(since, '-infinity')
      AND e.occurred_at < coalesce(until, 'infinity')
    ORDER BY e.team_id DESC, e.global_position DESC
    LIMIT lim;
END IF;
END;
$fn$;
""")


def downgrade() -> None:
    op.execute("""
DROP FUNCTION event_list_team_filtered(uuid, bigint, text[], text, text, timestamptz,
                                       timestamptz, integer);
DROP FUNCTION monitor_ping_list(uuid, uuid, integer, integer);
""")
