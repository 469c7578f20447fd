"""``/healthz`` (the process answers: 200 also while the database is away, since restarting the
process would not bring it back), ``/readyz`` (database reachable, migrations at head, the
workers reaching the database - this process's services, and the worker registry; 503 with
``Retry-After`` during an outage; a plain 503 problem when the check fails otherwise or the
migrations are not at head, mapped by :mod:`api.errors`), ``/metrics`` (Prometheus)."""

from __future__ import annotations

import hmac
from typing import Any

from litestar import Request, get
from litestar.response import Response

from core.errors import Unauthorized, Unavailable
from core.metrics import CONTENT_TYPE, render_metrics
from core.migrate import current_revision, head_revision
from core.runs.registry import workers_problem
from core.services.outage import unavailable_reason

# Prometheus' text format; Litestar appends the charset of text/* itself (once).
MEDIA_TYPE = CONTENT_TYPE.replace("; charset=utf-8", "")


@get("/healthz", summary="Liveness", tags=["health"], include_in_schema=True)
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@get("/readyz", summary="Readiness: database and migrations", tags=["health"])
async def readyz(request: Request[Any, Any, Any]) -> Response[dict[str, Any]]:
    state = request.app.state
    try:  # waits at most CRONLEDGER_DB_WAIT_SECONDS (the pool's timeout) for a connection
        async with state.pool.connection() as conn:
            revision = await current_revision(conn)
            live, workers = await workers_problem(conn, state.clock.now())
    except Exception as exc:  # noqa: BLE001 - any failure means not ready
        if unavailable_reason(exc) is not None:
            raise  # 503 with Retry-After, the outage logged once (api/errors.py)
        raise Unavailable(f"database check failed: {type(exc).__name__}") from None
    if revision != head_revision():
        raise Unavailable(f"migrations not at head (at {revision}, head {head_revision()})")
    # Ready never means "jobs are not firing": this process's own services (serve) first,
    # then the registry of every worker's heartbeat.
    services = state.services_health.problem if state.services_health is not None else None
    if services is not None or workers is not None:
        raise Unavailable(services or workers or "")
    return Response({"status": "ready", "migration": revision, "live_workers": live})


def check_metrics_token(request: Request[Any, Any, Any]) -> None:
    """With ``CRONLEDGER_METRICS_TOKEN`` set, require ``Authorization: Bearer <token>``
    (compared in constant time); unset, ``/metrics`` is public (docs/operations.md).

    Raises:
        Unauthorized: the token is set and the request does not present it.
    """
    token = request.app.state.settings.metrics_token
    if not token:
        return
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(
            given.strip().encode("latin-1", "replace"), token.encode()):
        raise Unauthorized("/metrics needs Authorization: Bearer <CRONLEDGER_METRICS_TOKEN>")


@get("/metrics", summary="Prometheus metrics (Bearer CRONLEDGER_METRICS_TOKEN when it is set)",
     tags=["health"], media_type=MEDIA_TYPE)
async def metrics(request: Request[Any, Any, Any]) -> Response[bytes]:
    check_metrics_token(request)
    body = await render_metrics(request.app.state.pool, request.app.state.clock.now())
    return Response(body, media_type=MEDIA_TYPE)
