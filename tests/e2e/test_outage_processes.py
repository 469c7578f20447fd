"""Real ``cronledger`` processes started while PostgreSQL is down, full or unreachable: they log
one waiting line, retry, and get going once the database answers (docs/operations.md,
"Database outages"). The database is behind a real TCP proxy (tests/dbproxy.py) on the port
the process was given."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from psycopg.conninfo import make_conninfo

from tests.dbproxy import DbProxy
from tests.processes import ROOT, cronledger, free_port, stop, wait_http


def _wait_for(log: Path, text: str, process: subprocess.Popen, timeout: float = 60.0) -> str:
    """The log's content once it contains ``text``; fails if the process exits first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        content = log.read_text() if log.exists() else ""
        if text in content:
            return content
        assert process.poll() is None, f"exited {process.returncode}:\n{content[-3000:]}"
        time.sleep(0.1)
    raise AssertionError(f"{text!r} not logged within {timeout} s:\n{content[-3000:]}")


@pytest.mark.parametrize(("command", "cut", "reason"), [
    ("worker", "refuse", "Connection refused"),
    ("api", "full", "too many clients"),
    ("serve", "blackhole", "timeout expired"),
])
def test_a_server_started_without_its_database_waits_for_it(
        fresh_dsn: str, tmp_path: Path, command: str, cut: str, reason: str) -> None:
    port = free_port()
    with DbProxy(fresh_dsn, port=port, mode=cut) as proxy:
        env = {"DATABASE_URL": proxy.dsn, "CRONLEDGER_PORT": str(free_port())}
        log = tmp_path / f"{command}.log"
        process = cronledger(command, env=env, log=log)
        try:
            waiting = _wait_for(log, "waiting for PostgreSQL at 127.0.0.1:", process)
            line = next(x for x in waiting.splitlines() if "waiting for PostgreSQL" in x)
            assert f"127.0.0.1:{port}/" in line and reason in line, line
            assert "retrying in" in line
            proxy.forward()
            if command == "worker":
                _wait_for(log, "started", process)
            else:
                wait_http(f"http://127.0.0.1:{env['CRONLEDGER_PORT']}/readyz", timeout=60)
            assert "is reachable after" in log.read_text()
        finally:
            code = stop(process)
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert "Traceback" not in text, text[-3000:]
    assert text.count("waiting for PostgreSQL") == 1, text[-3000:]


def test_a_server_refused_for_good_exits_with_one_line(server_dsn: str) -> None:
    """A wrong role (or password, or database name) is not waited for: waiting cannot fix it."""
    bad = make_conninfo(server_dsn, user="no_such_role_x")
    done = subprocess.run([sys.executable, "-m", "api.cli", "worker"], cwd=ROOT,
                          env={"PATH": "/usr/bin:/bin", "DATABASE_URL": bad},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "waiting for PostgreSQL" not in done.stderr
    assert 'role "no_such_role_x" does not exist' in done.stderr.splitlines()[-1]
