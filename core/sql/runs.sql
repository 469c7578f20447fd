-- Runs and their scheduling: the claim of due jobs (`job_claim_due`) and the advance or removal
-- of their `due_jobs` rows, the scheduler's wakeup instant, the run rows (insert, claim when
-- ready, release, finish with the lease compare-and-set, cancel), their attempts, and the
-- API's reads of runs and attempts.

-- name: job_claim_due
-- The claim (docs/architecture.md, "A run"): due rows, oldest first, skipping
-- rows another worker holds and jobs a command holds (both rows of a job are locked, the
-- `jobs` row as a command locks it: `job_lock`, core/sql/jobs.sql, says why).
-- `finished`: runs this worker has finished (HTTP exchange over, final outcome) whose results
-- are not recorded yet (recording retried during an outage); for the overlap policy they are
-- no longer in flight (docs/operations.md, "Database outages").
-- The fair share (core/runs/registry.py): at most ceil(due / live workers) rows, counting this
-- worker and the others seen after `live_after`, so that workers waking together for a slot
-- each claim part of it. The count stops at `limit` rows per worker: past that the share is
-- `limit` anyway (in `due_at` order, so it walks the index, not the table).
WITH others AS (
    SELECT count(*)::int AS n FROM workers
    WHERE worker_id <> %(worker_id)s AND seen_at > %(live_after)s::timestamptz
), share AS (
    SELECT ceil(count(*)::numeric / (1 + (SELECT n FROM others)))::int AS rows
    FROM (SELECT 1 FROM due_jobs WHERE due_at <= %(horizon)s::timestamptz ORDER BY due_at
          LIMIT %(limit)s::int * (1 + (SELECT n FROM others))) due
)
-- The job's definition columns are all read (core/job_definition.py:JobDefinition).
SELECT d.job_id, d.due_at, j.team_id, j.anchor_at, j.version, j.signing, j.name, j.schedule,
       j.timezone, j.request, j.timeout_seconds, j.retry, j.overlap, j.catchup,
       j.success_statuses, j.channels, j.alert_after_failures, j.realert_every, j.alert_on,
       j.depends_on, j.min_duration, j.max_duration, j.recover_after_successes, j.spread,
       j.tags, j.schedule_text, j.confirm_timeout_seconds, j.secret_names, f.running, f.queued
FROM due_jobs d
JOIN jobs j ON j.id = d.job_id
-- The job's runs in flight, read once (runs_in_flight_idx), for the overlap policy and for
-- the filter below.
CROSS JOIN LATERAL (
    SELECT count(*) FILTER (WHERE r.status = 'running'
                              AND r.id <> ALL(%(finished)s::uuid[]))::int AS running,
           count(*) FILTER (WHERE r.status = 'queued')::int AS queued
    FROM runs r
    WHERE r.job_id = d.job_id AND r.status IN ('running', 'queued')
) f
WHERE d.due_at <= %(horizon)s::timestamptz
  -- Claimed ahead of its slot only when the overlap policy cannot apply to it: a job with a
  -- run in flight (not `allow`) is claimed at its slot, where the policy is decided (a run
  -- that ends before then must not make the slot skipped; docs/schedules.md, "Overlap").
  -- The policy is read by a subquery, not from `j`: a filter on both sides of the join made
  -- the planner hash-join over all of `jobs` (tests/integration/test_plans.py).
  AND (d.due_at <= %(now)s::timestamptz
       OR (SELECT o.overlap FROM jobs o WHERE o.id = d.job_id) = 'allow'
       OR f.running + f.queued = 0)
ORDER BY d.due_at
LIMIT least(%(limit)s::int, (SELECT rows FROM share))
FOR UPDATE OF d SKIP LOCKED
FOR NO KEY UPDATE OF j SKIP LOCKED;

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

-- name: run_insert_many
-- Slot runs conflict on runs_job_slot_key: a slot another worker already recorded is skipped,
-- so each slot fires at most once. The rows come as one JSON array (far cheaper to send than
-- one array parameter per column).
INSERT INTO runs (id, job_id, team_id, scheduled_for, trigger, status, attempt, max_attempts,
                  available_at, lease_expires_at, lease_token, worker_id, reason, version,
                  created_at, finished_at)
SELECT r.id, r.job_id, r.team_id, r.scheduled_for, r.trigger, r.status, r.attempt,
       r.max_attempts, r.available_at, r.lease_expires_at, r.lease_token, r.worker_id,
       r.reason, r.version, r.created_at, r.finished_at
