"""Request-scoped dependencies (the pool, the clock, the authenticated actor) and the shared
handler parameter types: page limits, cursors, instants (:func:`parse_instant`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from litestar import Request
from litestar.di import NamedDependency
from litestar.params import PathParameter, QueryParameter

from api.pagination import (
    KEYSET_CURSOR_PATTERN,
    MAX_EVENT_LIMIT,
    MAX_LIMIT,
    NAME_CURSOR_PATTERN,
    VERSION_CURSOR_PATTERN,
)
from core.actor import Actor
from core.apikeys import authenticate
from core.channels.sealing import Sealer
from core.clock import Clock, utc
from core.crypto import KeyRing
from core.db import ConnectionPool
from core.errors import DomainError, Forbidden, Unauthorized, invalid
from core.notifications.delivery import Delivery
from core.notifications.lookup import SecretLookup
from core.secrets import NAME_PATTERN

READ_METHODS = ("GET", "HEAD", "OPTIONS")


async def provide_pool(request: Request[Any, Any, Any]) -> ConnectionPool:
    pool: ConnectionPool = request.app.state.pool  # set by api/app.py's lifespan (open_pool)
    return pool


async def provide_read_pool(request: Request[Any, Any, Any]) -> ConnectionPool:
    """The pool of the reporting reads: the read replica's (``CRONLEDGER_READ_DATABASE_URL``)
    when one is configured, else the primary's (docs/operations.md, "Read replica")."""
    pool: ConnectionPool = request.app.state.read_pool
    return pool


async def provide_clock(request: Request[Any, Any, Any]) -> Clock:
    clock: Clock = request.app.state.clock
    return clock


async def provide_keyring(request: Request[Any, Any, Any]) -> KeyRing:
    keyring: KeyRing = request.app.state.keyring
    return keyring


@dataclass
class NotifyKit:
    """What the channel routes need: the sealer, the team-secret lookup, the sender."""

    sealer: Sealer
    secrets: SecretLookup
    delivery: Delivery


async def provide_notify(request: Request[Any, Any, Any]) -> NotifyKit:
    notify: NotifyKit = request.app.state.notify
    return notify


async def provide_actor(request: Request[Any, Any, Any]) -> Actor:
    """Authenticate ``Authorization: Bearer <key>``; read-scoped keys may only read.

    Raises:
        Unauthorized: no key, or an unknown or revoked key.
        Forbidden: a read key on a write route.
    """
    known = request.scope.get("cronledger_actor")  # authenticated once per request
    if isinstance(known, Actor):
        return known
    # Several headers (or one that a proxy joined with commas: no key holds a comma): which
    # one was meant cannot be known, so refuse rather than pick one.
    given = [v for h in request.headers.getall("authorization", []) for v in h.split(",")]
    if len(given) > 1:
        raise DomainError(f"{len(given)} Authorization headers: send one, "
                          "Authorization: Bearer <key>")
    scheme, _, key = (given[0] if given else "").partition(" ")
    if scheme.lower() == "basic":
        raise Unauthorized("Basic authentication is not accepted: send the API key as "
                           "Authorization: Bearer <key>")
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthorized("missing API key: send Authorization: Bearer <key>")
    actor = await authenticate(request.app.state.pool, key.strip())
    if actor is None:
        raise Unauthorized("invalid or revoked API key")
    if actor.scope != "write" and request.method not in READ_METHODS:
        raise Forbidden("this API key is read-only")
    request_id = request.headers.get("x-request-id")
    if request_id:
        actor = Actor(actor.team_id, actor.key_id, actor.scope, request_id[:100])
    # Litestar's Scope is a TypedDict of ASGI's keys; this request's actor rides along in it
    request.scope["cronledger_actor"] = actor  # type: ignore[typeddict-unknown-key]
    return actor


# Handler parameter types: explicit markers for Litestar's dependency injection.
PoolDep = NamedDependency[ConnectionPool]
ReadPoolDep = NamedDependency[ConnectionPool]
ActorDep = NamedDependency[Actor]
ClockDep = NamedDependency[Clock]
KeyRingDep = NamedDependency[KeyRing]
NotifyDep = NamedDependency[NotifyKit]
Limit = Annotated[int, QueryParameter(ge=1, le=MAX_LIMIT)]
EventLimit = Annotated[int, QueryParameter(ge=1, le=MAX_EVENT_LIMIT)]
# ``?cursor=`` of the event and ping lists: a stream version (ASCII digits, checked here).
VersionCursor = Annotated[str | None, QueryParameter(
    pattern=VERSION_CURSOR_PATTERN, description="next_cursor of the previous page")]
# ``?cursor=`` of the keyset lists and of the secrets (api/pagination.py: every string of the
# pattern is a position to resume after).
KeysetCursor = Annotated[str | None, QueryParameter(
    pattern=KEYSET_CURSOR_PATTERN, description="next_cursor of the previous page")]
