"""Fixtures of the end-to-end tests that share one running server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest

from core.crypto import new_key
from tests.conftest import _create_database, _drop_database, with_dbname
from tests.processes import cronledger, free_port, run_cli, stop, wait_http


@pytest.fixture(scope="module")
def served(server_dsn: str, template_db: str,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """``cronledger serve`` with a secret key (ping URLs kept) on a database of its own, and a
    team with a write key and a ping key: ``{"base", "write", "ping_key"}``."""
    name = f"cronledger_t_{uuid.uuid4().hex[:12]}"
    _create_database(server_dsn, name, template_db)
    env = {"DATABASE_URL": with_dbname(server_dsn, name), "CRONLEDGER_PORT": str(free_port()),
           "CRONLEDGER_SECRET_KEY": new_key()}
    base = f"http://127.0.0.1:{env['CRONLEDGER_PORT']}"
    process = cronledger("serve", env=env, log=tmp_path_factory.mktemp("served") / "serve.log")
    try:
        wait_http(f"{base}/readyz", 60)
        write = run_cli("apikey", "create", "--team", "served", env=env).strip()
        r = httpx.post(f"{base}/v1/team/ping-key", headers={"Authorization": f"Bearer {write}"})
        assert r.status_code == 200, r.text
        yield {"base": base, "write": write, "ping_key": r.json()["ping_key"]}
    finally:
        stop(process)
        _drop_database(server_dsn, name)
