"""Shared benchmark plumbing: a scratch database, cronledger processes, percentiles."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import make_conninfo

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) by nearest rank; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def peak_rss_mb(pid: int) -> float:
    """The peak resident set size (``VmHWM``) of process ``pid`` so far, in MB; 0 when gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


@contextlib.contextmanager
def scratch_database(admin_dsn: str, prefix: str = "cronledger_bench", *,
                     migrate: bool = True, keep: bool = False) -> Iterator[str]:
    """A new database (migrated to cronledger's schema unless ``migrate`` is false), dropped
    afterwards (unless ``keep``)."""
    from core.migrate import upgrade

    name = f"{prefix}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = make_conninfo(admin_dsn, dbname=name)
    try:
        if migrate:
            upgrade(dsn)
        yield dsn
    finally:
        if not keep:
            with psycopg.connect(admin_dsn, autocommit=True) as conn:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    sql.Identifier(name)))


def start_cronledger(args: Sequence[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    """Start ``cronledger ARGS`` with this interpreter, output appended to ``log``."""
    return subprocess.Popen(
        [sys.executable, "-m", "api.cli", *args], cwd=ROOT, env={**os.environ, **env},
        stdout=log.open("ab"), stderr=subprocess.STDOUT)


def stop_process(process: subprocess.Popen, timeout: float = 60) -> int:
    """SIGTERM, then wait (SIGKILL after ``timeout`` seconds)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()
