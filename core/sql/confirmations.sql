-- Run confirmations (fire-and-confirm, docs/ledger.md): the one-time token of a
-- run's current attempt (hashed), its deadline once a 2xx put the run in
-- `awaiting_confirmation`, the confirmation itself, the run's final write when it is confirmed
-- or times out, and the deadlines the timeout service sleeps until.

-- name: run_confirm_issue
-- A new attempt replaces the previous token: only the latest attempt's URL confirms.
INSERT INTO run_confirmations (run_id, team_id, attempt, token_hash, timeout_seconds)
SELECT * FROM unnest(%(run_ids)s::uuid[], %(team_ids)s::uuid[], %(attempts)s::int[],
                     %(hashes)s::bytea[], %(timeouts)s::int[])
ON CONFLICT ON CONSTRAINT run_confirmations_pkey DO UPDATE SET
    attempt = excluded.attempt, token_hash = excluded.token_hash,
    timeout_seconds = excluded.timeout_seconds, deadline_at = NULL, confirmed_at = NULL,
    outcome = NULL, exit_status = NULL;

-- name: run_confirm_arm
-- The runs the recorder just put in `awaiting_confirmation`: their deadline starts now.
-- Returns those confirmed already (the URL was pinged before the 2xx was recorded).
UPDATE run_confirmations c
SET deadline_at = %(now)s::timestamptz + make_interval(secs => c.timeout_seconds)
WHERE c.run_id = ANY(%(run_ids)s::uuid[])
RETURNING c.run_id, c.confirmed_at IS NOT NULL AS confirmed;

-- name: run_confirm_notify
SELECT pg_notify('cronledger_confirm', '');

-- name: run_confirm_lookup
-- The unused token's run, both rows locked (a second ping of the same token waits, then finds
-- it used).
SELECT c.run_id, c.attempt, c.confirmed_at, r.status, r.team_id
FROM run_confirmations c
JOIN runs r ON r.id = c.run_id
WHERE c.token_hash = %(hash)s AND c.outcome IS NULL AND r.attempt = c.attempt
FOR UPDATE OF c, r;

-- name: run_confirm_record
-- The confirmation arrived (`outcome` succeeded | failed); the token is used from now on.
UPDATE run_confirmations SET confirmed_at = %(now)s::timestamptz, outcome = %(outcome)s,
       exit_status = %(exit_status)s::int
WHERE run_id = %(run_id)s::uuid;

-- name: run_confirm_expire
-- Confirmations whose deadline passed, locked for the timeout service (`SKIP LOCKED`: a ping
-- in flight wins; a run confirmed meanwhile is not found).
UPDATE run_confirmations c SET outcome = 'unconfirmed'
FROM runs r
WHERE c.run_id IN (
        SELECT x.run_id FROM run_confirmations x
        WHERE x.outcome IS NULL AND x.deadline_at <= %(now)s::timestamptz
        ORDER BY x.deadline_at
        LIMIT %(limit)s::int
        FOR UPDATE SKIP LOCKED)
  AND r.id = c.run_id AND r.status = 'awaiting_confirmation'
RETURNING c.run_id;

-- name: run_confirm_finish
-- The run's final state after its confirmation (or its timeout): from awaiting_confirmation
-- only. `duration_ms` becomes send to confirmation.
UPDATE runs r SET
    status = o.status, finished_at = %(now)s::timestamptz, error_class = o.error_class,
    error = o.error, version = r.version + 1,
    duration_ms = greatest(0, round(extract(epoch FROM %(now)s::timestamptz - r.started_at)
                                    * 1000))::int
FROM unnest(%(run_ids)s::uuid[], %(statuses)s::text[], %(error_classes)s::text[],
            %(errors)s::text[]) AS o(run_id, status, error_class, error)
WHERE r.id = o.run_id AND r.status = 'awaiting_confirmation'
RETURNING r.id, r.job_id, r.team_id, r.version, r.scheduled_for, r.trigger, r.attempt,
          r.started_at, r.duration_ms, r.lateness_ms, r.response_status, r.error_class,
          r.error, r.status,
          (SELECT c.confirmed_at FROM run_confirmations c WHERE c.run_id = r.id) AS confirmed_at,
          (SELECT c.exit_status FROM run_confirmations c WHERE c.run_id = r.id) AS exit_status,
          CASE WHEN o.status = 'succeeded' THEN EXISTS (
              SELECT 1 FROM alert_states a
              WHERE a.subject_type = 'job' AND a.subject_id = r.job_id)
          ELSE false END AS was_failing;

-- name: run_confirm_outcomes
SELECT run_id, outcome, exit_status FROM run_confirmations
WHERE run_id = ANY(%(run_ids)s::uuid[]);

-- name: run_confirm_next_deadline
SELECT min(deadline_at) AS at FROM run_confirmations WHERE outcome IS NULL;