NameCursor = Annotated[str | None, QueryParameter(
    pattern=NAME_CURSOR_PATTERN, description="next_cursor of the previous page")]
SecretPathName = Annotated[str, PathParameter(pattern=f"^{NAME_PATTERN}$",
                                              description="the secret's name")]

def whole_number_words(low: int | None, high: int | None) -> str:
    """The refusal of a whole-number query parameter that is not written in digits."""
    bounds = f" from {low} to {high}" if low is not None and high is not None else ""
    return (f"must be a whole number{bounds}, in digits only (no sign, space, exponent or "
            "leading zero)")


async def whole_number_queries(request: Request[Any, Any, Any]) -> None:
    """Refuse every whole-number query parameter of a ``/v1`` route (a handler argument typed
    ``int``, bounds from its ``QueryParameter``) whose text is not ASCII digits
    (:func:`digits_only`): Litestar's lax conversion reads ``?limit=1e1`` and ``?limit=10.0``
    as 10. Runs as part of the app's ``before_request`` hook, after authentication as the
    handler would do it.

    Raises:
        Unauthorized, Forbidden: as :func:`provide_actor`, on an authenticated route.
        InvalidInput: on the first parameter written otherwise.
    """
    if not request.url.path.startswith("/v1/"):
        return
    parameters = request.route_handler.parsed_fn_signature.parameters
    for name, field in parameters.items():
        if field.annotation is not int or name in request.path_params:
            continue
        kwarg = field.kwarg_definition
        key = getattr(kwarg, "query", None) or name
        if key not in request.query_params:
            continue
        if "actor" in parameters:
            await provide_actor(request)
        digits_only(request, key, whole_number_words(getattr(kwarg, "ge", None),
                                                     getattr(kwarg, "le", None)))


def digits_only(request: Request[Any, Any, Any], name: str, words: str) -> None:
    """Refuse a whole-number query parameter ``name`` whose text is not ASCII digits without
    a leading zero (``1e1``, ``+5``, `` 5``, ``1.0``, ``05``: the decoder would read some of
    them as numbers) with ``words`` as the message; an absent one passes. The bounds stay the
    parameter's.

    Raises:
        InvalidInput: on ``name``.
    """
    for text in request.query_params.getall(name, []):
        if not whole_number_text(text):
            raise invalid(name, words)


def is_digits(text: str) -> bool:
    """``text`` is ASCII digits only. ``str.isdigit`` alone also takes ``²`` (which ``int``
    refuses: a 500) and ``١٢`` (which ``int`` reads as 12): every number the API and the
    dashboard read from text is checked with this first."""
    return text.isascii() and text.isdigit()


def whole_number_text(text: str) -> bool:
    """``text`` is a whole number as a query writes one: ASCII digits, no leading zero."""
    return is_digits(text) and (text == "0" or not text.startswith("0"))


INSTANT_EXAMPLE = "2026-11-30T00:00:00Z"
INSTANT_MESSAGE = ("must be an RFC 3339 instant with an offset (Z or +hh:mm), "
                   f"e.g. {INSTANT_EXAMPLE}")
_SPACED_OFFSET = re.compile(r" ([0-9]{2}:[0-9]{2})$")


def instant_parameter(description: str, name: str | None = None) -> Any:
    """The ``QueryParameter`` of an instant (``format: date-time``) for :func:`parse_instant`."""
    return QueryParameter(name=name, description=f"{description}, e.g. {INSTANT_EXAMPLE}",
                          format="date-time")


# ``?as_of=`` of the read routes of jobs and monitors (docs/ledger.md, "Time travel").
AsOf = Annotated[str | None, QueryParameter(
    description="RFC 3339 instant with an offset, e.g. 2026-11-30T00:00:00Z: the object as it "
                "was then (404 before it existed, 410 with deleted_at after its deletion)",
    format="date-time")]


def parse_instant(field: str, value: str | None) -> datetime | None:
    """The instant in UTC of an RFC 3339 query parameter; ``None`` when the parameter is absent.

    A space before a final ``hh:mm`` offset is read as ``+`` (an unencoded ``+`` in a query
    string decodes to a space). The only parser of instants in the API (cursors have their own
    encoding, :mod:`api.pagination`).

    Raises:
        InvalidInput: on ``field``: not an RFC 3339 date-time, no UTC offset, or an instant
            outside the years 1 to 9999 in UTC (message :data:`INSTANT_MESSAGE`).
    """
    if value is None:
        return None
    try:
        return utc(datetime.fromisoformat(_SPACED_OFFSET.sub(r"+\1", value)))
    except (ValueError, OverflowError):
        raise invalid(field, INSTANT_MESSAGE) from None
