"""Shared benchmark plumbing: a scratch database, cronledger processes, percentiles."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
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


def start_workers(dsn: str, ids: Sequence[str], logdir: Path, log_prefix: str,
                  env: dict[str, str] | None = None) -> list[subprocess.Popen]:
    """One ``cronledger worker`` per id in ``ids`` (its ``CRONLEDGER_WORKER_ID``) on ``dsn``,
    warnings only, each logging to ``logdir/<log_prefix>-<i>.log``."""
    return [start_cronledger(["worker"], {"DATABASE_URL": dsn, "CRONLEDGER_WORKER_ID": worker_id,
                                          "CRONLEDGER_LOG_LEVEL": "WARNING", **(env or {})},
                             logdir / f"{log_prefix}-{i}.log")
            for i, worker_id in enumerate(ids)]


async def workers_registered(dsn: str, ids: Sequence[str], timeout: float = 60) -> None:
    """Wait until every worker of ``ids`` has its row in the worker registry (it has started
    and will take its share of the next slot).

    Raises:
        TimeoutError: after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        while True:
            cur = await conn.execute("SELECT count(*) FROM workers WHERE worker_id = ANY(%s)",
                                     (list(ids),))
            if (await cur.fetchone())[0] == len(ids):  # type: ignore[index]
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"workers {', '.join(ids)} did not all start")
            await asyncio.sleep(0.1)


def stop_process(process: subprocess.Popen, timeout: float = 60) -> int:
    """SIGTERM, then wait (SIGKILL after ``timeout`` seconds)."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()
