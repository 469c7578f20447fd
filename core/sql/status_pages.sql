-- Status pages: the `status_pages` inline row of the `status_page` stream (written by
-- core/statuspages/commands.py), the owner's team-scoped reads, a visitor's lookup by key hash
-- or custom path, the components a page shows, their alerts (incidents) and the notes on them.

-- name: status_page_upsert
INSERT INTO status_pages (id, team_id, title, tags, components, names, path, key_hash, key_id,
                          nonce, ciphertext, version, created_at, updated_at)
VALUES (%(id)s::uuid, %(team_id)s::uuid, %(title)s, %(tags)s::text[], %(components)s::uuid[],
        %(names)s::jsonb, %(path)s, %(key_hash)s::bytea, %(key_id)s, %(nonce)s::bytea,
        %(ciphertext)s::bytea, %(version)s::int, %(created_at)s::timestamptz,
        %(updated_at)s::timestamptz)
ON CONFLICT ON CONSTRAINT status_pages_pkey DO UPDATE SET
    title = excluded.title, tags = excluded.tags, components = excluded.components,
    names = excluded.names, path = excluded.path, key_hash = excluded.key_hash,
    key_id = excluded.key_id, nonce = excluded.nonce, ciphertext = excluded.ciphertext,
    version = excluded.version, updated_at = excluded.updated_at;

-- name: status_page_lock
SELECT * FROM status_pages
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid
FOR UPDATE;

-- name: status_page_get
SELECT * FROM status_pages
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid;

-- name: status_page_list
-- Keyset pagination on (created_at, id).
SELECT * FROM status_pages
WHERE team_id = %(team_id)s::uuid
  AND (%(after_created)s::timestamptz IS NULL
       OR (created_at, id) > (%(after_created)s::timestamptz, %(after_id)s::uuid))
ORDER BY created_at, id
LIMIT %(limit)s::int;

-- name: status_page_delete
DELETE FROM status_pages WHERE id = %(id)s::uuid;

-- name: status_page_by_key
-- A visitor's page by the hash of the key in the URL (a URL of a key's form: never a path,
-- core/statuspages/definition.py:url_kind).
SELECT id, team_id, title, tags, components, names, path, version, updated_at
FROM status_pages
WHERE key_hash = %(key_hash)s::bytea;

-- name: status_page_by_path
-- A visitor's page by its custom path (a URL of a path's form, never a key's).
SELECT id, team_id, title, tags, components, names, path, version, updated_at
FROM status_pages
WHERE path = %(path)s::text;

-- name: status_page_subjects
-- Which of the given ids are live jobs and monitors of the team (a page may only name those).
SELECT 'job' AS kind, id FROM jobs
WHERE team_id = %(team_id)s::uuid AND id = ANY(%(ids)s::uuid[]) AND status <> 'deleted'
UNION ALL
SELECT 'monitor', id FROM monitors
WHERE team_id = %(team_id)s::uuid AND id = ANY(%(ids)s::uuid[]) AND status <> 'deleted';

