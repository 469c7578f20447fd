"""Strict JSON bodies: a request body must have the types its schema states.

Litestar converts handler arguments with msgspec's lax rules (``0`` for ``false``, ``"30"`` for
``30``), so a body the OpenAPI document calls invalid would be accepted. :func:`strict_json_body`
(an application ``before_request`` hook) first decodes the body strictly into the handler's
``data`` type; a mismatch is the usual 422 problem (:func:`api.errors.validation_error`, field
path and message as for every other body error). Malformed or missing JSON is left to Litestar
(400, after authentication, as before). A type error is reported before authentication: the
schema is public, nothing about the caller's data is revealed.
"""

from __future__ import annotations

from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import ValidationException

_AT = " - at `"


async def strict_json_body(request: Request[Any, Any, Any]) -> None:
    """Raises:
        ValidationException: the body does not have the types of the handler's ``data``
            (``extra``: one ``{"message", "key"}``, the key a msgspec path such as ``$.a.b``).
    """
    field = request.route_handler.parsed_fn_signature.parameters.get("data")
    if field is None:
        return
    raw = await request.body()
    if not raw.strip():
        return
    try:
        msgspec.json.decode(raw, type=field.annotation)
    except msgspec.ValidationError as exc:
        try:
            msgspec.json.decode(raw)  # a typed decode stops at the first wrong type
        except (msgspec.DecodeError, RecursionError):
            return  # malformed JSON after all: Litestar answers it
        message, _, key = str(exc).partition(_AT)
        key = key.rstrip("`").replace("[...]", "")  # a dict value: the dict's path
        raise ValidationException(detail=message, extra=[
            {"message": message, "key": key or None}]) from None
    except msgspec.DecodeError:
        return  # malformed JSON: Litestar answers it
