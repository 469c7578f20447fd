"""One error mapper: every error becomes ``application/problem+json`` (RFC 9457).

Handlers never build error responses themselves; they raise :class:`core.errors.DomainError`
subclasses, and Litestar's own errors (validation, unknown route, wrong method) are mapped here.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR

from api.msgwords import choices_at, plain
from api.pagination import BAD_CURSOR, CURSOR_PATTERNS
from api.schemas.common import SPREAD_PATTERN
from core.channels.definition import CHAT_ID_PATTERN
from core.errors import DatabaseUnavailable, DomainError
from core.monitors.slugs import SLUG_PATTERN, SLUG_WORDS
from core.schedule.spread import SPREAD_WORDS
from core.secrets import NAME_PATTERN, NAME_WORDS
from core.services.outage import DriverError, unavailable_reason
from core.statuspages.commands import NOTE_PATTERN, NOTE_WORDS
from core.statuspages.definition import PATH_PATTERN, PATH_WORDS, TEXT_PATTERN, TEXT_WORDS
from core.tags import TAG_PATTERN, TAG_WORDS

log = logging.getLogger("cronledger.api")
PROBLEM = "application/problem+json"

TITLES = {400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found",
          405: "Method not allowed", 409: "Conflict", 410: "Gone", 413: "Payload too large",
          415: "Unsupported media type", 422: "Invalid input", 429: "Too many requests",
          500: "Internal server error", 503: "Service unavailable"}
RETRY_AFTER_SECONDS = 1  # on a 503 for a database outage, API and pings alike


def problem(status: int, detail: str, errors: list[dict[str, str]] | None = None,
            headers: dict[str, str] | None = None,
            extensions: dict[str, Any] | None = None) -> Response[dict[str, Any]]:
    """A problem+json response (``extensions``: extra members, such as a 410's
    ``deleted_at``)."""
    body: dict[str, Any] = {"type": "about:blank", "title": TITLES.get(status, "Error"),
                            "status": status, "detail": detail, **(extensions or {})}
    if errors:
        body["errors"] = errors
    return Response(body, status_code=status, media_type=PROBLEM, headers=headers)


# Every answer under /api/ (healthchecks' Management API, any version, known or not) is
# healthchecks' ``{"error": ...}``, never a problem (api/hc/routes.py).
_HC_PATH = re.compile(r"^/api(?:/|$)")
_STATUS_PATH = re.compile(r"^/status(?:/|$)")  # the public status pages (api/ui/pages/status.py)


def _answer(request: Request[Any, Any, Any], status: int, detail: str,
            errors: list[dict[str, str]] | None = None, headers: dict[str, str] | None = None,
            extensions: dict[str, Any] | None = None) -> Response[dict[str, Any]]:
    """:func:`problem`, or under ``/api/`` healthchecks' ``{"error": detail}`` with its CORS
    headers (:func:`api.hc.routes.error_response`)."""
    if _HC_PATH.match(request.url.path):
        from api.hc.routes import error_response

        # healthchecks answers invalid input 400, never 422
        return error_response(400 if status == 422 else status, detail, headers)
    return problem(status, detail, errors, headers, extensions)


def domain_error(request: Request[Any, Any, Any], exc: DomainError) -> Response[dict[str, Any]]:
    errors = [{"field": e.field, "message": e.message} for e in exc.errors]
    headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
    if isinstance(exc, DatabaseUnavailable):
        headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    return _answer(request, exc.status, exc.detail, errors, headers, exc.extensions)


def database_error(request: Request[Any, Any, Any], exc: DriverError) -> Response[dict[str, Any]]:
    """A driver error: 503 + ``Retry-After`` when the database cannot be reached, is full or
    restarting (:func:`core.services.outage.unavailable_reason`), logged once per outage by the
    app's :class:`core.services.outage.OutageLog` (no traceback); any other driver error is a
    500."""
    reason = unavailable_reason(exc)
    if reason is None:
        return internal_error(request, exc)
    outage = getattr(request.app.state, "outage", None)
    if outage is not None:
        outage.down(reason)
    return domain_error(request, DatabaseUnavailable())


_NAMED_FIELD = re.compile(r"(?:unknown|missing required) field `([^`]*)`")


def _field_path(key: Any, message: str) -> str:
    """A dotted field path from msgspec's ``$.a.b`` key and, for unknown/missing fields, the
    field named in its message."""
    text = "" if key in (None, "data", "body") else str(key)
    # `$.names[...]`: a value of a map, whose key msgspec does not say: the map is named
    path = text.removeprefix("$").lstrip(".").replace("[...]", "")
    path = path.replace("[", ".").replace("]", "")
    named = _NAMED_FIELD.search(message)
    if named:
        path = f"{path}.{named.group(1)}" if path else named.group(1)
    return path or "body"


# Patterns the decoder checks, whose raw regex would be the message: what they mean, in words
# (every pattern of a query or path parameter and every Meta pattern of a body has its words
# here: tests/integration/test_openapi.py); the spread's are a job body's
# (core/schedule/spread.py).
PATTERN_WORDS = {
    f"^{TAG_PATTERN}$": f"must be a tag: {TAG_WORDS.removeprefix('must be ')}",
    **dict.fromkeys(CURSOR_PATTERNS, BAD_CURSOR),
    SPREAD_PATTERN: SPREAD_WORDS,
    f"^{NAME_PATTERN}$": NAME_WORDS,  # a secret's name in the path or a body
    f"^{TEXT_PATTERN}$": TEXT_WORDS,  # a status page's title
    f"^{PATH_PATTERN}$": PATH_WORDS,  # a status page's custom path
    f"^{NOTE_PATTERN}$": NOTE_WORDS,  # an incident's note
    f"^{SLUG_PATTERN}$": SLUG_WORDS,  # a monitor's slug
    f"^({CHAT_ID_PATTERN})$": "must be a numeric chat id or @channelusername",
    "^[0-9a-f]{64}$": "must be 64 lowercase hexadecimal characters (a SHA-256 digest)",
}
# A pattern without words (none today: the test above keeps it so) is never the message.
UNKNOWN_PATTERN_WORDS = "does not have the form the API document states for it (its pattern)"
_REGEX_MESSAGE = re.compile(r"Expected `str` matching regex '(.*)'")


def _words(message: str, choices: tuple[Any, ...] | None = None) -> str:
    """msgspec's message in plain words: "Expected `str` matching regex '…'" as what the
    pattern means (:data:`PATTERN_WORDS`), never the raw regex; bounds, lengths, types and
    enums as :func:`api.msgwords.plain` words them (``choices``: an enum's values)."""
    found = _REGEX_MESSAGE.search(message)
    if found is None:
        return plain(message, choices)
    pattern = found.group(1).encode().decode("unicode_escape")
    return PATTERN_WORDS.get(pattern, UNKNOWN_PATTERN_WORDS)


def _choices(request: Request[Any, Any, Any], key: Any) -> tuple[Any, ...] | None:
    """The allowed values of the enum at ``key``: a query parameter of the route's handler,
    else a path into its body (``$.a.b``, or Litestar's dotted ``a.b``)."""
    handler = request.scope.get("route_handler")
    parameters = getattr(getattr(handler, "parsed_fn_signature", None), "parameters", {})
    text = "" if key is None else str(key)
    if text in parameters and text != "data":
        return choices_at(parameters[text].annotation, "")
    if "data" in parameters:
        return choices_at(parameters["data"].annotation, text)
    return None


_MISSING = re.compile(r"Missing required (\w+) parameter '([^']*)'")


def validation_error(request: Request[Any, Any, Any], exc: ValidationException
                     ) -> Response[dict[str, Any]]:
    """Litestar's decoding errors: malformed JSON is 400, wrong shapes and types are 422,
    each message in plain words (:func:`_words`)."""
    extra = exc.extra if isinstance(exc.extra, list) else []
    errors = []
    missing = _MISSING.match(str(exc.detail))
    if not extra and missing:  # Litestar's text names the URL with its query: not repeated
        errors.append({"field": missing.group(2),
                       "message": f"is required (a {missing.group(1)} parameter)"})
    for item in extra:
        if isinstance(item, dict):
            raw = str(item.get("message", "is invalid"))
            if raw == "'data'":  # Litestar's KeyError text for a request without a body
                return _answer(request, 400, "a JSON request body is required")
            message = _words(raw, _choices(request, item.get("key")))
            errors.append({"field": _field_path(item.get("key"), raw), "message": message})
    text = " ".join(e["message"] for e in errors).lower()
    if "malformed" in text or "json is malformed" in text or "invalid json" in text:
        return _answer(request, 400, "the request body is not valid JSON", errors)
    detail = "; ".join(f"{e['field']}: {e['message']}" for e in errors) or exc.detail
    return _answer(request, 422, detail, errors)


def too_deep(request: Request[Any, Any, Any], exc: RecursionError) -> Response[dict[str, Any]]:
    """JSON nested deeper than the decoder's recursion limit (it raises while parsing)."""
    if _HC_PATH.match(request.url.path):  # healthchecks' words for JSON it cannot parse
        return _answer(request, 400, "could not parse request body")
    return problem(400, "the request body is nested too deeply")


STATUS_NOT_FOUND = b"<!doctype html><title>Not found</title><p>Not found.</p>\n"


def status_not_found(request: Request[Any, Any, Any]) -> Response[bytes]:
    """The bare 404 of every miss under ``/status/`` (api/ui/pages/status.py): an unknown key,
    and any path no route serves (``…/feed.rss``), the same words that say nothing of why."""
    return Response(b"" if request.method == "HEAD" else STATUS_NOT_FOUND, status_code=404,
                    media_type="text/html", headers={"Cache-Control": "no-store",
                                                     "Content-Length": str(len(STATUS_NOT_FOUND))})


def http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    """Litestar's own errors (unknown route, wrong method); under ``/api/`` (an unknown
    version too) in healthchecks' shape (:func:`api.hc.routes.http_error`); an unknown path
    under ``/status/`` the public pages' bare 404 (:func:`status_not_found`)."""
    if _HC_PATH.match(request.url.path):
        from api.hc.routes import http_error as hc_error

        return hc_error(request, exc)
    if exc.status_code == 404 and _STATUS_PATH.match(request.url.path):
        return status_not_found(request)
    return problem(exc.status_code, str(exc.detail), headers=exc.headers)


def logged_path(request: Request[Any, Any, Any]) -> str:
    """The path a log line may name: the matched route's template (``/ping``,
    ``/status/{key}``, ``/v1/jobs/{job_id}``), never the request's own path, which may hold
    a secret (a ping token or ping key, a status page's or a badge's key)."""
    template = request.scope.get("path_template")
    if isinstance(template, str) and template:
        return template
    # A mounted ASGI app (the ``/ping`` routes) has no template in the scope: its mount paths
    handler = request.scope.get("route_handler")
    paths = sorted(getattr(handler, "paths", None) or ())
    return " or ".join(f"{p.rstrip('/')}/…" for p in paths) or "(no route)"


def internal_error(request: Request[Any, Any, Any], exc: Exception) -> Response[dict[str, Any]]:
    log.exception("unhandled error on %s %s", request.method, logged_path(request),
                  exc_info=exc)
    return _answer(request, HTTP_500_INTERNAL_SERVER_ERROR, "internal error; it has been logged")


EXCEPTION_HANDLERS = {
    DomainError: domain_error,
    ValidationException: validation_error,
    RecursionError: too_deep,
    HTTPException: http_error,
    DriverError: database_error,
    Exception: internal_error,
}
