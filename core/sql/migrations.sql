-- Statements of the schema migrations (core/migrate.py): the advisory lock and the current
-- revision; alembic itself writes alembic_version.

-- name: migration_lock
-- Session-level advisory lock: concurrent starts migrate one at a time.
SELECT pg_advisory_lock(%(key)s);

-- name: migration_unlock
SELECT pg_advisory_unlock(%(key)s);

-- name: migration_version
SELECT version_num FROM alembic_version;

-- name: migration_version_none
-- Before the first migration there is no alembic_version table.
SELECT NULL AS version_num;

-- name: migration_version_table_exists
SELECT to_regclass('alembic_version') IS NOT NULL AS present;
