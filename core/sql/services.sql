-- Statements of the background-service base (core/services/base.py, core/services/listen.py).

-- name: service_listen
-- A template, not a bound statement: LISTEN takes no parameter, so core/services/listen.py fills
-- {channel} with psycopg.sql.Identifier (quoted), never with string formatting.
LISTEN {channel}
