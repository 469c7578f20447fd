-- Teams and their API keys: ensure a team, issue, authenticate, list (the team's and the
-- CLI's) and revoke keys.

-- name: team_ensure
INSERT INTO teams (name) VALUES (%(name)s)
ON CONFLICT ON CONSTRAINT teams_name_key DO UPDATE SET name = excluded.name
RETURNING id, name;

-- name: api_key_insert
INSERT INTO api_keys (team_id, name, prefix, key_hash, scope)
VALUES (%(team_id)s::uuid, %(name)s, %(prefix)s, %(key_hash)s, %(scope)s)
RETURNING id, team_id, name, prefix, scope, created_at;

-- name: api_key_authenticate
SELECT k.id, k.team_id, k.scope
FROM api_keys k
WHERE k.key_hash = %(key_hash)s AND k.revoked_at IS NULL;

-- name: api_key_list
-- The team's active keys; keyset pagination on (created_at, id).
SELECT id, name, prefix, scope, created_at
FROM api_keys
WHERE team_id = %(team_id)s::uuid AND revoked_at IS NULL
  AND (%(after_created)s::timestamptz IS NULL
       OR (created_at, id) > (%(after_created)s::timestamptz, %(after_id)s::uuid))
ORDER BY created_at, id
LIMIT %(limit)s::int;

-- name: api_key_admin_list
-- Every key (revoked ones too) of every team, or of the team named %(team)s; for the CLI.
SELECT k.id, t.name AS team, k.name, k.prefix, k.scope, k.created_at, k.revoked_at
FROM api_keys k
JOIN teams t ON t.id = k.team_id
WHERE %(team)s::text IS NULL OR t.name = %(team)s::text
ORDER BY t.name, k.created_at, k.id;

-- name: api_key_find
SELECT id, team_id, revoked_at FROM api_keys WHERE id = %(id)s::uuid;

-- name: api_key_revoke
UPDATE api_keys SET revoked_at = %(now)s::timestamptz
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND revoked_at IS NULL
RETURNING id;

-- name: team_get
-- A team as GET /v1/team shows it (core/teams.py).
SELECT id, name, created_at, ping_key_hash IS NOT NULL AS has_ping_key, badge_key
FROM teams WHERE id = %(team_id)s::uuid;

-- name: team_lock
-- The team, locked for a change of its keys, with the version of its `team` event stream.
SELECT t.id, t.badge_key,
       (SELECT coalesce(max(e.stream_version), 0) FROM events e
        WHERE e.stream_id = t.id AND e.stream_type = 'team'
          AND event_retention_kind(e.stream_type, e.event_type) = 'keep')::int AS version
FROM teams t WHERE t.id = %(team_id)s::uuid
FOR UPDATE;

-- name: team_ping_key_set
UPDATE teams SET ping_key_hash = %(ping_key_hash)s::bytea WHERE id = %(team_id)s::uuid;

-- name: team_badge_key_set
UPDATE teams SET badge_key = %(badge_key)s::text WHERE id = %(team_id)s::uuid;

-- name: team_by_ping_key
SELECT id FROM teams WHERE ping_key_hash = %(ping_key_hash)s::bytea;

-- name: team_by_badge_key
SELECT id FROM teams WHERE badge_key = %(badge_key)s::text;
