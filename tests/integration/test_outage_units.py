"""core.services.outage: which failures mean "the database is away" (real driver errors), the
start-up wait's backoff and log lines, the connect timeout, and the edge-triggered outage log."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import psycopg
import pytest
import sqlalchemy.exc
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import PoolTimeout

from core.clock import FrozenClock
from core.config import ConfigError, load_settings
from core.services.outage import (
    OutageLog,
    connect_dsn,
    describe,
    start_delays,
    unavailable_reason,
    wait_for_database,
)
from tests.dbproxy import DbProxy
from tests.processes import free_port

log = logging.getLogger("cronledger.test")


def _error(dsn: str, query: str = "SELECT 1") -> psycopg.Error:
    with (pytest.raises(psycopg.Error) as caught,  # connecting may fail already
          psycopg.connect(dsn, connect_timeout=2, autocommit=True) as conn):
        conn.execute(query)
    return caught.value


def _refused() -> psycopg.Error:
    return _error(f"postgresql://postgres@127.0.0.1:{free_port()}/postgres")


def test_connection_failures_are_outages() -> None:
    assert "Connection refused" in (unavailable_reason(_refused()) or "")
    assert unavailable_reason(PoolTimeout("couldn't get a connection after 1.50 sec"))


def test_too_many_clients_is_an_outage(server_dsn: str) -> None:
    with DbProxy(server_dsn, mode="full") as proxy:
        exc = _error(proxy.dsn)
    assert "too many clients" in (unavailable_reason(exc) or "")


def test_a_terminated_session_is_an_outage(server_dsn: str) -> None:
    with psycopg.connect(server_dsn, autocommit=True) as victim, \
            psycopg.connect(server_dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (victim.info.backend_pid,))
        with pytest.raises(psycopg.OperationalError) as caught:
            victim.execute("SELECT 1")
    assert unavailable_reason(caught.value)


def test_configuration_and_query_errors_are_not_outages(server_dsn: str) -> None:
    assert unavailable_reason(_error(make_conninfo(server_dsn, user="no_such_role_x"))) is None
    assert unavailable_reason(_error(make_conninfo(server_dsn, dbname="no_such_db_x"))) is None
    assert unavailable_reason(_error(server_dsn, "SELECT * FROM no_such_table")) is None
    assert unavailable_reason(_error(server_dsn, "SELECT 1/0")) is None
    canceled = _error(server_dsn, "SET statement_timeout = 10; SELECT pg_sleep(1)")
    assert isinstance(canceled, psycopg.errors.QueryCanceled)  # an OperationalError
    assert unavailable_reason(canceled) is None
    assert unavailable_reason(ValueError("nope")) is None


def test_a_wrapped_driver_error_is_looked_through() -> None:
    """Alembic runs migrations through SQLAlchemy, which wraps the driver's error."""
    wrapped = sqlalchemy.exc.OperationalError("SELECT 1", {}, _refused())
    assert unavailable_reason(wrapped)


def test_start_delays_double_up_to_five_seconds() -> None:
    delays = start_delays()
    assert [delays(n) for n in range(1, 8)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0, 5.0]
    assert delays(10_000) == 5.0


def test_the_start_up_wait_logs_once_backs_off_and_returns(
        caplog: pytest.LogCaptureFixture) -> None:
    dsn = "postgresql://app:secret@db.example:6543/cron"
    failures = [_refused(), _error_with_text("too many clients"), None]
    slept: list[float] = []

    def action() -> int:
        failure = failures.pop(0)
        if failure is not None:
            raise failure
        return 42

    caplog.set_level(logging.INFO, logger="cronledger")
    assert wait_for_database(action, dsn, log, sleep=slept.append) == 42
    assert slept == [0.5, 1.0]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("waiting for PostgreSQL at db.example:6543/cron: ")
    assert "Connection refused" in warnings[0] and warnings[0].endswith("retrying in 0.5 s")
    assert "secret" not in caplog.text
    assert any("is reachable after" in r.getMessage() for r in caplog.records)


def _error_with_text(phrase: str) -> psycopg.OperationalError:
    return psycopg.OperationalError(f'connection failed: connection to server at "10.0.0.1", '
                                    f'port 5432 failed: FATAL:  sorry, {phrase} already')


def test_the_start_up_wait_does_not_retry_a_configuration_error(server_dsn: str) -> None:
    slept: list[float] = []
    bad_role = make_conninfo(server_dsn, user="no_such_role_x")

    def action() -> None:
        psycopg.connect(bad_role, connect_timeout=2).close()

    with pytest.raises(psycopg.OperationalError, match="no_such_role_x"):
        wait_for_database(action, bad_role, log, sleep=slept.append)
    assert slept == []


def test_connect_timeout_is_added_unless_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGCONNECT_TIMEOUT", raising=False)
    assert conninfo_to_dict(connect_dsn("postgresql://u@h/db"))["connect_timeout"] == "2"
    assert conninfo_to_dict(connect_dsn("postgresql+psycopg://u@h/db"))["host"] == "h"
    kept = connect_dsn("postgresql://u@h/db?connect_timeout=9")
    assert conninfo_to_dict(kept)["connect_timeout"] == "9"
    monkeypatch.setenv("PGCONNECT_TIMEOUT", "7")
    assert "connect_timeout" not in conninfo_to_dict(connect_dsn("postgresql://u@h/db"))
    assert describe("host=/run/pg port=5433 dbname=x password=p") == "/run/pg:5433/x"


def test_the_outage_log_says_it_once_and_when_it_is_over(
        caplog: pytest.LogCaptureFixture) -> None:
    clock = FrozenClock(datetime(2026, 12, 1, 10, 0, tzinfo=UTC))
    outage = OutageLog(log, clock)
    caplog.set_level(logging.INFO, logger="cronledger")
    outage.up()  # not in an outage: nothing to say
    for _ in range(3):
        outage.down("connection refused")
    clock.advance(4.5)
    assert outage.active
    outage.up()
    outage.up()
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert lines == [
        ("WARNING", "database unreachable: connection refused; answering 503 with Retry-After "
                    "until it is back"),
        ("INFO", "database reachable again after 4.5 s; 3 requests were answered 503")]
    assert not outage.active


def test_db_wait_setting() -> None:
    assert load_settings({}).db_wait_seconds == 1.5
    assert load_settings({"CRONLEDGER_DB_WAIT_SECONDS": "0.5"}).db_wait_seconds == 0.5
    with pytest.raises(ConfigError, match="CRONLEDGER_DB_WAIT_SECONDS"):
        load_settings({"CRONLEDGER_DB_WAIT_SECONDS": "0"})
