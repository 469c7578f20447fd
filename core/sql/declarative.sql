-- Declarative apply and export (core/declarative/): a team's live jobs, monitors and channels
-- read in full inside the apply's transaction, and the per-team lock that serialises applies.

-- name: apply_lock
-- One apply per team at a time (released at commit or rollback): the two-key form, a
-- namespace of its own and a hash of the team id.
SELECT pg_advisory_xact_lock(hashtext('cronledger.apply'),
                             hashtext(%(team_id)s::uuid::text));

-- name: apply_jobs
SELECT j.id, j.name, j.schedule, j.timezone, j.request, j.timeout_seconds, j.retry, j.overlap,
       j.catchup, j.success_statuses, j.signing, j.channels, j.alert_after_failures,
       j.realert_every, j.status, j.anchor_at, j.tags, j.schedule_text, j.alert_on,
       j.depends_on, j.min_duration, j.max_duration, j.recover_after_successes, j.spread,
       CASE WHEN j.confirm_timeout_seconds IS NULL THEN NULL
            ELSE jsonb_build_object('timeout_seconds', j.confirm_timeout_seconds) END AS confirm,
       EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id) AS has_run
FROM jobs j
WHERE j.team_id = %(team_id)s::uuid AND j.status <> 'deleted'
ORDER BY j.created_at, j.id;

-- name: apply_monitors
SELECT id, name, schedule, timezone, grace_seconds, methods, manual_resume, channels,
       realert_every, status, slug, tags, schedule_text, created_at, min_duration,
       max_duration, start_keywords, success_keywords, failure_keywords,
       alert_after_failures, recover_after_successes, depends_on
FROM monitors
WHERE team_id = %(team_id)s::uuid AND status <> 'deleted'
ORDER BY created_at, id;

-- name: apply_channels
SELECT id, team_id, name, kind, config, key_id, sealed
FROM channels
WHERE team_id = %(team_id)s::uuid AND deleted_at IS NULL
ORDER BY created_at, id;

-- name: apply_team_find
-- The team of `cronledger export --team NAME` (read on the database directly).
SELECT id FROM teams WHERE name = %(name)s;
