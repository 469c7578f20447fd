"""Frozen row values read from database rows by their dataclass's field names.

A leaf module (imports nothing of cronledger): the ``from_row`` of every typed row class
(``core/runs/claim.py:ClaimedJob``, ``core/monitors/tolerance.py:LockedMonitor`` and the
others) builds its keyword arguments with :func:`field_values`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

# The field names of each class read so far. A plain dict rather than functools.cache: a row
# of the ping path (LockedMonitor) pays one dict lookup, not the cache wrapper's call.
_NAMES: dict[type, tuple[str, ...]] = {}


def field_names(cls: type[DataclassInstance]) -> tuple[str, ...]:
    """The names of ``cls``'s dataclass fields, in declaration order (inherited ones first);
    computed once per class."""
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def field_values(cls: type[DataclassInstance], row: Mapping[str, Any], *,
                 present_only: bool = False) -> dict[str, Any]:
    """``{name: row[name]}`` for each of :func:`field_names` of ``cls``, in that order: a new
    dict, ready for ``cls(**...)``. Columns of ``row`` that are no field are ignored.

    A field ``row`` lacks raises ``KeyError`` naming that column; with ``present_only`` it is
    left out instead (and the dataclass's default, if it has one, applies).
    """
    names = _NAMES.get(cls) or field_names(cls)
    if present_only:
        return {f: row[f] for f in names if f in row}
    return {f: row[f] for f in names}
