"""Sign in (an API key, or a one-time sign-in link), sign out, and switch between the teams a
browser signed in to.

Signing in while signed in adds a session: the browser then holds one per team
(:mod:`api.ui.auth`, ``cronledger_sessions``) and every page shows a team switcher. Signing
out ends the session of the team shown; the browser's next session, if any, takes its place.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromQuery

from api.deps import ClockDep, PoolDep
from api.ui.auth import (
    SESSION_COOKIE,
    SIGNIN_PATH,
    ViewerDep,
    checked_form,
    held_cookie,
    held_ids,
    new_signin_csrf,
    redirect,
    session_cookie,
    signin_cookie,
    signin_csrf,
    switch_cookies,
)
from api.ui.flash import Flash, flash_cookie, seal
from api.ui.render import page
from core.errors import NotFound
from core.sessions import held_sessions, redeem_signin_link, sign_in, sign_out


def _safe_next(value: str | None) -> str:
    """A local path to go to after signing in (anything else: the overview)."""
    if (value and value.startswith("/") and not value.startswith("//") and "\\" not in value
            and value.isprintable() and " " not in value and len(value) <= 2000):
        return value
    return "/"


async def _opened(request: Request[Any, Any, Any], session_id: str,
                  next_path: str) -> Response[Any]:
    """Go to ``next_path`` with the new session as the one pages act with; the browser's live
    sessions so far (other teams) are kept for the switcher."""
    now = request.app.state.clock.now()
    before = [request.cookies.get(SESSION_COOKIE, ""), *held_ids(request)]
    live = [h.session_id for h in await held_sessions(request.app.state.pool, before, now)]
    return redirect(next_path, cookies=[*switch_cookies(request, session_id, live),
                                        signin_cookie(request, "")])


async def _form(request: Request[Any, Any, Any], next_path: str, error: str = "",
                status: int = 200) -> Response[Any]:
    token = new_signin_csrf()
    held = await held_sessions(request.app.state.pool,
                               [request.cookies.get(SESSION_COOKIE, ""), *held_ids(request)],
                               request.app.state.clock.now())
    response = page(request, None, "signin.html", "Sign in", status_code=status,
                    next_path=next_path, error=error, signin_csrf=token,
                    teams=[h.team_name for h in held])
    response.cookies.append(signin_cookie(request, token))
    return response


@get(SIGNIN_PATH, name="signin")
async def signin_form(request: Request[Any, Any, Any], pool: PoolDep, clock: ClockDep,
                      next: FromQuery[str | None] = None,
                      token: FromQuery[str | None] = None) -> Response[Any]:
    """The sign-in form; with ``?token=`` (a one-time link) the session opens at once."""
    next_path = _safe_next(next)
    if token is not None:
        session_id = await redeem_signin_link(pool, token, clock.now())
        if session_id is None:
            return await _form(request, next_path, "This sign-in link is used, expired or "
                                                   "unknown: sign in with an API key.",
                               status=401)
        return await _opened(request, session_id, next_path)
    return await _form(request, next_path)


@post(SIGNIN_PATH, name="signin_submit")
async def signin_submit(request: Request[Any, Any, Any], pool: PoolDep,
                        clock: ClockDep) -> Response[Any]:
    """Check the form's CSRF cookie and the key; open a session and go to ``next``."""
    form = await request.form()
    next_path = _safe_next(form.get("next"))
    if not signin_csrf(request, form.get("csrf")):
        return await _form(request, next_path, "The form expired: sign in again.", status=403)
    session_id = await sign_in(pool, str(form.get("api_key") or ""), clock.now())
    if session_id is None:
        return await _form(request, next_path, "This API key is unknown or revoked.",
                           status=401)
    return await _opened(request, session_id, next_path)


@post("/ui/signout", name="signout")
async def signout(request: Request[Any, Any, Any], viewer: ViewerDep,
                  pool: PoolDep) -> Response[Any]:
    await checked_form(request, viewer, write=False)
    await sign_out(pool, viewer.session_id)
    if not viewer.others:
        return redirect(SIGNIN_PATH, cookies=[session_cookie(request, ""),
                                              held_cookie(request, [])])
    nxt = viewer.others[0]
    notice = Flash(f"Signed out of team “{viewer.team_name}”; now showing team "
                   f"“{nxt.team_name}”.")
    return redirect("/", cookies=[
        *switch_cookies(request, nxt.session_id, [h.session_id for h in viewer.others]),
        flash_cookie(request, seal(nxt.session_id, notice))])


@post("/ui/team", name="team_switch")
async def team_switch(request: Request[Any, Any, Any], viewer: ViewerDep) -> Response[Any]:
    """Show another team this browser signed in to (the form's ``key``: the id of that
    session's API key); its overview, with a notice."""
    form = await checked_form(request, viewer, write=False)
    chosen = next((h for h in viewer.others if str(h.actor.key_id) == form.get("key")), None)
    if chosen is None:
        raise NotFound("this browser holds no session of that key: sign in with it")
    others = [viewer.session_id, *(h.session_id for h in viewer.others)]
    notice = Flash(f"Now showing team “{chosen.team_name}”.")
    return redirect("/", cookies=[*switch_cookies(request, chosen.session_id, others),
                                  flash_cookie(request, seal(chosen.session_id, notice))])


ROUTES = [signin_form, signin_submit, signout, team_switch]
