-- Statements of the embedded PostgreSQL (core/embedded/server.py), run as the superuser on the
-- cluster's `postgres` database right after a start.

-- name: database_exists
SELECT 1 FROM pg_database WHERE datname = %(name)s;

-- name: database_create
-- A template: {name} is filled with psycopg.sql.Identifier (an identifier cannot be a bound
-- parameter), i.e. sql.SQL(Q["database_create"]).format(name=sql.Identifier(name)).
CREATE DATABASE {name};
