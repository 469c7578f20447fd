"""Run by tests/e2e/test_hc_clients.py with the Python of the ping helpers' environment
(``healthchecks-wrapper``'s context manager, ``healthchecks-decorator``'s decorator): each
wraps a job that succeeds and one that fails, around a ping URL read from ``/api/v3``.

Environment: ``CL_WRAPPER_URL``, ``CL_DECORATOR_URL`` (ping URLs). Prints a JSON object.
"""

from __future__ import annotations

import json
import os
import sys

from healthchecks_decorator import healthcheck
from healthchecks_wrapper import HealthCheck

seen: dict[str, str] = {}


def main() -> None:
    wrapper = os.environ["CL_WRAPPER_URL"]
    with HealthCheck(wrapper):
        seen["wrapper_ok"] = "ran"
    try:
        with HealthCheck(wrapper):
            raise RuntimeError("the job broke")
    except RuntimeError:
        seen["wrapper_fail"] = "raised"

    @healthcheck(url=os.environ["CL_DECORATOR_URL"], send_start=True)
    def job() -> str:
        return "done"

    @healthcheck(url=os.environ["CL_DECORATOR_URL"])
    def broken() -> None:
        raise ValueError("bad input")

    seen["decorator_ok"] = job()
    try:
        broken()
    except ValueError:
        seen["decorator_fail"] = "raised"
    json.dump(seen, sys.stdout)


if __name__ == "__main__":
    main()
