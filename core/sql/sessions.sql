-- Dashboard sessions and one-time sign-in links (core/sessions.py): open, find (with the
-- API key's team and scope, a revoked key ends its sessions; the several a browser holds),
-- end and prune sessions; issue
-- and redeem sign-in tokens; find or create the key a sign-in link signs in with.

-- name: session_insert
INSERT INTO ui_sessions (id_hash, key_id, created_at, expires_at)
VALUES (%(id_hash)s, %(key_id)s::uuid, %(now)s::timestamptz, %(expires_at)s::timestamptz);

-- name: session_find
SELECT k.id AS key_id, k.team_id, k.scope, s.expires_at
FROM ui_sessions s
JOIN api_keys k ON k.id = s.key_id AND k.revoked_at IS NULL
WHERE s.id_hash = %(id_hash)s AND s.expires_at > %(now)s::timestamptz;

-- name: session_find_held
-- The live sessions among several a browser holds (the dashboard's team switcher), with each
-- key's team and name.
SELECT s.id_hash, k.id AS key_id, k.team_id, k.scope, k.name AS key_name, t.name AS team_name
FROM ui_sessions s
JOIN api_keys k ON k.id = s.key_id AND k.revoked_at IS NULL
JOIN teams t ON t.id = k.team_id
WHERE s.id_hash = ANY(%(id_hashes)s::bytea[]) AND s.expires_at > %(now)s::timestamptz;

-- name: session_delete
DELETE FROM ui_sessions WHERE id_hash = %(id_hash)s;

-- name: session_prune
DELETE FROM ui_sessions WHERE expires_at <= %(now)s::timestamptz;

-- name: signin_token_insert
INSERT INTO ui_signin_tokens (token_hash, key_id, created_at, expires_at)
VALUES (%(token_hash)s, %(key_id)s::uuid, %(now)s::timestamptz, %(expires_at)s::timestamptz);

-- name: signin_token_redeem
-- Single use: the row is marked used in the statement that reads it.
UPDATE ui_signin_tokens t SET used_at = %(now)s::timestamptz
FROM api_keys k
WHERE t.token_hash = %(token_hash)s AND t.used_at IS NULL
  AND t.expires_at > %(now)s::timestamptz AND k.id = t.key_id AND k.revoked_at IS NULL
RETURNING t.key_id, k.team_id, k.scope;

-- name: signin_key_find
-- The team's active key named %(name)s (the sign-in link's key), newest first.
SELECT k.id FROM api_keys k JOIN teams t ON t.id = k.team_id
WHERE t.name = %(team)s AND k.name = %(name)s AND k.revoked_at IS NULL AND k.scope = 'write'
ORDER BY k.created_at DESC LIMIT 1;
