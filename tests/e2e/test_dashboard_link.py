"""``cronledger serve`` with the embedded database prints a one-time sign-in link to the
dashboard once it is ready (docs/dashboard-code.md)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import httpx

from tests.e2e.test_embedded import REPO, cronledger_cmd, scratch  # noqa: F401 - fixture
from tests.helpers import eventually
from tests.processes import free_port, stop

LINK = re.compile(r"(http://127\.0\.0\.1:\d+/ui/signin\?token=[A-Za-z0-9_-]+)")


async def test_serve_prints_a_sign_in_link_that_works_once(scratch: Path) -> None:  # noqa: F811
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"} | {
        "CRONLEDGER_DATA_DIR": str(scratch / "data"),
        "CRONLEDGER_EMBEDDED_ROOT_DIR": str(scratch / "base"), "CRONLEDGER_PORT": str(port)}
    log = scratch / "serve.log"
    with open(log, "wb") as out:
        server = subprocess.Popen([*cronledger_cmd(), "serve"], cwd=REPO, env=env, stdout=out,
                                  stderr=subprocess.STDOUT)
    try:
        def link() -> str | None:
            found = LINK.search(log.read_text(errors="replace"))
            return found.group(1) if found else None

        url = await eventually(link, timeout=120, what="the sign-in link on stdout")
        assert f":{port}/" in url
        async with httpx.AsyncClient() as client:
            first = await client.get(url)
            assert first.status_code == 303 and first.headers["location"] == "/"
            overview = await client.get(f"http://127.0.0.1:{port}/")
            assert overview.status_code == 200 and "Overview" in overview.text
        async with httpx.AsyncClient() as other:
            again = await other.get(url)
            assert again.status_code == 401  # single use
            assert "cronledger_session" not in again.cookies
    finally:
        assert stop(server, signal.SIGTERM) == 0
    assert log.read_text(errors="replace").count("/ui/signin?token=") == 1
