-- Dependencies between monitors and jobs (`depends_on`, migration 0031): the team's graph the
-- commands check for cycles, the dependents that keep a parent from being deleted, the
-- parents an alert waits for (core/notifications/dependencies.py), and the held alerts the
-- checker releases when the parents are back.

-- name: dependency_lock
-- One change of a team's dependency graph at a time (two-key form, a namespace of its own), so
-- that two edits cannot close a cycle between them.
SELECT pg_advisory_xact_lock(hashtext('cronledger.depends_on'),
                             hashtext(%(team_id)s::uuid::text));

-- name: dependency_graph
-- The team's live monitors and jobs with their parents.
SELECT id, 'monitor' AS kind, name, depends_on
FROM monitors WHERE team_id = %(team_id)s::uuid AND status <> 'deleted'
UNION ALL
SELECT id, 'job' AS kind, name, depends_on
FROM jobs WHERE team_id = %(team_id)s::uuid AND status <> 'deleted';

-- name: dependency_dependents
-- The live monitors and jobs of the team that name a parent.
SELECT id, 'monitor' AS kind, name
FROM monitors
WHERE team_id = %(team_id)s::uuid AND status <> 'deleted' AND %(id)s::uuid = ANY (depends_on)
UNION ALL
SELECT id, 'job' AS kind, name
FROM jobs
WHERE team_id = %(team_id)s::uuid AND status <> 'deleted' AND %(id)s::uuid = ANY (depends_on)
ORDER BY name, id;

-- name: dependency_parents
-- The parents of some monitors and jobs and whether each is down now: a monitor whose status
-- is down, a job in a failure streak (its `alert_states` row: from a final failure to the good run
-- that ends the streak, recover_after_successes; the replay: core/replay/streak.py).
WITH child AS (
    SELECT id, depends_on FROM monitors WHERE id = ANY (%(ids)s::uuid[])
    UNION ALL
    SELECT id, depends_on FROM jobs WHERE id = ANY (%(ids)s::uuid[])
)
SELECT c.id AS subject_id, p.id, p.kind, p.name, p.status, p.down
FROM child c
CROSS JOIN LATERAL unnest(c.depends_on) WITH ORDINALITY AS d(parent, n)
JOIN LATERAL (
    SELECT m.id, 'monitor' AS kind, m.name, m.status, m.status = 'down' AS down
    FROM monitors m WHERE m.id = d.parent AND m.status <> 'deleted'
    UNION ALL
    SELECT j.id, 'job' AS kind, j.name, j.status,
           EXISTS (SELECT 1 FROM alert_states a
                   WHERE a.subject_type = 'job' AND a.subject_id = j.id) AS down
    FROM jobs j WHERE j.id = d.parent AND j.status <> 'deleted'
) p ON true
ORDER BY c.id, d.n;

-- name: dependency_held_open
-- The held alerts of some subjects not released yet, oldest first (locked: a recovery closes
-- them, the release sends them).
SELECT id, subject_id, event, held_by
FROM alerts
WHERE team_id = ANY (%(team_ids)s::uuid[]) AND subject_id = ANY (%(ids)s::uuid[])
  AND held_by IS NOT NULL AND released_at IS NULL
ORDER BY created_at, id
FOR UPDATE;

-- name: dependency_held_dependents
-- The dependents whose alerts some parents hold now: one row per (parent, dependent).
SELECT DISTINCT ON (parent, a.subject_id) parent, a.subject_id AS id, a.subject_type AS kind,
       coalesce(m.name, j.name) AS name
FROM alerts a
CROSS JOIN LATERAL unnest(a.held_by) AS parent
LEFT JOIN monitors m ON a.subject_type = 'monitor' AND m.id = a.subject_id
LEFT JOIN jobs j ON a.subject_type = 'job' AND j.id = a.subject_id
WHERE a.team_id = ANY (%(team_ids)s::uuid[]) AND a.held_by IS NOT NULL
  AND a.released_at IS NULL AND parent = ANY (%(ids)s::uuid[])
ORDER BY parent, a.subject_id;

