"""Jobs: the list, a job's page, the new/edit form and its schedule preview."""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Template

from api.deps import PoolDep
from api.ui.auth import ViewerDep
from api.ui.render import page
from core.jobs.queries import describe, list_jobs


@get("/ui/jobs", name="jobs")
async def jobs(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep) -> Template:
    rows = await list_jobs(pool, viewer.actor, limit=50, after=None)
    for row in rows:
        row["description"] = describe(row)
    return page(request, viewer, "jobs.html", "Jobs", section="jobs", jobs=rows)


ROUTES = [jobs]