FROM jsonb_to_recordset(%(rows)s::jsonb) AS r(
    id uuid, job_id uuid, team_id uuid, scheduled_for timestamptz, trigger text, status text,
    attempt int, max_attempts int, available_at timestamptz, lease_expires_at timestamptz,
    lease_token uuid, worker_id text, reason text, version int, created_at timestamptz,
    finished_at timestamptz)
ON CONFLICT (job_id, scheduled_for) WHERE trigger <> 'manual' DO NOTHING
RETURNING id;

-- name: run_claim_ready
-- Queued runs whose time has come (manual triggers, retries, buffered overlaps) and running
-- runs whose lease expired (their worker died): the same run id is dispatched again.
-- `mine`: runs whose exchange this worker has finished and is still recording (an outage
-- outlasted their lease): not sent again by this worker.
WITH ready AS (
    SELECT r.id, r.status AS previous_status,
           CASE WHEN r.status = 'queued' THEN r.available_at ELSE r.lease_expires_at END AS due_at
    FROM runs r
    WHERE (r.status = 'queued' AND r.available_at <= %(now)s::timestamptz)
       OR (r.status = 'running' AND r.lease_expires_at <= %(now)s::timestamptz
           AND r.id <> ALL(%(mine)s::uuid[]))
    ORDER BY coalesce(r.available_at, r.lease_expires_at)
    LIMIT %(limit)s::int
    FOR UPDATE OF r SKIP LOCKED
)
UPDATE runs r SET
    status = 'running',
    attempt = CASE WHEN ready.previous_status = 'queued' THEN r.attempt + 1 ELSE r.attempt END,
    lease_token = gen_random_uuid(),
    lease_expires_at = %(now)s::timestamptz
        + make_interval(secs => j.timeout_seconds + %(lease_margin)s::float8),
    worker_id = %(worker_id)s,
    available_at = NULL,
    version = r.version + 1
FROM ready, jobs j
WHERE r.id = ready.id AND j.id = r.job_id
RETURNING r.id, r.job_id, r.team_id, r.scheduled_for, r.trigger, r.attempt, r.max_attempts,
          r.lease_token, r.lease_expires_at, r.version, ready.previous_status, ready.due_at,
          j.request, j.timeout_seconds, j.retry, j.success_statuses, j.secret_names, j.signing,
          j.confirm_timeout_seconds, j.min_duration, j.spread;

-- name: run_release_buffered
-- A run buffered by the `queue` overlap policy becomes ready once its job has nothing running.
-- A change of the row, so it is an event too (`run.released`): the stream version moves on.
UPDATE runs q SET available_at = %(now)s::timestamptz, version = q.version + 1
WHERE q.status = 'queued' AND q.available_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM runs o WHERE o.job_id = q.job_id AND o.status = 'running')
RETURNING q.id, q.team_id, q.job_id, q.scheduled_for, q.trigger, q.version, q.status,
          q.attempt;

-- name: run_finish_many
-- Compare-and-set on the lease token: an attempt whose lease was taken over records nothing.
UPDATE runs r SET
    status = o.status,
    finished_at = o.finished_at,
    available_at = o.available_at,
    lease_expires_at = NULL,
    lease_token = NULL,
    started_at = coalesce(r.started_at, o.started_at),
    lateness_ms = coalesce(r.lateness_ms, o.lateness_ms),
    duration_ms = o.duration_ms,
    response_status = o.response_status,
    error_class = o.error_class,
    error = o.error,
    version = r.version + 1
FROM unnest(%(ids)s::uuid[], %(lease_tokens)s::uuid[], %(statuses)s::text[],
            %(finished_at)s::timestamptz[], %(available_at)s::timestamptz[],
            %(started_at)s::timestamptz[], %(lateness_ms)s::int[], %(duration_ms)s::int[],
            %(response_status)s::int[], %(error_class)s::text[], %(error)s::text[])
     AS o(id, lease_token, status, finished_at, available_at, started_at, lateness_ms,
          duration_ms, response_status, error_class, error)
WHERE r.id = o.id AND r.status = 'running' AND r.lease_token = o.lease_token
-- was_failing: a success ends a failure streak (a primary-key probe, successes only), so the
-- recorder needs no extra query for the runs of healthy jobs.
RETURNING r.id, o.lease_token AS result_lease_token, r.job_id, r.team_id, r.version,
          r.lateness_ms, r.status, r.scheduled_for, r.trigger, r.attempt,
          CASE WHEN o.status = 'succeeded' THEN EXISTS (
              SELECT 1 FROM alert_states a
              WHERE a.subject_type = 'job' AND a.subject_id = r.job_id)
          ELSE false END AS was_failing;

