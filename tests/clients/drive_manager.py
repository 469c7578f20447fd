"""Run by tests/e2e/test_hc_clients.py with the Python of the ``healthchecks-manager``
environment: its documented flow (``start`` / ``done`` / ``fail`` by check name, creating the
check when the project has none of that name), as two processes would run it, the second
finding the check by listing. Prints a JSON object of what each step saw.

Environment: ``CL_BASE``, ``CL_WRITE``; argv[1]: ``first`` or ``second``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from healthchecks_manager import healthchecks_api_wrapper
from healthchecks_manager import manager as healthchecks_manager

healthchecks_api_wrapper.API_URL_BASE = f"{os.environ['CL_BASE']}/api/v1"
healthchecks_api_wrapper.API_key = os.environ["CL_WRITE"]
# The package's default channels is the list ["*"], which it sends as a JSON list: healthchecks
# refuses a list there too (its Spec types channels as a string). Its own bug: give the string.
PARAMS = {"timeout": 3600, "grace": 60, "channels": "*"}
seen: dict[str, Any] = {}


def main(which: str) -> None:
    for name in ("start", "done"):
        try:
            getattr(healthchecks_manager, name)("nightly import", dict(PARAMS))
            seen[name] = "sent"
        except Exception as exc:  # noqa: BLE001 - recorded for the test to judge
            seen[name] = f"{type(exc).__name__}: {exc}"
    seen["endpoint"] = healthchecks_manager.cache.get("nightly import")
    seen["which"] = which
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
