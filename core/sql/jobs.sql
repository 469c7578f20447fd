-- Jobs: the `jobs` inline projection (written with each command of core/jobs/ and by the
-- rebuild's fold), its team-scoped reads, and the `due_jobs` row a job command sets or deletes.
-- Claiming due rows and advancing `due_at` is scheduling: runs.sql.

-- name: job_upsert
-- Writes the job projection row from the state folded over the job's stream.
INSERT INTO jobs (id, team_id, name, schedule, timezone, request, timeout_seconds, retry, overlap,
                  catchup, status, version, anchor_at, created_at, updated_at, success_statuses,
                  secret_names, signing, channels, alert_after_failures, realert_every,
                  broken_at, broken_reason, tags, confirm_timeout_seconds, schedule_text, alert_on,
                  depends_on, min_duration, max_duration, recover_after_successes, spread)
VALUES (%(id)s::uuid, %(team_id)s::uuid, %(name)s, %(schedule)s, %(timezone)s, %(request)s::jsonb,
        %(timeout_seconds)s, %(retry)s::jsonb, %(overlap)s, %(catchup)s, %(status)s,
        %(version)s::int, %(anchor_at)s::timestamptz, %(created_at)s::timestamptz,
        %(updated_at)s::timestamptz, %(success_statuses)s::int[], %(secret_names)s::text[],
        %(signing)s::bool, %(channels)s::uuid[], %(alert_after_failures)s::int,
        %(realert_every)s::int, %(broken_at)s::timestamptz, %(broken_reason)s,
        %(tags)s::text[], %(confirm_timeout_seconds)s::int, %(schedule_text)s::text,
        %(alert_on)s::text[], %(depends_on)s::uuid[], %(min_duration)s::int,
        %(max_duration)s::int, %(recover_after_successes)s::int, %(spread)s::int)
ON CONFLICT ON CONSTRAINT jobs_pkey DO UPDATE SET
    name = excluded.name, schedule = excluded.schedule, timezone = excluded.timezone,
    request = excluded.request, timeout_seconds = excluded.timeout_seconds,
    retry = excluded.retry, overlap = excluded.overlap, catchup = excluded.catchup,
    status = excluded.status, version = excluded.version, anchor_at = excluded.anchor_at,
    updated_at = excluded.updated_at, success_statuses = excluded.success_statuses,
    secret_names = excluded.secret_names, signing = excluded.signing,
    channels = excluded.channels, alert_after_failures = excluded.alert_after_failures,
    realert_every = excluded.realert_every, broken_at = excluded.broken_at,
    broken_reason = excluded.broken_reason, tags = excluded.tags,
    confirm_timeout_seconds = excluded.confirm_timeout_seconds,
    schedule_text = excluded.schedule_text, alert_on = excluded.alert_on,
    depends_on = excluded.depends_on, min_duration = excluded.min_duration,
    max_duration = excluded.max_duration,
    recover_after_successes = excluded.recover_after_successes, spread = excluded.spread;

-- name: job_lock
-- The current state of one job, locked for a command (deleted jobs are not found).
-- Lock order: a job's `jobs` row, then its `due_jobs` row, in every command and in the claim
-- (`job_claim_due` locks both rows of each job it takes, skipping jobs a command holds), so a
-- command and a claim on the same job wait for each other instead of deadlocking. FOR NO KEY
-- UPDATE serialises commands on the job and still lets foreign-key checks (`FOR KEY SHARE`:
-- a manual trigger's run insert) through; the command's `job_upsert` takes the same lock, as
-- it sets no key column (`jobs_team_name_key` is partial, so `name` is not one).
SELECT id, team_id, name, schedule, timezone, request, timeout_seconds, retry, overlap, catchup,
       status, version, anchor_at, created_at, updated_at, success_statuses, secret_names,
       signing, channels, alert_after_failures, realert_every, broken_at, broken_reason, tags,
       confirm_timeout_seconds, schedule_text, alert_on, depends_on, min_duration, max_duration,
       recover_after_successes, spread,
       CASE WHEN confirm_timeout_seconds IS NULL THEN NULL
            ELSE jsonb_build_object('timeout_seconds', confirm_timeout_seconds) END AS confirm
FROM jobs
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND status <> 'deleted'
FOR NO KEY UPDATE;

-- name: job_get
SELECT j.id, j.team_id, j.name, j.schedule, j.timezone, j.request, j.timeout_seconds, j.retry,
       j.overlap, j.catchup, j.status, j.version, j.anchor_at, j.created_at, j.updated_at,
       j.success_statuses, j.signing, j.channels, j.alert_after_failures, j.realert_every,
       j.broken_at, j.broken_reason, j.schedule_text, d.due_at AS next_run_at, j.tags, j.alert_on,
       j.depends_on, j.min_duration, j.max_duration, j.recover_after_successes, j.spread,
       CASE WHEN j.confirm_timeout_seconds IS NULL THEN NULL
            ELSE jsonb_build_object('timeout_seconds', j.confirm_timeout_seconds) END AS confirm
FROM jobs j
LEFT JOIN due_jobs d ON d.job_id = j.id
WHERE j.id = %(id)s::uuid AND j.team_id = %(team_id)s::uuid AND j.status <> 'deleted';

-- name: job_choices
-- The team's live jobs, id and name only, in creation order (a form's picker by name).
SELECT id, name
FROM jobs
WHERE team_id = %(team_id)s::uuid AND status <> 'deleted'
ORDER BY created_at, id
LIMIT %(limit)s::int;

-- name: job_list
-- Keyset pagination on (created_at, id).
SELECT j.id, j.team_id, j.name, j.schedule, j.timezone, j.request, j.timeout_seconds, j.retry,
       j.overlap, j.catchup, j.status, j.version, j.anchor_at, j.created_at, j.updated_at,
       j.success_statuses, j.signing, j.channels, j.alert_after_failures, j.realert_every,
       j.broken_at, j.broken_reason, j.schedule_text, d.due_at AS next_run_at, j.tags, j.alert_on,
       j.depends_on, j.min_duration, j.max_duration, j.recover_after_successes, j.spread,
       CASE WHEN j.confirm_timeout_seconds IS NULL THEN NULL
            ELSE jsonb_build_object('timeout_seconds', j.confirm_timeout_seconds) END AS confirm
FROM jobs j
LEFT JOIN due_jobs d ON d.job_id = j.id
WHERE j.team_id = %(team_id)s::uuid
  AND j.status <> 'deleted'
  AND (%(after_created)s::timestamptz IS NULL
       OR (j.created_at, j.id) > (%(after_created)s::timestamptz, %(after_id)s::uuid))
ORDER BY j.created_at, j.id
LIMIT %(limit)s::int;

-- name: due_job_set
INSERT INTO due_jobs (job_id, due_at) VALUES (%(job_id)s::uuid, %(due_at)s::timestamptz)
ON CONFLICT ON CONSTRAINT due_jobs_pkey DO UPDATE SET due_at = excluded.due_at;

-- name: due_job_shift
-- A job's spread changed alone: its pending slot stays and fires `seconds` later (or earlier),
-- by the change of its offset (core/jobs/commands.py, _sync_due).
UPDATE due_jobs SET due_at = due_at + make_interval(secs => %(seconds)s::float8)
WHERE job_id = %(job_id)s::uuid;

-- name: due_job_delete
DELETE FROM due_jobs WHERE job_id = %(job_id)s::uuid;

-- name: job_exists_any
-- Deleted jobs included: their history stays readable.
SELECT 1 FROM jobs WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid;

-- name: job_complete_many
-- One-shot jobs whose slot fired: the projection moves to `completed` at the next version.
UPDATE jobs SET status = 'completed', version = version + 1, updated_at = %(now)s::timestamptz
WHERE id = ANY(%(job_ids)s::uuid[]) AND status = 'active'
RETURNING id, team_id, version;

-- name: job_mark_broken_many
-- Jobs whose stored definition no longer evaluates (core/runs/claim.py): the projection takes
-- the `job.broken` event at the next version; already broken or no longer active rows are left.
UPDATE jobs j SET broken_at = %(now)s::timestamptz, broken_reason = b.reason,
                  version = j.version + 1, updated_at = %(now)s::timestamptz
FROM unnest(%(job_ids)s::uuid[], %(reasons)s::text[]) AS b(job_id, reason)
WHERE j.id = b.job_id AND j.status = 'active' AND j.broken_at IS NULL
RETURNING j.id, j.team_id, j.version, j.name, j.channels, j.broken_reason;

-- name: job_list_filtered
-- The dashboard's jobs list: optionally one state (`broken`: a broken job of any state) and
-- names containing %(name)s (case-insensitive; %% and _ escaped by the caller); keyset on
-- (created_at, id).
SELECT j.id, j.name, j.schedule, j.timezone, j.status, j.anchor_at, j.created_at,
       j.broken_at, j.broken_reason, d.due_at AS next_run_at, j.spread
FROM jobs j
LEFT JOIN due_jobs d ON d.job_id = j.id
WHERE j.team_id = %(team_id)s::uuid
  AND j.status <> 'deleted'
  AND (%(status)s::text IS NULL OR j.status = %(status)s::text
       OR (%(status)s::text = 'broken' AND j.broken_at IS NOT NULL))
  AND (%(name)s::text IS NULL OR j.name ILIKE '%%' || %(name)s::text || '%%')
  AND (%(after_created)s::timestamptz IS NULL
       OR (j.created_at, j.id) > (%(after_created)s::timestamptz, %(after_id)s::uuid))
ORDER BY j.created_at, j.id
LIMIT %(limit)s::int;

-- name: job_alert_targets
-- The name and channels of the jobs whose slots that did not run alert (`alert_on`, read by
-- the claim only when one of its slots is to alert: core/runs/claim.py).
SELECT id, name, channels
FROM jobs
WHERE id = ANY(%(job_ids)s::uuid[]);

-- name: job_peak_candidates
-- The team's jobs that fire (active, not broken), for the busiest seconds of the next day
-- (core/jobs/peaks.py).
SELECT id, name, schedule, timezone, anchor_at, spread
FROM jobs
WHERE team_id = %(team_id)s::uuid AND status = 'active' AND broken_at IS NULL
ORDER BY created_at, id;
