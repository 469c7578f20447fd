"""Dashboard sign-in state: the session cookie, the viewer of a page and the CSRF check.

- The cookie ``cronledger_session`` holds a session id (:mod:`core.sessions`): ``HttpOnly``,
  ``SameSite=Lax``, ``Path=/``, and ``Secure`` when the request came over HTTPS
  (:func:`is_https`: the connection's scheme, or ``X-Forwarded-Proto: https`` from a peer
  that ``CRONLEDGER_TRUSTED_PROXIES`` trusts, :mod:`core.http.proxies`).
- Every page handler takes ``viewer: ViewerDep`` (:func:`provide_viewer`): the
  :class:`Viewer` of a live session, or :class:`SignInRequired`, which the dashboard's error
  handlers answer with a redirect to the sign-in page.
- A browser may hold several sessions, one per team it signed in to (signing in with another
  key adds one): the cookie ``cronledger_session`` is the one pages act with, the cookie
  ``cronledger_sessions`` the others (their ids joined by ``.``, at most :data:`MAX_HELD`), for
  the team switcher at the top of every page (:func:`switch_cookies`).
- Every form POST goes through :func:`checked_form`: the form's ``csrf`` field must be the
  session's CSRF token and the key must have write scope, or the answer is 403 and nothing
  changes (the sign-in form itself is checked against a pre-session cookie,
  :func:`signin_csrf`: the double-submit pattern).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Any

from litestar import Request, Response
from litestar.datastructures import Cookie
from litestar.di import NamedDependency

from api.deps import is_digits
from core.actor import Actor
from core.errors import Forbidden, invalid
from core.http.proxies import trusted_proxies
from core.sessions import (
    SESSION_SECONDS,
    HeldSession,
    csrf_matches,
    csrf_token,
    held_sessions,
)

SESSION_COOKIE = "cronledger_session"
HELD_COOKIE = "cronledger_sessions"  # the browser's other sessions (other teams), "."-joined
MAX_HELD = 10  # sessions one browser holds at most
# one value per checked box: lists
MULTI_FIELDS = ("channels", "jobs", "monitors", "alert_on", "components")
SIGNIN_COOKIE = "cronledger_signin"  # the sign-in form's CSRF token (before a session exists)
SIGNIN_PATH = "/ui/signin"


class SignInRequired(Exception):  # noqa: N818 - a signal, not an error
    """No live session: answered with a redirect to the sign-in page (``next`` = the page)."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


@dataclass(frozen=True)
class Viewer:
    """Who looks at a page.

    Attributes:
        actor: the session's team, key and scope; every ``core/`` call takes it.
        csrf: the token every form of the page must send back (field ``csrf``).
        session_id: the cookie's value.
        team_name: the name of the session's team (shown on every page).
        key_name: the name of the session's key (``None``: unnamed).
        others: the browser's other live sessions (other teams), for the team switcher.
    """

    actor: Actor
    csrf: str
    session_id: str
    team_name: str = ""
    key_name: str | None = None
    others: tuple[HeldSession, ...] = ()

    @property
    def can_write(self) -> bool:
        """Whether controls that change anything are shown (write-scope key)."""
        return self.actor.scope == "write"


def is_https(request: Request[Any, Any, Any]) -> bool:
    """Whether the browser reached us over HTTPS: the ASGI scheme, or the last
    ``X-Forwarded-Proto`` entry when the connection's peer is a trusted proxy (the same
    ``CRONLEDGER_TRUSTED_PROXIES`` rule as ``X-Forwarded-For``, :mod:`core.http.proxies`)."""
    if request.scope.get("scheme") == "https":
        return True
    forwarded = request.headers.get("x-forwarded-proto")
    if not forwarded:
        return False
    peer = request.client.host if request.client else None
    if not trusted_proxies(request.app.state.settings.trusted_proxies).trusts(peer):
        return False
    return forwarded.split(",")[-1].strip().lower() == "https"


def session_cookie(request: Request[Any, Any, Any], value: str) -> Cookie:
    """The session cookie carrying ``value`` (``""`` with max-age 0 to delete it)."""
    return Cookie(key=SESSION_COOKIE, value=value, path="/", httponly=True, samesite="lax",
                  secure=is_https(request), max_age=SESSION_SECONDS if value else 0)


def held_ids(request: Request[Any, Any, Any]) -> list[str]:
    """The ids of the browser's other sessions (the ``cronledger_sessions`` cookie)."""
    value = request.cookies.get(HELD_COOKIE, "")
    return [sid for sid in value.split(".") if sid][:MAX_HELD]


