"""The advisor's pages: ``/ui/monitors/{id}/advice`` and ``/ui/jobs/{id}/advice``
(docs/advice.md, *On the dashboard*).

The advice is :func:`core.advice.monitors.advise_monitor` / :func:`core.advice.jobs.advise_job`,
the reads behind ``GET /v1/{monitors,jobs}/{id}/advice``; this module only lays it out. Applying
a suggestion is a link into the object's ordinary edit form with that field filled
(:func:`prefilled`): saving it is the ordinary edit, recorded as such.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlencode

from litestar import Request, get
from litestar.params import FromPath
from litestar.response import Template

from api.deps import PoolDep
from api.ui.auth import ViewerDep
from api.ui.render import page
from core.advice.answer import Advice
from core.advice.jobs import advise_job
from core.advice.monitors import advise_monitor
from core.advice.rules import DEFAULT_DAYS
from core.jobs.queries import get_job
from core.monitors.queries import get_monitor

# The fields a suggestion may fill in each edit form (the forms' own field names).
MONITOR_FIELDS = ("grace_seconds", "alert_after_failures", "recover_after_successes",
                  "min_duration", "max_duration", "schedule")
JOB_FIELDS = ("alert_after_failures", "recover_after_successes", "min_duration",
              "max_duration")
LABELS = {"grace_seconds": "Grace", "alert_after_failures": "Alert after failures",
          "recover_after_successes": "Recover after successes",
          "min_duration": "Minimum run time", "max_duration": "Maximum run time",
          "schedule": "Schedule"}


def prefilled(request: Request[Any, Any, Any], fields: tuple[str, ...]) -> dict[str, str]:
    """The query's values of ``fields`` (an edit form opened from a suggestion), as the
    form's texts; the form's ordinary save validates them."""
    return {f: str(request.query_params[f]) for f in fields if f in request.query_params}


def _shown(advice: Advice, kind: str, subject_id: uuid.UUID) -> list[dict[str, Any]]:
    """Each suggestion with its label and the edit form's URL filled with it."""
    return [{"s": s, "label": LABELS.get(s.field, s.field),
             "apply": f"/ui/{kind}s/{subject_id}/edit?" + urlencode(
                 {s.field: "" if s.suggested is None else s.suggested})}
            for s in advice.suggestions]


@get("/ui/monitors/{monitor_id:uuid}/advice", name="monitor_advice")
async def monitor_advice(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                         monitor_id: FromPath[uuid.UUID]) -> Template:
    monitor = await get_monitor(pool, viewer.actor, monitor_id)
    advice = await advise_monitor(pool, viewer.actor, monitor_id, DEFAULT_DAYS,
                                  request.app.state.clock.now())
    return page(request, viewer, "advice.html", f"Advice: {monitor['name']}",
                section="monitors", subject=monitor, kind="monitor", advice=advice,
                suggestions=_shown(advice, "monitor", monitor_id), labels=LABELS)


@get("/ui/jobs/{job_id:uuid}/advice", name="job_advice")
async def job_advice(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                     job_id: FromPath[uuid.UUID]) -> Template:
    job = await get_job(pool, viewer.actor, job_id)
    advice = await advise_job(pool, viewer.actor, job_id, DEFAULT_DAYS,
                              request.app.state.clock.now())
    return page(request, viewer, "advice.html", f"Advice: {job['name']}", section="jobs",
                subject=job, kind="job", advice=advice,
                suggestions=_shown(advice, "job", job_id), labels=LABELS)


ROUTES = [monitor_advice, job_advice]
