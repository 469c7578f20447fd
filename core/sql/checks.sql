-- Checks: a team's monitors and jobs seen as healthchecks sees its checks (core/checks.py),
-- for the badges (core/badges.py) and the per-team metrics (core/metrics.py). Read only.

-- name: check_list_for_team
-- Every live monitor and job of the team, with its tags and what the status rules of
-- core/checks.py need: a monitor's status and pending start, a job's status, whether its
-- last finished run failed, whether a run is in flight, and its runs by outcome.
SELECT 'monitor' AS kind, m.id, m.name, m.tags, m.status, m.last_start_at IS NOT NULL AS started,
       NULL::text AS last_run_status, false AS running, '{}'::jsonb AS runs
FROM monitors m
WHERE m.team_id = %(team_id)s::uuid AND m.status <> 'deleted'
UNION ALL
SELECT 'job', j.id, j.name, j.tags, j.status, false,
       (SELECT r.status FROM runs r
        WHERE r.job_id = j.id AND r.status IN ('succeeded', 'failed')
        ORDER BY r.scheduled_for DESC, r.id DESC LIMIT 1),
       EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id AND r.status = 'running'),
       coalesce((SELECT jsonb_object_agg(o.status, o.n) FROM (
           SELECT r.status, count(*) AS n FROM runs r WHERE r.job_id = j.id
           GROUP BY r.status) o), '{}'::jsonb)
FROM jobs j
WHERE j.team_id = %(team_id)s::uuid AND j.status <> 'deleted'
ORDER BY 3, 2;
