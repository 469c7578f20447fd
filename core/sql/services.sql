-- Statements of the background-service machinery (core/services/): LISTEN and the probe.

-- name: service_listen
-- A template, not a bound statement: LISTEN takes no parameter, so core/services/listen.py fills
-- {channel} with psycopg.sql.Identifier (quoted), never with string formatting.
LISTEN {channel}

-- name: database_probe
-- Is the database answering? (the start-up wait in core/services/outage.py and the heartbeat in
-- core/services/health.py)
SELECT 1
