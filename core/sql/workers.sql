-- The worker registry (core/runs/registry.py): a row per running worker process, upserted by
-- its heartbeat and deleted when it stops; `job_claim_due` (core/sql/runs.sql) counts the live
-- ones to size its share of a slot.

-- name: worker_beat
-- Rows not seen since `forget_before` (workers killed long ago) are removed by the same statement.
WITH forgotten AS (
    DELETE FROM workers WHERE seen_at < %(forget_before)s::timestamptz
)
INSERT INTO workers (worker_id, started_at, seen_at)
VALUES (%(worker_id)s, %(now)s::timestamptz, %(now)s::timestamptz)
ON CONFLICT (worker_id) DO UPDATE SET seen_at = excluded.seen_at;

-- name: worker_leave
DELETE FROM workers WHERE worker_id = %(worker_id)s;

-- name: worker_list_live
SELECT worker_id, started_at, seen_at FROM workers
WHERE seen_at > %(live_after)s::timestamptz
ORDER BY worker_id;

-- name: worker_reach
-- For /readyz: the registered workers, how many of them are live, and when one was last seen.
SELECT count(*) FILTER (WHERE seen_at > %(live_after)s::timestamptz)::int AS live,
       count(*)::int AS registered, max(seen_at) AS last_seen
FROM workers;
