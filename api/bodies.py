"""Strict JSON bodies: a request body must have the types its schema states.

Litestar converts handler arguments with msgspec's lax rules (``0`` for ``false``, ``"30"`` for
``30``), so a body the OpenAPI document calls invalid would be accepted. One lax conversion is
the document's own rule and stays: a number without a fractional part (``200.0``) is a JSON
Schema ``integer`` (:func:`integral`). :func:`strict_json_body`
(an application ``before_request`` hook) first decodes the body strictly into the handler's
``data`` type; a mismatch is the usual 422 problem (:func:`api.errors.validation_error`, field
path and message as for every other body error), naming every bad field of the body, not only
the first the decoder met (:func:`field_errors`). Malformed or missing JSON is left to
Litestar (400).

Order, as a client expects it: an authenticated route authenticates first (401 / 403 before
anything about the body; :func:`api.deps.provide_actor` remembers the actor for the handler),
then a body sent with a media type other than JSON is a 415, then the types are checked. A
body without ``Content-Type`` is read as JSON (curl's ``-d`` without ``-H`` still works).
"""

from __future__ import annotations

import math
from decimal import Decimal
from types import UnionType
from typing import Any, Union, get_args, get_origin

import msgspec
from litestar import Request
from litestar.exceptions import HTTPException, ValidationException
from msgspec import UnsetType

from api.deps import provide_actor, whole_number_queries
from api.msgwords import bare


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
            (``extra``: one ``{"message", "key"}`` per bad field (:func:`field_errors`), the
            key a msgspec path such as ``$.a.b``).
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
        out: list[tuple[str, str]] = []
        try:
            value = integral(msgspec.json.decode(raw))  # a typed decode stops at the first error
        except msgspec.ValidationError:  # (a DecodeError: caught first)
            # untyped decoding refuses one thing: a number no float holds (1e400, -1e400)
            try:
                value, out = out_of_range(raw)
            except (msgspec.DecodeError, RecursionError):
                return
        except (msgspec.DecodeError, RecursionError):
            return  # malformed JSON after all: Litestar answers it
        if not out:
            try:  # JSON Schema's integers include 200.0 (Litestar's own decoding reads 200)
                msgspec.json.decode(msgspec.json.encode(value), type=field.annotation)
                return
            except msgspec.ValidationError:
                pass
        taken = {key for _, key in out}
        found = out + [e for e in field_errors(value, field.annotation) if e[1] not in taken] \
            or [bare(exc)]
        extra = [{"message": message, "key": key.replace("[...]", "") if key != "$" else None}
                 for message, key in found]  # a dict value: the dict's path
        raise ValidationException(detail=found[0][0], extra=extra) from None
    except msgspec.DecodeError:
        return  # malformed JSON: Litestar answers it


_OUT_OF_RANGE = "Number out of range"  # msgspec's words (api/msgwords.py says them plainly)


def out_of_range(raw: bytes) -> tuple[Any, list[tuple[str, str]]]:
    """``raw`` (JSON that decodes but for a number beyond a float's range) decoded with each
    such number read as ``0``, and one ``(msgspec's message, path)`` per such number, so the
    422 names the field (msgspec's own error says only ``$[...]`` for an untyped decode).
    Raises msgspec's errors when ``raw`` does not decode with exact numbers either."""
    found: list[tuple[str, str]] = []

    def walk(item: Any, path: str) -> Any:
        if isinstance(item, Decimal):
            number = float(item)
            if math.isfinite(number):
                return number
            found.append((_OUT_OF_RANGE, path))
            return 0
        if isinstance(item, list):
            return [walk(v, f"{path}[{i}]") for i, v in enumerate(item)]
        if isinstance(item, dict):
            return {k: walk(v, f"{path}.{k}") for k, v in item.items()}
        return item

    value = integral(walk(_EXACT.decode(raw), "$"))
    return value, found or [(_OUT_OF_RANGE, "$")]


_EXACT = msgspec.json.Decoder(float_hook=Decimal)


def field_errors(value: Any, annotation: Any, path: str = "$") -> list[tuple[str, str]]:
    """Every error of ``value`` (decoded JSON) against ``annotation``, as ``(msgspec's message,
    its path)``: the fields of a Struct (nested ones too) are checked one by one, so a body
    with several bad fields hears of each, with its unknown and missing fields; anything else
    is decoded whole and reports its first error. Empty when ``value`` decodes."""
    struct = _struct_of(annotation, value)
    if struct is None:
        try:
            msgspec.json.decode(msgspec.json.encode(value), type=annotation)
            return []
        except msgspec.ValidationError as exc:
            message, key = bare(exc)
            return [(message, path + key.removeprefix("$"))]
    fields = {f.encode_name: f for f in msgspec.structs.fields(struct)}
    forbid = struct.__struct_config__.forbid_unknown_fields
    errors = []
    for name, item in value.items():
        known = fields.get(name)
        if known is not None:
            errors += field_errors(item, known.type, f"{path}.{name}")
        elif forbid:
            errors.append((f"Object contains unknown field `{name}`", path))
    errors += [(f"Object missing required field `{name}`", path)
               for name, f in fields.items() if f.required and name not in value]
    return errors


def _struct_of(annotation: Any, value: Any) -> type[msgspec.Struct] | None:
    """The Struct ``value`` (a JSON object) is read as: ``annotation`` itself, or its only
    Struct beside ``None`` and ``UNSET`` (a patch's field); ``None`` for anything else (a
    tagged Struct too: its tag picks the type)."""
    if not isinstance(value, dict):
        return None
    members = get_args(annotation) if get_origin(annotation) in (Union, UnionType) \
        else (annotation,)
    structs = [m for m in members if isinstance(m, type) and issubclass(m, msgspec.Struct)]
    others = [m for m in members if m not in structs and m not in (type(None), UnsetType)]
    if len(structs) != 1 or others or structs[0].__struct_config__.tag is not None:
        return None
    return structs[0]


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
