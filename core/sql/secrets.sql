-- Sealed secrets: team secrets (`${secrets.NAME}`) and job signing secrets: write, list,
-- delete, fetch at claim time, and re-seal under the current key (key rotation, key usage).

-- name: secret_upsert
-- Create or replace a team secret; version 1 means the name was new.
INSERT INTO secrets (id, team_id, name, key_id, nonce, ciphertext, version, created_at,
                     updated_at)
VALUES (%(id)s::uuid, %(team_id)s::uuid, %(name)s, %(key_id)s, %(nonce)s::bytea,
        %(ciphertext)s::bytea, 1, %(now)s::timestamptz, %(now)s::timestamptz)
ON CONFLICT ON CONSTRAINT secrets_team_name_key DO UPDATE SET
    key_id = excluded.key_id, nonce = excluded.nonce, ciphertext = excluded.ciphertext,
    version = secrets.version + 1, updated_at = excluded.updated_at
RETURNING id, name, version, created_at, updated_at;

-- name: secret_list
-- Names and dates only: values are write-only. Keyset pagination on name.
SELECT name, created_at, updated_at
FROM secrets
WHERE team_id = %(team_id)s::uuid
  AND (%(after)s::text IS NULL OR name > %(after)s::text)
ORDER BY name
LIMIT %(limit)s::int;

-- name: secret_delete
DELETE FROM secrets
WHERE team_id = %(team_id)s::uuid AND name = %(name)s
RETURNING id, version;

-- name: secret_fetch_sealed
-- At claim time: the sealed values the claimed jobs reference (missing ones are absent).
SELECT s.team_id, s.name, s.key_id, s.nonce, s.ciphertext
FROM secrets s
JOIN unnest(%(team_ids)s::uuid[], %(names)s::text[]) AS w(team_id, name)
  ON s.team_id = w.team_id AND s.name = w.name;

-- name: secret_rotate_batch
-- Rows not under the current key, in id order after the keyset; locked until re-sealed.
SELECT id, team_id, name, key_id, nonce, ciphertext
FROM secrets
WHERE key_id <> %(current)s AND id > %(after)s::uuid
ORDER BY id
LIMIT %(limit)s::int
FOR UPDATE;

-- name: secret_reseal_many
UPDATE secrets s SET key_id = n.key_id, nonce = n.nonce, ciphertext = n.ciphertext
FROM unnest(%(ids)s::uuid[], %(key_ids)s::text[], %(nonces)s::bytea[],
            %(ciphertexts)s::bytea[]) AS n(id, key_id, nonce, ciphertext)
WHERE s.id = n.id;

-- name: secret_key_usage
-- How many stored values each key id still encrypts (a key with no rows can be removed).
SELECT key_id, count(*)::int AS n
FROM (SELECT key_id FROM secrets UNION ALL SELECT key_id FROM job_signing_secrets
      UNION ALL SELECT key_id FROM monitor_ping_tokens) k
GROUP BY key_id
ORDER BY key_id;

-- name: job_signing_secret_upsert
INSERT INTO job_signing_secrets (job_id, team_id, key_id, nonce, ciphertext, updated_at)
VALUES (%(job_id)s::uuid, %(team_id)s::uuid, %(key_id)s, %(nonce)s::bytea,
        %(ciphertext)s::bytea, %(now)s::timestamptz)
ON CONFLICT ON CONSTRAINT job_signing_secrets_pkey DO UPDATE SET
    key_id = excluded.key_id, nonce = excluded.nonce, ciphertext = excluded.ciphertext,
    updated_at = excluded.updated_at;

-- name: job_signing_secret_delete
DELETE FROM job_signing_secrets WHERE job_id = %(job_id)s::uuid;

-- name: job_signing_secret_fetch_many
SELECT job_id, key_id, nonce, ciphertext
FROM job_signing_secrets
WHERE job_id = ANY(%(job_ids)s::uuid[]);

-- name: job_signing_secret_rotate_batch
SELECT job_id, team_id, key_id, nonce, ciphertext
FROM job_signing_secrets
WHERE key_id <> %(current)s AND job_id > %(after)s::uuid
ORDER BY job_id
LIMIT %(limit)s::int
FOR UPDATE;

-- name: job_signing_secret_reseal_many
UPDATE job_signing_secrets s SET key_id = n.key_id, nonce = n.nonce, ciphertext = n.ciphertext
FROM unnest(%(ids)s::uuid[], %(key_ids)s::text[], %(nonces)s::bytea[],
            %(ciphertexts)s::bytea[]) AS n(id, key_id, nonce, ciphertext)
WHERE s.job_id = n.id;
