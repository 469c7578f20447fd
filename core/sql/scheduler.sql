-- name: job_claim_due
-- The claim of DESIGN 3.2: due rows, oldest first, skipping rows another worker holds.
-- `finished`: runs this worker has finished (HTTP exchange over, final outcome) whose results
-- are not recorded yet (recording retried during an outage); for the overlap policy they are
-- no longer in flight (docs/operations.md, "Database outages").
SELECT d.job_id, d.due_at, j.team_id, j.schedule, j.timezone, j.request, j.timeout_seconds,
       j.retry, j.overlap, j.catchup, j.anchor_at, j.version, j.success_statuses,
       j.secret_names, j.signing,
       (SELECT count(*) FROM runs r
         WHERE r.job_id = d.job_id AND r.status = 'running'
           AND r.id <> ALL(%(finished)s::uuid[]))::int AS running,
       (SELECT count(*) FROM runs r
         WHERE r.job_id = d.job_id AND r.status = 'queued')::int AS queued
FROM due_jobs d
JOIN jobs j ON j.id = d.job_id
WHERE d.due_at <= %(horizon)s::timestamptz
ORDER BY d.due_at
LIMIT %(limit)s::int
FOR UPDATE OF d SKIP LOCKED;

-- name: due_job_advance
UPDATE due_jobs d SET due_at = n.due_at
FROM unnest(%(job_ids)s::uuid[], %(due_at)s::timestamptz[]) AS n(job_id, due_at)
WHERE d.job_id = n.job_id;

-- name: due_job_delete_many
DELETE FROM due_jobs WHERE job_id = ANY(%(job_ids)s::uuid[]);

-- name: scheduler_next_wakeup
-- The earliest instant at which the scheduler has work: a due slot, a ready run, an expired lease.
SELECT least(
    (SELECT min(due_at) FROM due_jobs),
    (SELECT min(available_at) FROM runs WHERE status = 'queued'),
    (SELECT min(lease_expires_at) FROM runs WHERE status = 'running')
) AS wake_at;
