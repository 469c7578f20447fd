-- Notification channels (core/channels/): the `channels` rows, their reads, soft delete and
-- the re-sealing of their secrets under the current key (key rotation).

-- name: channel_upsert
INSERT INTO channels (id, team_id, name, kind, config, key_id, sealed, version, created_at,
                      updated_at)
VALUES (%(id)s::uuid, %(team_id)s::uuid, %(name)s, %(kind)s, %(config)s::jsonb, %(key_id)s,
        %(sealed)s::bytea, %(version)s::int, %(created_at)s::timestamptz,
        %(updated_at)s::timestamptz)
ON CONFLICT ON CONSTRAINT channels_pkey DO UPDATE SET
    name = excluded.name, config = excluded.config, key_id = excluded.key_id,
    sealed = excluded.sealed, version = excluded.version, updated_at = excluded.updated_at;

-- name: channel_lock
SELECT id, team_id, name, kind, config, key_id, sealed, version, created_at, updated_at
FROM channels
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND deleted_at IS NULL
FOR UPDATE;

-- name: channel_get
SELECT id, team_id, name, kind, config, key_id, sealed, version, created_at, updated_at
FROM channels
WHERE id = %(id)s::uuid AND team_id = %(team_id)s::uuid AND deleted_at IS NULL;

-- name: channel_list
-- Keyset pagination on (created_at, id).
SELECT id, team_id, name, kind, config, version, created_at, updated_at
FROM channels
WHERE team_id = %(team_id)s::uuid AND deleted_at IS NULL
  AND (%(after_created)s::timestamptz IS NULL
       OR (created_at, id) > (%(after_created)s::timestamptz, %(after_id)s::uuid))
ORDER BY created_at, id
LIMIT %(limit)s::int;

-- name: channel_delete
-- Soft delete: queued notifications keep their foreign key; the sealed secrets are dropped.
UPDATE channels SET deleted_at = %(now)s::timestamptz, updated_at = %(now)s::timestamptz,
                    key_id = NULL, sealed = NULL, version = version + 1
WHERE id = %(id)s::uuid;

-- name: channel_existing
SELECT id FROM channels
WHERE team_id = %(team_id)s::uuid AND id = ANY(%(ids)s::uuid[]) AND deleted_at IS NULL;

-- name: channel_names
-- The names of some of the team's channels, deleted ones too (a job or monitor may still list
-- one): what a page shows for the ids it lists.
SELECT id, name, kind, deleted_at IS NULL AS live
FROM channels
WHERE team_id = %(team_id)s::uuid AND id = ANY(%(ids)s::uuid[]);

-- name: channel_by_names
-- The team's live channels of some names (names are unique in a team): a form naming channels
-- beyond the ones it lists.
SELECT id, name
FROM channels
WHERE team_id = %(team_id)s::uuid AND deleted_at IS NULL AND name = ANY(%(names)s::text[]);

-- name: channel_rotate_batch
-- Channels whose secrets are sealed under another key than the current one (key rotation).
SELECT id, team_id, key_id, sealed FROM channels
WHERE key_id IS NOT NULL AND key_id <> %(current)s AND id > %(after)s::uuid
ORDER BY id
LIMIT %(limit)s::int
FOR UPDATE;

-- name: channel_reseal_many
UPDATE channels c SET key_id = r.key_id, sealed = r.sealed
FROM unnest(%(ids)s::uuid[], %(key_ids)s::text[], %(sealed)s::bytea[]) AS r(id, key_id, sealed)
WHERE c.id = r.id;
