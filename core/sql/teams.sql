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
SELECT id, name, prefix, scope, created_at
FROM api_keys
WHERE team_id = %(team_id)s::uuid AND revoked_at IS NULL
ORDER BY created_at, id;

-- name: api_key_revoke
UPDATE api_keys SET revoked_at = %(now)s::timestamptz
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND revoked_at IS NULL
RETURNING id;
