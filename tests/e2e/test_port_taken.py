"""``serve`` / ``api`` on a port another program holds: one line naming the port and how to
choose another, at once - before PostgreSQL is started or waited for (it used to take 11 s of
starting the embedded server, then uvicorn's ``[Errno 98]``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT


@pytest.mark.parametrize("command", ["serve", "api"])
@pytest.mark.parametrize("database", ["embedded", "unreachable"])
def test_a_taken_port_is_one_clear_line_at_once(tmp_path: Path, command: str,
                                                database: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["CRONLEDGER_DATA_DIR"] = str(tmp_path / "data")
    if database == "unreachable":  # would be waited for, forever
        env["DATABASE_URL"] = f"postgresql://u@{tmp_path}/db?host={tmp_path}"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "api.cli", command, "--port", str(port)],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line == (f"cronledger: cannot listen on 127.0.0.1:{port}: port {port} is already in "
                    f"use by another program; choose another with --port N (or "
                    f"CRONLEDGER_PORT=N), e.g. --port {port + 1}")
    assert not (tmp_path / "data").exists()  # nothing was started or created
