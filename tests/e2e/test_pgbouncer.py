"""Behind a real PgBouncer in transaction pooling mode (docs/operations.md, "PgBouncer"): a
``cronledger serve`` whose pools go through it fires jobs to a sink and records pings, with its
LISTEN connections going direct."""

from __future__ import annotations

import asyncio
import os
import pwd
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from tests.helpers import eventually
from tests.processes import cronledger, free_port, run_cli, stop, wait_http
from tests.servers import server_address
from tests.sink import Sink

PGBOUNCER = Path("/usr/sbin/pgbouncer")


def _through(dsn: str, port: int) -> str:
    return make_conninfo(dsn, host="127.0.0.1", port=str(port))


@pytest.fixture
def pgbouncer(fresh_dsn: str, tmp_path: Path) -> Iterator[str]:
    """A PgBouncer in transaction mode in front of the test server; yields the DSN of the fresh
    test database through it."""
    if not PGBOUNCER.exists():
        message = "pgbouncer is not installed (apt-get install pgbouncer)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    server = conninfo_to_dict(fresh_dsn)
    user = server.get("user") or "postgres"
    port = free_port()
    (tmp_path / "users.txt").write_text(f'"{user}" ""\n')
    (tmp_path / "pgbouncer.ini").write_text(f"""
[databases]
* = host={server.get('host') or '127.0.0.1'} port={server.get('port') or 5432}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {tmp_path / 'users.txt'}
pool_mode = transaction
max_client_conn = 200
default_pool_size = 20
ignore_startup_parameters = extra_float_digits
""")
    tmp_path.chmod(0o755)
    for name in ("users.txt", "pgbouncer.ini"):
        (tmp_path / name).chmod(0o644)
    # PgBouncer refuses to run as root: it runs as a user that can reach the server, the
    # owner of its socket folder when it listens on a Unix socket only (the embedded server,
    # whose folder is 0700), else nobody.
    user_flag = ["-u", _server_user(fresh_dsn)] if os.geteuid() == 0 else []
    log = tmp_path / "pgbouncer.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([str(PGBOUNCER), *user_flag, str(tmp_path / "pgbouncer.ini")],
                                   stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_port(port, process, log)
        yield _through(fresh_dsn, port)
    finally:
        process.terminate()
        process.wait(10)


def _server_user(dsn: str) -> str:
    address = server_address(dsn)
    if address.is_unix and address.path:
        return pwd.getpwuid(os.stat(os.path.dirname(address.path)).st_uid).pw_name
    return "nobody"


def wait_port(port: int, process: subprocess.Popen, log: Path) -> None:
    import socket
    import time

    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"pgbouncer did not listen: {log.read_text()}")


async def test_dispatch_and_pings_through_pgbouncer_in_transaction_mode(
        pgbouncer: str, fresh_dsn: str, tmp_path: Path) -> None:
    env = {"DATABASE_URL": pgbouncer, "CRONLEDGER_LISTEN_DATABASE_URL": fresh_dsn,
           "CRONLEDGER_PORT": str(free_port()), "CRONLEDGER_DB_POOL_SIZE": "4"}
    key = run_cli("apikey", "create", "--team", "pooled", env=env).strip()
    base = f"http://127.0.0.1:{env['CRONLEDGER_PORT']}"
    log = tmp_path / "serve.log"
    server = cronledger("serve", env=env, log=log)
    try:
        await asyncio.to_thread(wait_http, f"{base}/readyz")
        async with Sink() as sink, httpx.AsyncClient(
                base_url=base, headers={"Authorization": f"Bearer {key}"}) as api:
            r = await api.post("/v1/jobs", json={
                "name": "every second", "schedule": "* * * * * *",
                "request": {"url": sink.url("/tick")}})
            assert r.status_code == 201, r.text
            r = await api.post("/v1/monitors", json={"name": "pooled", "schedule": "1m"})
            assert r.status_code == 201, r.text
            monitor = r.json()
            for i in range(12):  # more than psycopg's prepare threshold (5) per statement
                ping = await api.post(f"/ping/{monitor['ping_token']}", content=f"ping {i}")
                assert ping.status_code == 200, ping.text
            await sink.wait_for(8, timeout=30)
            pings = (await api.get(f"/v1/monitors/{monitor['id']}/pings")).json()["items"]
            assert len(pings) == 12

            async def projected() -> dict | None:
                dash = (await api.get("/v1/dashboard")).json()
                return dash if dash["runs_24h"]["succeeded"] >= 3 else None

            await eventually(projected, 20, what="the projector never applied the runs")
        slots = [h.headers["X-Cronledger-Scheduled-For"] for h in sink.hits]
        assert len(slots) == len(set(slots)), "a slot fired twice"
    finally:
        code = await asyncio.to_thread(stop, server)
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert "Traceback" not in text and "prepared statement" not in text, text[-3000:]