-- name: status_page_candidates
-- The team's live jobs and monitors a page may show (the dashboard's picker), at most `limit`:
-- those of `ids` first (a page's components, always offered), then by name.
SELECT kind, id, name FROM (
    SELECT 'job' AS kind, id, name FROM jobs
    WHERE team_id = %(team_id)s::uuid AND status <> 'deleted'
    UNION ALL
    SELECT 'monitor', id, name FROM monitors
    WHERE team_id = %(team_id)s::uuid AND status <> 'deleted'
) c
ORDER BY id = ANY(%(ids)s::uuid[]) DESC, lower(name), kind, id
LIMIT %(limit)s::int;

-- name: status_page_components
-- The live jobs and monitors a page shows: by id (in the order of `ids`) or by any of `tags`
-- (by name). `status` is the job's (active, paused, completed) or the monitor's (new, up,
-- late, down, paused); `failing` whether a job's last finished run failed.
SELECT c.kind, c.id, c.name, c.status, c.failing FROM (
    SELECT 'job' AS kind, j.id, j.name, j.status, (h.consecutive_failures > 0) AS failing,
           j.tags, j.created_at
    FROM jobs j LEFT JOIN job_health h ON h.job_id = j.id
    WHERE j.team_id = %(team_id)s::uuid AND j.status <> 'deleted'
      AND (j.id = ANY(%(ids)s::uuid[]) OR j.tags && %(tags)s::text[])
    UNION ALL
    SELECT 'monitor', m.id, m.name, m.status, false, m.tags, m.created_at
    FROM monitors m
    WHERE m.team_id = %(team_id)s::uuid AND m.status <> 'deleted'
      AND (m.id = ANY(%(ids)s::uuid[]) OR m.tags && %(tags)s::text[])
) c
ORDER BY array_position(%(ids)s::uuid[], c.id), lower(c.name), c.id
LIMIT %(limit)s::int;

-- name: status_page_incidents
-- The incidents of some jobs and monitors over the alerts since `since`, paired here by the
-- rule of core/statuspages/incidents.py:incidents (`problems`, `recoveries`: the alert
-- events of each kind as 'kind:event'): per subject in (created_at, id) order an incident
-- is open exactly when the subject's previous such alert is a problem, so a problem after
-- none or a recovery opens one and a recovery after a problem resolves it; its note is the
-- last non-empty one on its problems. Only the incidents a page or its feed shows: the open
-- ones, those resolved since `recent`, the newest `newest` ones; newest first by
-- (started_at, alert_id). `latest`: the newest instant (resolved_at, else started_at) of
-- all the incidents, on every row (tests/integration/test_status_page_incidents.py compares
-- it all with the Python rule).
WITH a AS (
    SELECT a.id, a.subject_type, a.subject_id, a.created_at, n.note,
           (a.subject_type || ':' || a.event) = ANY(%(problems)s::text[]) AS problem
    FROM alerts a LEFT JOIN alert_notes n ON n.alert_id = a.id
    WHERE a.team_id = %(team_id)s::uuid AND a.subject_id = ANY(%(ids)s::uuid[])
      AND a.created_at >= %(since)s::timestamptz AND a.event = ANY(%(events)s::text[])
      AND (a.subject_type || ':' || a.event)
          = ANY(%(problems)s::text[] || %(recoveries)s::text[])
), marked AS (
    SELECT a.*, problem AND NOT coalesce(lag(problem) OVER w, false) AS opens,
           NOT problem AND coalesce(lag(problem) OVER w, false) AS resolves
    FROM a
    WINDOW w AS (PARTITION BY subject_id ORDER BY created_at, id)
), grouped AS (
    SELECT marked.*, count(*) FILTER (WHERE opens) OVER (
        PARTITION BY subject_id ORDER BY created_at, id) AS incident
    FROM marked
), found AS (
    SELECT (array_agg(id ORDER BY created_at, id) FILTER (WHERE opens))[1] AS alert_id,
           min(subject_type) AS subject_type, subject_id,
           min(created_at) FILTER (WHERE opens) AS started_at,
           min(created_at) FILTER (WHERE resolves) AS resolved_at,
           (array_agg(note ORDER BY created_at DESC, id DESC)
                FILTER (WHERE problem AND note <> ''))[1] AS note
    FROM grouped
    WHERE incident > 0
    GROUP BY subject_id, incident
), ranked AS (
    SELECT found.*, row_number() OVER (ORDER BY started_at DESC, alert_id DESC) AS rank,
           max(coalesce(resolved_at, started_at)) OVER () AS latest
    FROM found
)
SELECT alert_id, subject_type, subject_id, started_at, resolved_at, note, latest
FROM ranked
WHERE resolved_at IS NULL OR resolved_at >= %(recent)s::timestamptz
   OR rank <= %(newest)s::int
ORDER BY started_at DESC, alert_id DESC;

-- name: status_page_days
-- The uptime bars' input for some monitors and jobs of one team (core/statuspages/bars.py:
-- component_bars), in one statement (one connection and round trip for all the bars), a row
-- per component with data, in no particular order:
-- - `kind` 'monitor', a monitor the projector has seen: its created/deleted instants and the
--   downtime periods that overlap [start, end) as two arrays in start order (`ends` NULL:
--   still down);
-- - `kind` 'job', a job with runs in [start, end): its days as indexes from `start` (a UTC
--   midnight), the clean ones (runs finished, none failed: 100 %) as bare indexes, every
--   other day as [index, succeeded, failed], and the totals. The aggregates have no ORDER BY
--   (it cost half the statement again; docs/benchmarks.md, "Status pages"): the caller
--   places the days by their indexes.
SELECT 'monitor' AS kind, s.monitor_id AS id, s.created_at, s.deleted_at,
       coalesce(d.starts, '{}') AS starts, coalesce(d.ends, '{}') AS ends,
       0::bigint AS succeeded, 0::bigint AS failed, '{}'::int[] AS clean_days,
       '{}'::int[] AS other_days
