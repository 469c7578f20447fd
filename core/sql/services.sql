-- Statements of the background-service base (core/service.py, core/listen.py).

-- name: service_listen
-- A template, not a bound statement: LISTEN takes no parameter, so core/listen.py fills
-- {channel} with psycopg.sql.Identifier (quoted), never with string formatting.
LISTEN {channel}
