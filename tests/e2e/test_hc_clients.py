"""The published healthchecks client packages against a running ``cronledger serve``
(docs/healthchecks.md, *The client packages*): ``healthchecks-io`` (the API client),
``healthchecks-manager`` (start/done by check name, creating the check), and two ping helpers,
``healthchecks-wrapper`` and ``healthchecks-decorator``. Each is installed from PyPI with hashed
pins into an environment of its own (tests/clients/venvs.py), never beside our pins, and run
as a separate process (tests/clients/drive_*.py); what they see is checked here, and what the
server recorded is read through ``/v1``.

Failures that are the clients' own bugs are asserted as such, never worked around in the
server: ``healthchecks-io``'s ``get_check_flips`` expects a bare list (healthchecks answers
``{"flips": [...]}``), and ``healthchecks-manager`` returns the check's id where it means its
ping URL right after creating it (its first ``start`` cannot be sent; a later process finds the
check by name and pings it), and sends its default ``channels`` as a JSON list.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.crypto import new_key
from tests.clients import venvs
from tests.conftest import _create_database, _drop_database, with_dbname
from tests.processes import cronledger, free_port, run_cli, stop, wait_http

HERE = Path(__file__).resolve().parents[1] / "clients"


def _python(name: str) -> Path:
    try:
        return venvs.ensure(name)
    except venvs.VenvUnavailable as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"the {name} client environment cannot be made here: {exc}")


def _drive(name: str, script: str, env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run([str(_python(name)), str(HERE / script), *args],
                          env={"PATH": os.environ.get("PATH", ""), **env},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def server(server_dsn: str, template_db: str,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """``cronledger serve`` with a secret key (ping URLs kept) on a database of its own:
    ``{"base", "write", "read", "ping_key"}``."""
    name = f"cronledger_t_{uuid.uuid4().hex[:12]}"
    _create_database(server_dsn, name, template_db)
    env = {"DATABASE_URL": with_dbname(server_dsn, name), "CRONLEDGER_PORT": str(free_port()),
           "CRONLEDGER_SECRET_KEY": new_key()}
    base = f"http://127.0.0.1:{env['CRONLEDGER_PORT']}"
    process = cronledger("serve", env=env,
                         log=tmp_path_factory.mktemp("hc-clients") / "serve.log")
    try:
        wait_http(f"{base}/readyz", 60)
        write = run_cli("apikey", "create", "--team", "clients", env=env).strip()
        read = run_cli("apikey", "create", "--team", "clients", "--scope", "read",
                       env=env).strip()
        r = httpx.post(f"{base}/v1/team/ping-key", headers={"Authorization": f"Bearer {write}"})
        assert r.status_code == 200, r.text
        yield {"base": base, "write": write, "read": read, "ping_key": r.json()["ping_key"]}
    finally:
        stop(process)
        _drop_database(server_dsn, name)


def _v1(server: dict[str, str], path: str) -> Any:
    r = httpx.get(f"{server['base']}{path}",
                  headers={"Authorization": f"Bearer {server['write']}"})
    assert r.status_code == 200, r.text
    return r.json()


def test_healthchecks_io_client(server: dict[str, str]) -> None:
    seen = _drive("healthchecks-io", "drive_healthchecks_io.py", {
        "CL_BASE": server["base"], "CL_WRITE": server["write"], "CL_READ": server["read"],
        "CL_PING_KEY": server["ping_key"]})
    created = seen["create"]
    assert created["name"] == "backup" and created["timeout"] == 3600
    assert created["ping_url"].startswith(f"{server['base']}/ping/")
    assert seen["upsert"]["uuid"] == created["uuid"] and seen["upsert"]["grace"] == 120
    # a name in use without unique: a second check (healthchecks' names are labels)
    assert seen["same_name"]["uuid"] != created["uuid"]
    assert seen["same_name"]["slug"] == "backup-2"
    assert {c["uuid"] for c in seen["list"]} == {created["uuid"], seen["same_name"]["uuid"]}
    assert [c["uuid"] for c in seen["list_tagged"]] == [created["uuid"]]
    # the ping URL read again, as after a restart
    assert seen["get"]["ping_url"] == created["ping_url"]
    # a cron schedule now: no timeout (the client's Check has no schedule field)
    assert seen["update"]["timeout"] is None and seen["update"]["grace"] == 300
    assert _v1(server, f"/v1/monitors/{created['uuid']}")["schedule"] == "0 3 * * *"
    for name in ("ping_start", "ping_success", "ping_fail", "ping_exit", "ping_slug"):
        assert seen[name] == [True, "OK"], (name, seen[name])
    pings = seen["pings"]
    assert [p["type"] for p in pings] == ["success", "fail", "fail", "success", "start"]
    assert [p["number_of_pings"] for p in pings] == [5, 4, 3, 2, 1]
    assert pings[3]["duration"] is not None  # the success after the start
    # the client's own bug: it iterates the answer as a bare list
    assert "error" in seen["flips"] and "TypeError" in seen["flips"]["error"]
    assert seen["pause"]["status"] == "paused"
    # read key: unique_key instead of the uuid and URLs; pings refused
    [read_check] = [c for c in seen["read_list"] if c["status"] == "paused"]
    assert read_check["uuid"] is None and read_check["ping_url"] is None
    assert len(read_check["unique_key"]) == 40
    assert seen["read_get"]["unique_key"] == read_check["unique_key"]
    assert seen["read_pings"] == "refused"
    assert seen["read_badges"] == ["*", "db", "prod"]
    assert seen["integrations"] == []
    assert seen["delete"]["uuid"] == seen["same_name"]["uuid"]
    assert seen["after_delete"] == [created["uuid"]]
    assert seen["get_deleted"] == "CheckNotFoundError"
    # what the server recorded: the bodies sent with the pings
    pings_v1 = _v1(server, f"/v1/monitors/{created['uuid']}/pings")["items"]
    assert {p["body"] for p in pings_v1} >= {"backup ok", "disk full"}


def test_healthchecks_manager_finds_its_check_by_name(server: dict[str, str]) -> None:
    env = {"CL_BASE": server["base"], "CL_WRITE": server["write"]}
    first = _drive("healthchecks-manager", "drive_manager.py", env, "first")
    # its own bug: after creating the check it pings its id instead of its URL
    assert "MissingSchema" in first["start"] or "Invalid URL" in first["start"], first
    second = _drive("healthchecks-manager", "drive_manager.py", env, "second")
    assert (second["start"], second["done"]) == ("sent", "sent")
    assert second["endpoint"].startswith(f"{server['base']}/ping/")
    monitors = [m for m in _v1(server, "/v1/monitors")["items"]
                if m["name"] == "nightly import"]
    assert len(monitors) == 1  # found by name, never created twice
    assert monitors[0]["ping_url"] == second["endpoint"]
    kinds = [p["kind"] for p in _v1(server, f"/v1/monitors/{monitors[0]['id']}/pings")["items"]]
    assert kinds == ["success", "start"]


def test_ping_helpers(server: dict[str, str]) -> None:
    urls = {}
    for name in ("wrapped job", "decorated job"):
        r = httpx.post(f"{server['base']}/api/v3/checks/", json={"name": name, "timeout": 60},
                       headers={"X-Api-Key": server["write"]})
        assert r.status_code == 201, r.text
        urls[name] = r.json()
    seen = _drive("ping-helpers", "drive_ping_helpers.py", {
        "CL_WRAPPER_URL": urls["wrapped job"]["ping_url"],
        "CL_DECORATOR_URL": urls["decorated job"]["ping_url"]})
    assert seen == {"wrapper_ok": "ran", "wrapper_fail": "raised", "decorator_ok": "done",
                    "decorator_fail": "raised"}
    wrapped = _v1(server, f"/v1/monitors/{urls['wrapped job']['uuid']}/pings")["items"]
    assert [p["kind"] for p in wrapped] == ["fail", "start", "success", "start"]
    assert "RuntimeError: the job broke" in wrapped[0]["body"]  # the traceback it posts
    decorated = _v1(server, f"/v1/monitors/{urls['decorated job']['uuid']}/pings")["items"]
    assert [p["kind"] for p in decorated] == ["fail", "success", "start"]
