"""Sign in (an API key, or a one-time sign-in link) and sign out."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromQuery

from api.deps import ClockDep, PoolDep
from api.ui.auth import (
    SIGNIN_PATH,
    ViewerDep,
    checked_form,
    new_signin_csrf,
    redirect,
    session_cookie,
    signin_cookie,
    signin_csrf,
)
from api.ui.render import page
from core.sessions import redeem_signin_link, sign_in, sign_out


def _safe_next(value: str | None) -> str:
    """A local path to go to after signing in (anything else: the overview)."""
    if (value and value.startswith("/") and not value.startswith("//") and "\\" not in value
            and value.isprintable() and " " not in value and len(value) <= 2000):
        return value
    return "/"


def _form(request: Request[Any, Any, Any], next_path: str, error: str = "",
          status: int = 200) -> Response[Any]:
    token = new_signin_csrf()
    response = page(request, None, "signin.html", "Sign in", status_code=status,
                    next_path=next_path, error=error, signin_csrf=token)
    response.cookies.append(signin_cookie(request, token))  # type: ignore[union-attr]
    return response  # type: ignore[return-value]


@get(SIGNIN_PATH, name="signin")
async def signin_form(request: Request[Any, Any, Any], pool: PoolDep, clock: ClockDep,
                      next: FromQuery[str | None] = None,
                      token: FromQuery[str | None] = None) -> Response[Any]:
    """The sign-in form; with ``?token=`` (a one-time link) the session opens at once."""
    next_path = _safe_next(next)
    if token is not None:
        session_id = await redeem_signin_link(pool, token, clock.now())
        if session_id is None:
            return _form(request, next_path, "This sign-in link is used, expired or unknown: "
                                             "sign in with an API key.", status=401)
        return redirect(next_path, cookies=[session_cookie(request, session_id)])
    return _form(request, next_path)


@post(SIGNIN_PATH, name="signin_submit")
async def signin_submit(request: Request[Any, Any, Any], pool: PoolDep,
                        clock: ClockDep) -> Response[Any]:
    """Check the form's CSRF cookie and the key; open a session and go to ``next``."""
    form = await request.form()
    next_path = _safe_next(form.get("next"))
    if not signin_csrf(request, form.get("csrf")):
        return _form(request, next_path, "The form expired: sign in again.", status=403)
    session_id = await sign_in(pool, str(form.get("api_key") or ""), clock.now())
    if session_id is None:
        return _form(request, next_path, "This API key is unknown or revoked.", status=401)
    return redirect(next_path, cookies=[session_cookie(request, session_id),
                                        signin_cookie(request, "")])


@post("/ui/signout", name="signout")
async def signout(request: Request[Any, Any, Any], viewer: ViewerDep,
                  pool: PoolDep) -> Response[Any]:
    await checked_form(request, viewer, write=False)
    await sign_out(pool, viewer.session_id)
    return redirect(SIGNIN_PATH, cookies=[session_cookie(request, "")])


ROUTES = [signin_form, signin_submit, signout]
