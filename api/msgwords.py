"""msgspec's validation messages in plain words (``Expected `str` of length >= 1`` becomes
"must not be empty", ``Expected `int` <= 90`` "must be at most 90").

Every 422 of a body or a query parameter passes here once, in
:func:`api.errors.validation_error`; the field is not in the words, it is the problem's
``field`` and starts its ``detail`` (``title: must not be empty``), as with every other
refusal. :func:`choices_at` finds the allowed values of an enum or ``Literal`` from the
route's own types, so "must be one of: …" lists them. A message none of the rules knows is
kept as it is.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import msgspec
import msgspec.inspect as mi

from api.deps import INSTANT_MESSAGE

_TYPES = {"str": "a string", "int": "a whole number", "float": "a number", "bool": "true or false",
          "null": "null", "array": "an array", "object": "an object",
          "datetime": "an RFC 3339 date-time string", "date": "a date string (YYYY-MM-DD)",
          "time": "a time string (hh:mm:ss)", "uuid": "a UUID string",
          "duration": "an ISO 8601 duration string", "bytes": "a base64 string"}
_ITEMS = {"str": "characters", "array": "items", "object": "entries"}

_LENGTH = re.compile(r"Expected `(str|array|object)` of length (>=|<=) (\d+)")
_EXACT = re.compile(r"Expected `array` of length (\d+)(?:, got \d+)?")
_BOUND = re.compile(r"Expected `(?:int|float)` (>=|<=|>|<) (\S+)")
_MULTIPLE = re.compile(r"Expected `(?:int|float)` that's a multiple of (\S+)")
_TYPE = re.compile(r"Expected `([^`]+)`, got `([^`]+)`")
_ENUM = re.compile(r"Invalid enum value (.+)")
_BOUND_WORDS = {">=": "at least", "<=": "at most", ">": "greater than", "<": "less than"}
_FIXED = {
    "Expected `datetime` with a timezone component": INSTANT_MESSAGE,
    "Invalid RFC3339 encoded datetime": INSTANT_MESSAGE,
    "Invalid RFC3339 encoded date": "must be a date, YYYY-MM-DD",
    "Invalid RFC3339 encoded time": "must be a time, hh:mm:ss",
    "Invalid ISO8601 duration": "must be an ISO 8601 duration",
    "Invalid UUID": "must be a UUID (32 hexadecimal digits in groups of 8-4-4-4-12)",
    "Invalid base64 encoded string": "must be base64",
    "Number out of range": "is a number out of the range this field can hold",
}


def plain(message: str, choices: Sequence[Any] | None = None) -> str:
    """``message`` (msgspec's, without its `` - at `$…``` part) in plain words; ``choices``:
    the allowed values of an enum or ``Literal`` field, when known."""
    if message in _FIXED:
        return _FIXED[message]
    if "missing required field" in message:
        return "is required"
    if "contains unknown field" in message:
        return "is not a field of this object (check its spelling)"
    if found := _LENGTH.fullmatch(message):
        kind, op, count = found.group(1), found.group(2), int(found.group(3))
        if op == ">=" and count == 1:
            return "must not be empty"
        return (f"must {'be' if kind == 'str' else 'have'} {_BOUND_WORDS[op]} {count} "
                f"{_ITEMS[kind]}{' long' if kind == 'str' else ''}")
    if found := _EXACT.fullmatch(message):
        return f"must be an array of exactly {found.group(1)} items"
    if found := _BOUND.fullmatch(message):
        return f"must be {_BOUND_WORDS[found.group(1)]} {found.group(2)}"
    if found := _MULTIPLE.fullmatch(message):
        return f"must be a multiple of {found.group(1)}"
    if found := _TYPE.fullmatch(message):
        expected, got = found.group(1), found.group(2)
        # 200.0 is read as 200 (api/bodies.py:integral): a float that reaches here has a fraction
        given = ("a number with a fractional part" if got == "float" and "int" in expected
                 else _type_words(got))
        return f"must be {_type_words(expected)}, not {given}"
    if _ENUM.fullmatch(message):
        if choices:
            return "must be one of: " + ", ".join(str(c) for c in choices)
        return "is not one of the allowed values"
    return message


def _type_words(names: str) -> str:
    """``int | null`` as "a whole number or null"."""
    return " or ".join(_TYPES.get(n.strip(), n.strip()) for n in names.split("|"))


_SEGMENT = re.compile(r"[^.\[\]]+")


def choices_at(annotation: Any, path: str) -> tuple[Any, ...] | None:
    """The allowed values of the enum or ``Literal`` at ``path`` inside ``annotation``
    (``path``: msgspec's ``$.a.b[0]`` or a dotted ``a.b.0``); ``None`` when there is none or
    the path does not lead anywhere."""
    try:
        info = _info(annotation)
    except (TypeError, ValueError):  # not a type msgspec reads: no words to add
        return None
    at: mi.Type | None = info
    for segment in _SEGMENT.findall(path.removeprefix("$")):
        at = _step(at, segment) if at is not None else None
    found = _choices(at) if at is not None else None
    return tuple(found) if found else None


@lru_cache(maxsize=256)
def _info(annotation: Any) -> mi.Type:
    return mi.type_info(annotation)


def _step(info: mi.Type, segment: str) -> mi.Type | None:
    """The type one path segment into ``info`` (a field, an index, a map's value)."""
    if isinstance(info, mi.Metadata):
        return _step(info.type, segment)
    if isinstance(info, mi.UnionType):
        return next((t for t in (_step(m, segment) for m in info.types) if t is not None), None)
    if isinstance(info, mi.StructType | mi.DataclassType | mi.TypedDictType):
        return next((f.type for f in info.fields if f.encode_name == segment), None)
    if isinstance(info, mi.ListType | mi.SetType | mi.FrozenSetType | mi.VarTupleType):
        return info.item_type if segment.isdigit() else None
    if isinstance(info, mi.TupleType):
        index = int(segment) if segment.isdigit() else len(info.item_types)
        return info.item_types[index] if index < len(info.item_types) else None
    if isinstance(info, mi.DictType):
        return info.value_type
    return None


def _choices(info: mi.Type) -> list[Any]:
    if isinstance(info, mi.Metadata):
        return _choices(info.type)
    if isinstance(info, mi.UnionType):
        return [c for member in info.types for c in _choices(member)]
    if isinstance(info, mi.LiteralType):
        return list(info.values)
    if isinstance(info, mi.EnumType):
        return [m.value for m in info.cls] if issubclass(info.cls, enum.Enum) else []
    return []


def bare(error: msgspec.ValidationError | str) -> tuple[str, str]:
    """msgspec's message split into the message and the path it names (``$.a.b``; ``""`` for
    the whole value)."""
    message, _, key = str(error).partition(" - at `")
    return message, key.rstrip("`")