FROM monitor_state s
LEFT JOIN LATERAL (
    SELECT array_agg(started_at ORDER BY started_at) AS starts,
           array_agg(ended_at ORDER BY started_at) AS ends
    FROM monitor_downtime
    WHERE monitor_id = s.monitor_id AND team_id = %(team_id)s::uuid
      AND started_at < %(end)s::timestamptz
      AND (ended_at IS NULL OR ended_at > %(start)s::timestamptz)
) d ON true
WHERE cardinality(%(monitors)s::uuid[]) > 0  -- a one-time filter: no scan without ids
  AND s.monitor_id = ANY(%(monitors)s::uuid[]) AND s.team_id = %(team_id)s::uuid
UNION ALL
SELECT 'job', job_id, NULL::timestamptz, NULL::timestamptz, NULL::timestamptz[],
       NULL::timestamptz[], sum(succeeded)::bigint, sum(failed)::bigint,
       coalesce(array_agg(n) FILTER (WHERE clean), '{}'),
       coalesce(array_agg(ARRAY[n, succeeded, failed]) FILTER (WHERE NOT clean), '{}')
FROM (
    SELECT job_id, succeeded, failed, (failed = 0 AND succeeded > 0) AS clean,
           (bucket_start AT TIME ZONE 'UTC')::date
               - (%(start)s::timestamptz AT TIME ZONE 'UTC')::date AS n
    FROM job_stats_daily
    WHERE cardinality(%(jobs)s::uuid[]) > 0
      AND job_id = ANY(%(jobs)s::uuid[]) AND team_id = %(team_id)s::uuid
      AND bucket_start >= %(start)s::timestamptz AND bucket_start < %(end)s::timestamptz
) d
GROUP BY job_id;

-- name: alert_note_lock
-- An alert with the note written on it (NULL: none yet), its row locked: every append to the
-- alert's stream (alert.raised, alert.noted, alert.released) holds that lock.
SELECT a.id, a.subject_type, a.event, n.note
FROM alerts a LEFT JOIN alert_notes n ON n.alert_id = a.id
WHERE a.id = %(id)s::uuid AND a.team_id = %(team_id)s::uuid
FOR UPDATE OF a;

-- name: alert_stream_version
-- The version the alert's stream is at (alert.raised, then any alert.noted and
-- alert.released), read by its own statement after alert_note_lock took the alert's row, so
-- that it sees an append committed while it waited.
SELECT coalesce(max(e.stream_version), 1)::int AS version FROM events e
WHERE e.stream_id = %(id)s::uuid AND e.stream_type = 'alert'
  AND event_retention_kind(e.stream_type, e.event_type) = 'keep';

-- name: alert_note_upsert
INSERT INTO alert_notes (alert_id, team_id, note, version, updated_at)
VALUES (%(alert_id)s::uuid, %(team_id)s::uuid, %(note)s, %(version)s::int,
        %(now)s::timestamptz)
ON CONFLICT ON CONSTRAINT alert_notes_pkey DO UPDATE SET
    note = excluded.note, version = excluded.version, updated_at = excluded.updated_at;

-- name: alert_note_get
SELECT note FROM alert_notes WHERE alert_id = %(id)s::uuid AND team_id = %(team_id)s::uuid;