-- name: dependency_held_claim
-- Held alerts not released yet, for the checker's release pass (SKIP LOCKED: another checker
-- or the subject's own recovery holds them).
SELECT id, team_id, subject_type, subject_id, event, rule, held_by, created_at
FROM alerts
WHERE held_by IS NOT NULL AND released_at IS NULL
ORDER BY created_at, id
LIMIT %(limit)s::int
FOR UPDATE SKIP LOCKED;

-- name: dependency_held_claim_of_parents
-- The held alerts not released yet that some parents hold, oldest first (SKIP LOCKED as above),
-- in the transaction where those parents came back (core/notifications/released.py).
SELECT id, team_id, subject_type, subject_id, event, rule, held_by, created_at
FROM alerts
WHERE held_by IS NOT NULL AND released_at IS NULL
  AND held_by && %(ids)s::uuid[]
ORDER BY created_at, id
FOR UPDATE SKIP LOCKED;

-- name: dependency_held_claim_of_subject
-- A subject's held alerts not released yet, oldest first, when its depends_on changed.
SELECT id, team_id, subject_type, subject_id, event, rule, held_by, created_at
FROM alerts
WHERE subject_id = %(id)s::uuid AND held_by IS NOT NULL AND released_at IS NULL
ORDER BY created_at, id
FOR UPDATE SKIP LOCKED;

-- name: dependency_held_any
SELECT EXISTS (SELECT 1 FROM alerts WHERE held_by IS NOT NULL AND released_at IS NULL) AS any;

-- name: dependency_subject_down
-- Whether a held alert's subject is still down, and where its alerts go now.
SELECT m.status = 'down' AS down, m.channels, m.name
FROM monitors m
WHERE %(subject_type)s::text = 'monitor' AND m.id = %(id)s::uuid AND m.status <> 'deleted'
UNION ALL
SELECT EXISTS (SELECT 1 FROM alert_states a
               WHERE a.subject_type = 'job' AND a.subject_id = j.id) AS down,
       j.channels, j.name
FROM jobs j
WHERE %(subject_type)s::text = 'job' AND j.id = %(id)s::uuid AND j.status <> 'deleted';

-- name: dependency_held_message
-- The message a held alert would have sent (its suppressed notification's).
SELECT message FROM notifications WHERE alert_id = %(id)s::uuid ORDER BY id LIMIT 1;

-- name: dependency_release
-- version: where the alert's stream is (alert.raised, then any alert.noted), for alert.released.
UPDATE alerts a SET released_at = %(now)s::timestamptz, released_as = %(released_as)s::uuid
WHERE a.id = ANY (%(ids)s::uuid[]) AND a.released_at IS NULL
RETURNING a.id, a.team_id,
          (SELECT coalesce(max(e.stream_version), 1) FROM events e
           WHERE e.stream_id = a.id AND e.stream_type = 'alert'
             AND event_retention_kind(e.stream_type, e.event_type) = 'keep')::int AS version;

-- name: dependency_alert_of
SELECT DISTINCT alert_id FROM notifications WHERE id = ANY (%(ids)s::uuid[]);

-- name: dependency_by_name
-- The team's live monitors and jobs of some names (the dashboard's depends_on field names
-- parents; names are unique per kind, so a name is at most one of each).
SELECT id, 'monitor' AS kind, name
FROM monitors WHERE team_id = %(team_id)s::uuid AND status <> 'deleted'
                AND name = ANY (%(names)s::text[])
UNION ALL
SELECT id, 'job' AS kind, name
FROM jobs WHERE team_id = %(team_id)s::uuid AND status <> 'deleted'
            AND name = ANY (%(names)s::text[]);

-- name: dependency_names
-- The names of some of the team's monitors and jobs, by id (a form or page showing parents).
SELECT id, 'monitor' AS kind, name FROM monitors
WHERE team_id = %(team_id)s::uuid AND id = ANY (%(ids)s::uuid[])
UNION ALL
SELECT id, 'job' AS kind, name FROM jobs
WHERE team_id = %(team_id)s::uuid AND id = ANY (%(ids)s::uuid[]);
