"""Run by tests/e2e/test_hc_clients.py with the Python of the ``healthchecks-io`` environment
(tests/clients/venvs.py), never ours: the package's documented flows against a running
cronledger. Prints one JSON object of what each step saw; a step that raises is recorded as
``{"error": "<ExceptionClass>: <message>"}`` so that the test names the step that failed.

Environment: ``CL_BASE`` (the server), ``CL_WRITE`` / ``CL_READ`` (API keys), ``CL_PING_KEY``.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from healthchecks_io import CheckCreate, Client

BASE = os.environ["CL_BASE"]
seen: dict[str, Any] = {}


def step(name: str, action: Callable[[], Any]) -> Any:
    try:
        value = action()
    except Exception as exc:  # noqa: BLE001 - recorded for the test to judge
        seen[name] = {"error": f"{type(exc).__name__}: {exc}"}
        return None
    seen[name] = value
    return value


def check(c: Any) -> dict[str, Any]:
    return {k: (str(v) if v is not None and not isinstance(v, (int, bool, str)) else v)
            for k, v in c.model_dump().items()}


def main() -> None:
    write = Client(api_key=os.environ["CL_WRITE"], ping_key=os.environ["CL_PING_KEY"],
                   api_url=f"{BASE}/api/", ping_url=f"{BASE}/ping/", api_version=3)
    read = Client(api_key=os.environ["CL_READ"], api_url=f"{BASE}/api/", api_version=3)
    created = step("create", lambda: check(write.create_check(CheckCreate(
        name="backup", tags="prod db", timeout=3600, grace=60))))
    uuid = created["uuid"]
    step("upsert", lambda: check(write.create_check(CheckCreate(
        name="backup", tags="prod db", timeout=3600, grace=120, unique=["name"]))))
    step("same_name", lambda: check(write.create_check(CheckCreate(name="backup",
                                                                    timeout=600))))
    step("list", lambda: [check(c) for c in write.get_checks()])
    step("list_tagged", lambda: [check(c) for c in write.get_checks(tags=["prod", "db"])])
    step("get", lambda: check(write.get_check(uuid)))
    step("update", lambda: check(write.update_check(uuid, CheckCreate(
        name="backup", tags="prod db", schedule="0 3 * * *", tz="Europe/Paris", grace=300))))
    token = created["ping_url"].rstrip("/").rsplit("/", 1)[1]
    step("ping_start", lambda: write.start_ping(uuid=token))
    step("ping_success", lambda: write.success_ping(uuid=token, data="backup ok"))
    step("ping_fail", lambda: write.fail_ping(uuid=token, data="disk full"))
    step("ping_exit", lambda: write.exit_code_ping(3, uuid=token))
    step("ping_slug", lambda: write.success_ping(slug="backup"))
    step("pings", lambda: [check(p) for p in write.get_check_pings(uuid)])
    step("flips", lambda: [check(f) for f in write.get_check_flips(uuid)])
    step("pause", lambda: check(write.pause_check(uuid)))
    step("read_list", lambda: [check(c) for c in read.get_checks()])
    unique = next((c["unique_key"] for c in seen["read_list"] or []
                   if c["name"] == "backup" and c["status"] == "paused"), None)
    step("read_get", lambda: check(read.get_check(unique)))
    step("read_pings", lambda: "allowed" if read.get_check_pings(uuid) is not None else None)
    if isinstance(seen["read_pings"], dict) and "HCAPIAuthError" in seen["read_pings"]["error"]:
        seen["read_pings"] = "refused"
    step("read_badges", lambda: sorted(read.get_badges()))
    step("integrations", lambda: [i.model_dump() for i in write.get_integrations()])
    other = seen["same_name"]["uuid"]
    step("delete", lambda: check(write.delete_check(other)))
    step("after_delete", lambda: sorted(c["uuid"] for c in
                                        (check(x) for x in write.get_checks())))
    try:
        write.get_check(other)
        seen["get_deleted"] = "found"
    except Exception as exc:  # noqa: BLE001
        seen["get_deleted"] = type(exc).__name__
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main()
