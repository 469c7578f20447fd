"""Request and response bodies of the REST API (msgspec Structs, snake_case, RFC 3339 UTC),
one module per resource (``api.schemas.jobs`` for ``/v1/jobs`` …), what several share in
:mod:`api.schemas.common`.

Request fields carry the core's limits and defaults as msgspec ``Meta`` constraints and field
defaults, so that they appear in the OpenAPI document (see :mod:`api.openapi`) and out-of-range
input is a 422 before it reaches the core, which checks the same limits again (and what a schema
cannot say: schedules, zones, URLs, NUL characters). A limit whose violation the core reports
under a finer field path (``request.headers.<name>``, ``success_statuses``) is only described
(``extra_json_schema``).
"""

from __future__ import annotations

from api.schemas import (
    alerts,
    apikeys,
    channels,
    common,
    jobs,
    ledger,
    maintenance,
    monitors,
    reports,
    runs,
    schedules,
    secrets,
    statuspages,
)
from api.schemas import apply as apply_  # the module's name is a builtin's

MODULES = (common, jobs, runs, monitors, channels, secrets, apikeys, reports, schedules,
           maintenance, ledger, apply_, alerts, statuspages)
