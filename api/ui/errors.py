"""The dashboard's error answers: HTML pages in the dashboard's style, never problem+json.

Installed on the dashboard's router only (:func:`api.ui.ui_router`), so ``/v1`` keeps its
problem+json answers (:mod:`api.errors`). A missing session is a redirect to the sign-in page;
a domain error or an HTTP error is the error page with its status and detail; anything else is
logged with its traceback and answered by the 500 page, which shows no internals.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import quote

from litestar import Request, Response
from litestar.exceptions import HTTPException

from api.errors import TITLES, logged_path
from api.ui.auth import SIGNIN_PATH, SignInRequired, Viewer, redirect
from api.ui.render import page
from core.errors import DomainError

log = logging.getLogger("cronledger.ui")


def _error_page(request: Request[Any, Any, Any], status: int, detail: str) -> Response[Any]:
    known = request.scope.get("cronledger_viewer")
    viewer = known if isinstance(known, Viewer) else None
    template = page(request, viewer, "error.html", TITLES.get(status, "Error"),
                    status_code=status, status=status, detail=detail)
    return template


def sign_in_required(request: Request[Any, Any, Any], exc: SignInRequired) -> Response[Any]:
    return redirect(f"{SIGNIN_PATH}?next={quote(exc.next_path, safe='/')}", status=303)


def domain_error(request: Request[Any, Any, Any], exc: DomainError) -> Response[Any]:
    detail = exc.detail  # often the errors' own words already (core.errors.invalid): once
    unsaid = [f"{e.field}: {e.message}" for e in exc.errors or []
              if f"{e.field}: {e.message}" not in detail]
    if unsaid:
        detail += ": " + "; ".join(unsaid)
    return _error_page(request, exc.status, detail)


def http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code if exc.status_code < 500 else 500
    detail = exc.detail if status < 500 else "something went wrong on our side"
    if status == 404:
        detail = "there is no page at this address"
    return _error_page(request, status, detail)


def internal_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    log.error("dashboard page %s failed", logged_path(request), exc_info=exc)
    return _error_page(request, 500, "something went wrong on our side; the error is in the "
                                     "server's log")


EXCEPTION_HANDLERS: dict[Any, Any] = {
    SignInRequired: sign_in_required,
    DomainError: domain_error,
    HTTPException: http_error,
    Exception: internal_error,
}
