"""A libpq DSN with several hosts and ``target_session_attrs`` works for every connection
cronledger opens: the migrations (alembic), the pools, the ping pool, LISTEN, the API and the
CLI, whether the servers listen on TCP or on a Unix socket (the embedded one). The first host
of each DSN here is dead, so each connection has to go on to the next host as libpq does.
(The failover itself, with a real standby, is tests/e2e/test_failover.py.)"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from core.db import open_pool
from core.migrate import current_revision, head_revision, upgrade
from core.monitors.ping import open_ping_pool
from core.services.listen import listen
from tests.conftest import _create_database, _drop_database, with_dbname
from tests.helpers import eventually
from tests.servers import dead_host, free_port

ROOT = Path(__file__).resolve().parents[2]


def multi_host(dsn: str, tmp_path: Path, form: str) -> str:
    """``dsn`` with a dead host before its own, as a URI or as key=value, read-write only."""
    params = conninfo_to_dict(dsn)
    dead, dead_port = dead_host(dsn, tmp_path)
    host, port = params.pop("host", None) or "localhost", params.pop("port", None) or "5432"
    hosts, ports = f"{dead},{host}", f"{dead_port},{port}"
    if form == "keyvalue":
        return make_conninfo("", **params, host=hosts, port=ports,
                             target_session_attrs="read-write")
    user = params.pop("user", "")
    dbname = params.pop("dbname", "")
    query = "&".join(f"{k}={v}" for k, v in params.items())
    if host.startswith("/"):  # sockets travel in the query string (libpq's URI rules)
        return (f"postgresql://{user}@/{dbname}?host={hosts}&port={ports}"
                f"&target_session_attrs=read-write{'&' + query if query else ''}")
    return (f"postgresql://{user}@{dead}:{dead_port},{host}:{port}/{dbname}"
            f"?target_session_attrs=read-write{'&' + query if query else ''}")


@pytest.fixture(params=["uri", "keyvalue"])
def multi_dsn(request: pytest.FixtureRequest, server_dsn: str, tmp_path: Path):
    name = f"cronledger_mh_{uuid.uuid4().hex[:10]}"
    _create_database(server_dsn, name)
    yield multi_host(with_dbname(server_dsn, name), tmp_path, request.param)
    _drop_database(server_dsn, name)


async def test_every_connection_accepts_a_multi_host_dsn(multi_dsn: str) -> None:
    upgrade(multi_dsn)  # alembic: no SQLAlchemy URL could hold two ports
    pool = await open_pool(multi_dsn, min_size=1, max_size=2)
    pings = await open_ping_pool(multi_dsn, size=1)
    wake = asyncio.Event()
    listening = asyncio.Event()
    task = asyncio.create_task(listen(multi_dsn, "cronledger_test_mh", wake, "test",
                                      listening.set))
    try:
        async with pool.connection() as conn:
            assert await current_revision(conn) == head_revision()
        async with pings.connection() as conn:
            assert (await (await conn.execute("SELECT 1")).fetchone()) == (1,)
        await eventually(listening.is_set, what="LISTEN on the second host")
        wake.clear()
        async with pool.connection() as conn:
            await conn.execute("NOTIFY cronledger_test_mh")
            await conn.commit()
        await eventually(wake.is_set, what="the NOTIFY through the multi-host LISTEN")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await pings.close()
        await pool.close()


def test_the_cli_accepts_a_multi_host_dsn(multi_dsn: str) -> None:
    env = {**os.environ, "DATABASE_URL": multi_dsn}
    run = lambda *args: subprocess.run(  # noqa: E731
        [sys.executable, "-m", "api.cli", *args], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=120)
    migrated = run("migrate")
    assert migrated.returncode == 0, migrated.stderr
    key = run("apikey", "create", "--team", "multihost")
    assert key.returncode == 0 and key.stdout.startswith("clk_"), key.stderr
    printed = run("db-url")
    assert printed.returncode == 0 and printed.stdout.strip() == multi_dsn
    with psycopg.connect(printed.stdout.strip()) as conn:  # as psql "$(cronledger db-url)"
        assert conn.execute("SELECT count(*) FROM api_keys").fetchone() == (1,)


def test_a_dsn_libpq_rejects_is_exit_2_naming_the_variable() -> None:
    for variable in ("DATABASE_URL", "CRONLEDGER_LISTEN_DATABASE_URL"):
        env = {**os.environ, "DATABASE_URL": os.environ.get("DATABASE_URL", "host=/tmp"),
               variable: "postgresql://u:s3cr3t@h1,h2/db?target_session_attrs=bogus"}
        for command in (["migrate"], ["serve", "--port", str(free_port())], ["db-url"],
                        ["export", "--team", "x"]):
            done = subprocess.run([sys.executable, "-m", "api.cli", *command], cwd=ROOT,
                                  env=env, capture_output=True, text=True, timeout=60)
            assert done.returncode == 2, (command, done.stderr)
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith(f"cronledger: {variable} "), lines
            assert "target_session_attrs" in lines[0] and "s3cr3t" not in done.stderr


def test_db_url_prints_what_libpq_reads() -> None:
    """A SQLAlchemy-style scheme in DATABASE_URL is printed without its driver suffix, so
    ``psql "$(cronledger db-url)"`` connects (libpq does not know ``postgresql+psycopg``)."""
    dsn = "postgresql+psycopg://u@h1:5432,h2:5433/db?target_session_attrs=read-write"
    done = subprocess.run([sys.executable, "-m", "api.cli", "db-url"], cwd=ROOT,
                          env={**os.environ, "DATABASE_URL": dsn}, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == dsn.replace("postgresql+psycopg://", "postgresql://")


def test_migrate_against_no_server_is_one_line() -> None:
    """``cronledger migrate`` with every host down: exit 1 and one line naming the hosts."""
    dsn = f"postgresql://u@127.0.0.1:{free_port()},127.0.0.1:{free_port()}/db?connect_timeout=2"
    done = subprocess.run([sys.executable, "-m", "api.cli", "migrate"], cwd=ROOT,
                          env={**os.environ, "DATABASE_URL": dsn}, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cronledger: PostgreSQL at 127.0.0.1:"), lines
    assert "Traceback" not in done.stderr
