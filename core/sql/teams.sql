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
