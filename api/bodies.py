"""Strict JSON bodies: a request body must have the types its schema states.

Litestar converts handler arguments with msgspec's lax rules (``0`` for ``false``, ``"30"`` for
``30``), so a body the OpenAPI document calls invalid would be accepted. One lax conversion is
the document's own rule and stays: a number without a fractional part (``200.0``) is a JSON
Schema ``integer`` (:func:`integral`). :func:`strict_json_body`
(an application ``before_request`` hook) first decodes the body strictly into the handler's
``data`` type; a mismatch is the usual 422 problem (:func:`api.errors.validation_error`, field
path and message as for every other body error). Malformed or missing JSON is left to Litestar
(400).

Order, as a client expects it: an authenticated route authenticates first (401 / 403 before
anything about the body; :func:`api.deps.provide_actor` remembers the actor for the handler),
then a body sent with a media type other than JSON is a 415, then the types are checked. A
body without ``Content-Type`` is read as JSON (curl's ``-d`` without ``-H`` still works).
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import HTTPException, ValidationException

from api.deps import provide_actor, whole_number_queries

_AT = " - at `"


def is_json_media_type(value: str | None) -> bool:
    """``True`` for no ``Content-Type`` or a JSON one (``application/json``, ``…+json``)."""
    if not value:
        return True
    media = value.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/")
                                            and media.endswith("+json"))


async def strict_json_body(request: Request[Any, Any, Any]) -> None:
    """Raises:
        Unauthorized, Forbidden: an authenticated route without a valid key (as its handler
            would).
        HTTPException: (415) a body whose ``Content-Type`` is not JSON.
        ValidationException: the body does not have the types of the handler's ``data``
            (``extra``: one ``{"message", "key"}``, the key a msgspec path such as ``$.a.b``).
    """
    await whole_number_queries(request)
    parameters = request.route_handler.parsed_fn_signature.parameters
    field = parameters.get("data")
    if field is None:
        return
    if "actor" in parameters:
        await provide_actor(request)
    raw = await request.body()
    if not raw.strip():
        return
    if not is_json_media_type(request.headers.get("content-type")):
        raise HTTPException(status_code=415, detail="send the body as JSON, with Content-Type: "
                                                    "application/json")
    try:
        msgspec.json.decode(raw, type=field.annotation)
    except msgspec.ValidationError as exc:
        try:
            value = msgspec.json.decode(raw)  # a typed decode stops at the first wrong type
        except (msgspec.DecodeError, RecursionError):
            return  # malformed JSON after all: Litestar answers it
        try:  # JSON Schema's integers include 200.0 (Litestar's own decoding reads it as 200)
            msgspec.json.decode(msgspec.json.encode(integral(value)), type=field.annotation)
            return
        except (msgspec.ValidationError, msgspec.DecodeError):
            pass
        message, _, key = str(exc).partition(_AT)
        key = key.rstrip("`").replace("[...]", "")  # a dict value: the dict's path
        raise ValidationException(detail=message, extra=[
            {"message": message, "key": key or None}]) from None
    except msgspec.DecodeError:
        return  # malformed JSON: Litestar answers it


def integral(value: Any) -> Any:
    """``value`` (decoded JSON) with every number without a fractional part an ``int``: JSON
    Schema's ``integer`` is "a number without a fractional part" (draft 2020-12, section 6.1.1),
    so ``200.0`` is one, as the OpenAPI document's integers promise; msgspec's strict decoding
    would refuse it."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [integral(v) for v in value]
    if isinstance(value, dict):
        return {k: integral(v) for k, v in value.items()}
    return value