-- name: run_keep_first_lateness
-- Results whose lease was taken over are not recorded, but when the run is still waiting for
-- the re-dispatched attempt's result (same attempt number, nothing recorded yet) the discarded
-- attempt was the first send: its lateness is kept, and run_finish_many's coalesce carries it
-- into the run's final event (docs/operations.md, "Database outages"). No event of its own:
-- the value reaches the log with the next result event of the run.
UPDATE runs r SET lateness_ms = o.lateness_ms
FROM unnest(%(ids)s::uuid[], %(attempts)s::int[], %(lateness_ms)s::int[])
     AS o(id, attempt, lateness_ms)
WHERE r.id = o.id AND r.attempt = o.attempt AND r.status = 'running'
  AND r.started_at IS NULL AND (r.lateness_ms IS NULL OR r.lateness_ms > o.lateness_ms)
RETURNING r.id;

-- name: run_attempt_insert_many
INSERT INTO run_attempts (run_id, attempt, started_at, finished_at, duration_ms, request,
                          response_status, response_headers, response_body, response_truncated,
                          error_class, error, lateness_ms, worker_id)
SELECT * FROM unnest(%(run_ids)s::uuid[], %(attempts)s::int[], %(started_at)s::timestamptz[],
                     %(finished_at)s::timestamptz[], %(duration_ms)s::int[],
                     %(requests)s::jsonb[], %(response_status)s::int[],
                     %(response_headers)s::jsonb[], %(response_body)s::bytea[],
                     %(response_truncated)s::bool[], %(error_class)s::text[], %(error)s::text[],
                     %(lateness_ms)s::int[], %(worker_ids)s::text[])
ON CONFLICT ON CONSTRAINT run_attempts_pkey DO NOTHING;

-- name: run_cancel_queued
-- Queued runs of a deleted job will never be sent.
UPDATE runs SET status = 'skipped', reason = %(reason)s, finished_at = %(now)s::timestamptz,
                available_at = NULL, version = version + 1
WHERE job_id = %(job_id)s::uuid AND status = 'queued'
RETURNING id, team_id, job_id, scheduled_for, trigger, version;

-- name: run_list_for_job
-- Keyset pagination on (scheduled_for, id), newest first.
SELECT r.id, r.job_id, r.scheduled_for, r.trigger, r.status, r.attempt, r.max_attempts,
       r.available_at, r.started_at, r.finished_at, r.lateness_ms, r.duration_ms,
       r.response_status, r.error_class, r.error, r.reason, r.created_at,
       c.deadline_at AS confirm_deadline_at, c.confirmed_at, c.outcome AS confirmation,
       c.exit_status AS confirm_exit_status
FROM runs r
LEFT JOIN run_confirmations c ON c.run_id = r.id
WHERE r.job_id = %(job_id)s::uuid AND r.team_id = %(team_id)s::uuid
  AND (%(before_scheduled)s::timestamptz IS NULL
       OR (r.scheduled_for, r.id) < (%(before_scheduled)s::timestamptz, %(before_id)s::uuid))
ORDER BY r.scheduled_for DESC, r.id DESC
LIMIT %(limit)s::int;

-- name: run_get
SELECT r.id, r.job_id, r.scheduled_for, r.trigger, r.status, r.attempt, r.max_attempts,
       r.available_at, r.started_at, r.finished_at, r.lateness_ms, r.duration_ms,
       r.response_status, r.error_class, r.error, r.reason, r.created_at,
       c.deadline_at AS confirm_deadline_at, c.confirmed_at, c.outcome AS confirmation,
       c.exit_status AS confirm_exit_status
FROM runs r
LEFT JOIN run_confirmations c ON c.run_id = r.id
WHERE r.id = %(id)s::uuid AND r.team_id = %(team_id)s::uuid;

-- name: run_fire_at
-- When a run's slot was to fire, as the run's first event names it (a job with a spread: the
-- slot plus its offset, docs/schedules.md, *Spread*); no row or a null: at the slot. Its own
-- statement, read by the run's page only: it plans every leaf of the runs' events (no time
-- bound is known), which GET /v1/runs/{id} need not pay.
SELECT (data->>'fire_at')::timestamptz AS fire_at FROM events
WHERE stream_id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND stream_version = 1
  AND event_retention_kind(stream_type, event_type) = 'runs';