def held_cookie(request: Request[Any, Any, Any], ids: list[str]) -> Cookie:
    """The cookie of the browser's other sessions (none: deleted)."""
    value = ".".join(dict.fromkeys(ids))
    return Cookie(key=HELD_COOKIE, value=value, path="/", httponly=True, samesite="lax",
                  secure=is_https(request), max_age=SESSION_SECONDS if value else 0)


def switch_cookies(request: Request[Any, Any, Any], current: str,
                   others: list[str]) -> list[Cookie]:
    """The cookies that make ``current`` the session pages act with and keep ``others`` (the
    newest first, at most :data:`MAX_HELD` - 1, ``current`` left out)."""
    kept = [sid for sid in dict.fromkeys(others) if sid and sid != current][:MAX_HELD - 1]
    return [session_cookie(request, current), held_cookie(request, kept)]


def signin_cookie(request: Request[Any, Any, Any], value: str) -> Cookie:
    """The sign-in form's CSRF cookie (10 minutes; deleted on sign-in)."""
    return Cookie(key=SIGNIN_COOKIE, value=value, path=SIGNIN_PATH, httponly=True,
                  samesite="lax", secure=is_https(request), max_age=600 if value else 0)


def new_signin_csrf() -> str:
    return secrets.token_urlsafe(32)


def signin_csrf(request: Request[Any, Any, Any], presented: str | None) -> bool:
    """Whether the sign-in form's ``csrf`` field equals its cookie (double submit)."""
    cookie = request.cookies.get(SIGNIN_COOKIE, "")
    return bool(cookie) and bool(presented) and hmac.compare_digest(cookie, presented or "")


async def provide_viewer(request: Request[Any, Any, Any]) -> Viewer:
    """The :class:`Viewer` of the request's session cookie.

    Raises:
        SignInRequired: no cookie, or an unknown, expired or revoked session.
    """
    known = request.scope.get("cronledger_viewer")
    if isinstance(known, Viewer):
        return known
    session_id = request.cookies.get(SESSION_COOKIE, "")
    held = await held_sessions(request.app.state.pool, [session_id, *held_ids(request)],
                               request.app.state.clock.now()) if session_id else []
    if not held or held[0].session_id != session_id:
        path = request.url.path
        if request.url.query:
            path += "?" + request.url.query
        raise SignInRequired(path if request.method == "GET" else "/")
    current = held[0]
    viewer = Viewer(current.actor, csrf_token(session_id), session_id, current.team_name,
                    current.key_name, tuple(h for h in held[1:] if h.session_id != session_id))
    # Litestar's Scope is a TypedDict of ASGI's keys; this request's viewer rides along in it
    request.scope["cronledger_viewer"] = viewer  # type: ignore[typeddict-unknown-key]
    return viewer


def form_version(form: dict[str, Any]) -> int | None:
    """The ``version`` an edit form was read at (the save is refused with 409 if the object
    changed since); ``None`` when the form has none.

    Raises:
        InvalidInput: on ``version``, text that is not ASCII digits (``str.isdigit`` took
            ``²``, a 500, and ``+1``, read as no version at all).
    """
    version = str(form.get("version") or "")
    if not version:
        return None
    if not is_digits(version):
        raise invalid("version", "must be the version number the form was read at (digits)")
    return int(version)


async def checked_form(request: Request[Any, Any, Any], viewer: Viewer, *,
                       write: bool = True) -> dict[str, Any]:
    """The POSTed form as ``{field: value}`` (a repeated field: its last value, except the
    fields of :data:`MULTI_FIELDS`, always a list) after the two checks every changing form
    passes.

    Args:
        write: the form changes something (``False`` only for signing out, which a read
            key may do).

    Raises:
        Forbidden: (403) the ``csrf`` field is missing or not the session's token, or
            (``write``) the session's key is read-only. Nothing has changed.
    """
    form = await request.form()
    if not csrf_matches(viewer.session_id, form.get("csrf")):
        raise Forbidden("the form's CSRF token is missing or wrong: reload the page and "
                        "try again")
    if write and not viewer.can_write:
        raise Forbidden("this API key is read-only")
    values: dict[str, Any] = dict(form.items())
    for key in MULTI_FIELDS:
        if key in form:
            values[key] = form.getall(key)
    return values


def writable(viewer: Viewer) -> None:
    """Refuse a form page to a read key (its controls are hidden; this answers a typed URL).

    Raises:
        Forbidden: (403) the session's key is read-only.
    """
    if not viewer.can_write:
        raise Forbidden("this API key is read-only")


def redirect(path: str, status: int = 303, cookies: list[Cookie] | None = None) -> Response[Any]:
    """A redirect (303 after a POST: the browser GETs ``path``)."""
    return Response(content=None, status_code=status, headers={"Location": path},
                    cookies=cookies or [])


ViewerDep = NamedDependency[Viewer]
