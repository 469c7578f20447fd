"""The ping statement's kept plan reaches ``monitors`` through its keys whatever the table's
size was when the plan was made (migration 0021): each PostgreSQL process keeps the plan of
``monitor_ping_batch`` for its life, and a plan made while the table had a few rows would
otherwise go on scanning it whole after it grew (autovacuum off, nothing analyzed)."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg
from psycopg.rows import tuple_row

from core.monitors.ping import PING_PARAMS, PING_STATEMENT, Ping, ping_batch_params
from core.tokens import token_hash
from tests.helpers import new_actor
from tests.monitor_helpers import add_monitor

T0 = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


def _scans(conn: psycopg.Connection, token: str) -> tuple[int, int]:
    """One ping in a transaction of its own; ``(sequential scans, index scans)`` of
    ``monitors`` it made."""
    params = ping_batch_params([(Ping(token, "success", "GET"), T0)])
    with conn.transaction():
        statuses = conn.execute(PING_STATEMENT, [params[n] for n in PING_PARAMS]).fetchall()
        assert [row[1] for row in statuses] == ["up"]
        [(seq, idx)] = conn.execute(
            "SELECT seq_scan, idx_scan FROM pg_stat_xact_user_tables "
            "WHERE relname = 'monitors'").fetchall()
    return seq, idx


async def test_the_kept_plan_probes_monitors_after_the_table_grew(fresh_pool, fresh_dsn) -> None:
    actor = await new_actor(fresh_pool)
    _, token = await add_monitor(fresh_pool, actor, T0, name="pinged")
    with psycopg.connect(fresh_dsn, autocommit=True, row_factory=tuple_row,
                         cursor_factory=psycopg.RawCursor) as conn:
        conn.execute("ALTER TABLE monitors SET (autovacuum_enabled = off)")
        for _ in range(8):  # past the five custom plans: the generic plan is kept
            _scans(conn, token)
        assert _scans(conn, token)[0] == 0
        # The table grows behind the kept plan's back (no ANALYZE, no DDL on monitors).
        conn.execute(
            "INSERT INTO monitors (id, team_id, name, status, methods, manual_resume,"
            " ping_token_hash, schedule, timezone, period_seconds, grace_seconds, version,"
            " channels, realert_every, created_at, updated_at)"
            " SELECT gen_random_uuid(), team_id, 'grown ' || n, 'new', 'any', false,"
            " sha256(('grown ' || n)::bytea), '1h', 'UTC', 3600, 60, 1, '{}', 1, now(), now()"
            " FROM monitors, generate_series(1, 20000) AS n WHERE ping_token_hash = $1",
            [token_hash(token)])
        seq, idx = _scans(conn, token)
    assert seq == 0 and idx > 0
