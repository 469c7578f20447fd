"""Migrations round-trip, named constraints, and the append-only event log."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import psycopg
import pytest

from core.migrate import downgrade, head_revision, upgrade

# Through the suite's session fixture, as the README's `uv run pytest` migrates: .ci/run runs
# it again on the embedded server from a 0700 clone as root.
pytestmark = pytest.mark.dbserver

TABLES = {"teams", "api_keys", "events", "jobs", "due_jobs", "runs", "run_attempts",
          "secrets", "job_signing_secrets", "channels", "notifications", "alert_states",
          "monitors", "monitor_ping_bodies"}


def _tables(dsn: str) -> set[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    return {r[0] for r in rows} - {"alembic_version"}


def test_upgrade_downgrade_upgrade(fresh_dsn: str) -> None:
    assert _tables(fresh_dsn) >= TABLES
    downgrade(fresh_dsn, "base")
    assert _tables(fresh_dsn) == set()
    upgrade(fresh_dsn)
    assert _tables(fresh_dsn) >= TABLES
    with psycopg.connect(fresh_dsn) as conn:
        (version,) = conn.execute("SELECT version_num FROM alembic_version").fetchone()
    assert version == head_revision()


def test_every_constraint_is_named_by_us(fresh_dsn: str) -> None:
    with psycopg.connect(fresh_dsn) as conn:
        names = [r[0] for r in conn.execute(
            "SELECT conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace "
            "WHERE n.nspname = 'public'").fetchall()]
    assert names
    # PostgreSQL's generated names end in _fkey/_pkey/_key/_check too, but never with a digit
    # suffix, and ours all start with their table's name (every table, later migrations' too).
    tables = _tables(fresh_dsn) | {"alembic_version"}
    assert all(any(n.startswith(t + "_") for t in tables) for n in names), names


def _insert_event(conn: psycopg.Connection) -> None:
    conn.execute(
        "INSERT INTO teams (id, name) VALUES (%s, %s)", (team := uuid.uuid4(), str(team)))
    conn.execute(
        "INSERT INTO events (stream_type, stream_id, stream_version, event_type, team_id, "
        "occurred_at) VALUES ('job', %s, 1, 'job.created', %s, %s)",
        (uuid.uuid4(), team, datetime.now(UTC)))


@pytest.mark.parametrize("statement", [
    "UPDATE events SET event_type = 'x'",
    "DELETE FROM events",
    "TRUNCATE events",
])
def test_events_are_append_only(fresh_dsn: str, statement: str) -> None:
    with psycopg.connect(fresh_dsn) as conn:
        _insert_event(conn)
        conn.commit()
        with pytest.raises(psycopg.errors.RestrictViolation, match="append-only"):
            conn.execute(statement)
        conn.rollback()
        (count,) = conn.execute("SELECT count(*) FROM events").fetchone()
    assert count == 1


def test_event_records_its_transaction_id(fresh_dsn: str) -> None:
    with psycopg.connect(fresh_dsn) as conn:
        _insert_event(conn)
        (tx, current) = conn.execute(
            "SELECT tx_id, pg_current_xact_id() FROM events").fetchone()
    assert tx == current
