"""Secrets: the team's secret names and dates, a form that sets a value, and **Delete**.

A value is write-only here as in ``/v1/secrets`` (:mod:`core.secrets`): no page ever shows one,
not even the one just set (the form's field is emptied in the answer).
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromQuery
from litestar.response import Template

from api.deps import KeyRingDep, PoolDep
from api.ui.auth import Viewer, ViewerDep, checked_form
from api.ui.flash import redirect_with
from api.ui.render import page
from core.errors import InvalidInput, invalid
from core.secrets import NAME, delete_secret, list_secrets, put_secret

PAGE_SIZE = 100


async def _page(request: Request[Any, Any, Any], viewer: Viewer, after: str | None = None, *,
                status: int = 200, **extra: Any) -> Template:
    rows = await list_secrets(request.app.state.pool, viewer.actor, limit=PAGE_SIZE + 1,
                              after=after or None)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    context = {"name": "", "errors": {}, "detail": "", **extra}
    return page(request, viewer, "secrets.html", "Secrets", section="secrets",
                status_code=status, secrets=rows, after=after or "",
                next_after=rows[-1]["name"] if more else None, **context)


@get("/ui/secrets", name="secrets")
async def secrets_page(request: Request[Any, Any, Any], viewer: ViewerDep,
                       after: FromQuery[str | None] = None) -> Template:
    if after and not NAME.match(after):
        raise invalid("after", "must be a secret name (the link of the previous page)")
    return await _page(request, viewer, after)


@post("/ui/secrets", name="secret_set")
async def secret_set(request: Request[Any, Any, Any], viewer: ViewerDep, pool: PoolDep,
                     keyring: KeyRingDep) -> Response[Any]:
    form = await checked_form(request, viewer)
    name = str(form.get("name", "")).strip()
    try:
        row, created = await put_secret(pool, keyring, viewer.actor, name,
                                        form.get("value", ""), request.app.state.clock.now())
    except InvalidInput as exc:
        errors = {e.field.split(".")[0]: e.message for e in exc.errors}
        return await _page(request, viewer, status=422, name=name, errors=errors,
                           detail=exc.detail)
    return redirect_with(request, viewer, "/ui/secrets",
                         f"Secret {row['name']} {'created' if created else 'replaced'}.")


@post("/ui/secrets/delete", name="secret_delete")
async def secret_delete(request: Request[Any, Any, Any], viewer: ViewerDep,
                        pool: PoolDep) -> Response[Any]:
    """Delete the secret the form names; jobs that still use it fail with error class
    ``secret`` until it is set again."""
    form = await checked_form(request, viewer)
    name = str(form.get("name", "")).strip()
    if not NAME.match(name):
        raise invalid("name", "must be a secret name")
    await delete_secret(pool, viewer.actor, name, request.app.state.clock.now())
    return redirect_with(request, viewer, "/ui/secrets",
                         f"Secret {name} deleted; jobs that use it fail until it is set again.")


ROUTES = [secrets_page, secret_set, secret_delete]