-- name: run_fire_times
-- When each run of a page (`ids`, a job's runs table) was to fire, as `run_fire_at` reads it
-- for one run: the run's first event, recorded at the run's `created_at` (core/runs/state.py
-- folds it so). `from` and `to` are the page's earliest and latest `created_at`: known when the
-- statement is planned, they prune the runs' events to the daily leaves between them. A
-- correlated probe per row (`f.occurred_at = r.created_at`) planned every leaf instead: about
-- 10 ms of planning per call at 30 days of leaves against under 1 ms for the list alone.
SELECT stream_id AS run_id, (data->>'fire_at')::timestamptz AS fire_at FROM events
WHERE stream_id = ANY(%(ids)s::uuid[]) AND team_id = %(team_id)s::uuid AND stream_version = 1
  AND occurred_at >= %(from)s::timestamptz AND occurred_at <= %(to)s::timestamptz
  AND event_retention_kind(stream_type, event_type) = 'runs' AND data ? 'fire_at';

-- name: run_attempt_list
SELECT attempt, started_at, finished_at, duration_ms, lateness_ms, worker_id, request,
       response_status, response_headers, response_body, response_truncated, error_class, error
FROM run_attempts
WHERE run_id = %(run_id)s::uuid
ORDER BY attempt;

-- name: run_release_leases
-- At shutdown: unfinished attempts become immediately available to other workers.
UPDATE runs r SET lease_expires_at = %(now)s::timestamptz
FROM unnest(%(ids)s::uuid[], %(lease_tokens)s::uuid[]) AS l(id, lease_token)
WHERE r.id = l.id AND r.status = 'running' AND r.lease_token = l.lease_token;

-- name: run_recent_for_jobs
-- The newest %(per_job)s runs of each job of %(job_ids)s (the dashboard's coloured marks),
-- newest slot first; one index range per job (runs_job_history_idx).
SELECT j.job_id, r.status, r.scheduled_for
FROM unnest(%(job_ids)s::uuid[]) AS j(job_id)
CROSS JOIN LATERAL (
    SELECT status, scheduled_for FROM runs
    WHERE runs.job_id = j.job_id AND runs.team_id = %(team_id)s::uuid
    ORDER BY scheduled_for DESC, id DESC
    LIMIT %(per_job)s::int) AS r
ORDER BY j.job_id, r.scheduled_for DESC;

-- name: run_release_orphans
-- Runs leased to a worker that does not hold them (docs/operations.md, "High availability"):
-- this worker's own runs it has no attempt of in memory (`held`: the lease tokens it holds; a
-- result whose recording an asynchronous failover lost, a previous process with the same
-- worker id), and the runs of workers gone from the registry (not seen since `live_after`).
-- Their leases end now: `run_claim_ready` takes them again at once, with the same run id and
-- so the same Idempotency-Key.
UPDATE runs r SET lease_expires_at = %(now)s::timestamptz
WHERE r.status = 'running' AND r.lease_expires_at > %(now)s::timestamptz
  AND CASE WHEN r.worker_id = %(worker_id)s THEN r.lease_token <> ALL(%(held)s::uuid[])
           ELSE NOT EXISTS (SELECT 1 FROM workers w
                            WHERE w.worker_id = r.worker_id
                              AND w.seen_at > %(live_after)s::timestamptz) END
RETURNING r.id, r.worker_id;

-- name: run_overrun_claim
-- Runs still going past their job's max_duration and not yet said so (core/runs/bounds.py):
-- running, waiting for a retry, or waiting for their confirmation; measured from the first
-- attempt's start, or the slot while no attempt has reported. SKIP LOCKED: a run the recorder
-- holds is looked at next time (its lease and timeouts are left as they are).
SELECT r.id, r.job_id, r.team_id, r.scheduled_for, r.trigger,
       coalesce(r.started_at, r.scheduled_for) AS started_at, j.name, j.channels,
       j.max_duration
FROM runs r
JOIN jobs j ON j.id = r.job_id
WHERE r.status IN ('running', 'queued', 'awaiting_confirmation')
  AND (r.status <> 'queued' OR r.attempt > 0)
  AND r.overran_at IS NULL AND j.max_duration IS NOT NULL
  AND coalesce(r.started_at, r.scheduled_for) + make_interval(secs => j.max_duration)
      <= %(now)s::timestamptz
ORDER BY r.scheduled_for, r.id
LIMIT %(limit)s::int
FOR UPDATE OF r SKIP LOCKED;

-- name: run_overrun_mark
UPDATE runs SET overran_at = %(now)s::timestamptz, version = version + 1
WHERE id = ANY (%(ids)s::uuid[])
RETURNING id, version;

-- name: run_overrun_next
-- The earliest instant a run still going would pass its job's max_duration.
SELECT min(coalesce(r.started_at, r.scheduled_for) + make_interval(secs => j.max_duration))
       AS at
FROM runs r
JOIN jobs j ON j.id = r.job_id
WHERE r.status IN ('running', 'queued', 'awaiting_confirmation')
  AND (r.status <> 'queued' OR r.attempt > 0)
  AND r.overran_at IS NULL AND j.max_duration IS NOT NULL;
