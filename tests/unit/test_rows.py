"""Row values by field name (core/rows.py, ``field_values``): the fields in declaration order,
other columns ignored, a missing column a ``KeyError`` naming it unless ``present_only``."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from core.monitors.tolerance import CountedMonitor, LockedMonitor
from core.rows import field_names, field_values


@dataclass(frozen=True, slots=True, kw_only=True)
class Base:
    a: int
    b: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Row(Base):
    c: int | None = None
    d: list[int] = field(default_factory=list)


def test_the_fields_in_order_inherited_first_other_columns_ignored() -> None:
    row = {"d": [1], "extra": "x", "c": 3, "b": "two", "a": 1}
    assert list(field_values(Row, row).items()) == [("a", 1), ("b", "two"), ("c", 3), ("d", [1])]
    assert field_values(Base, row) == {"a": 1, "b": "two"}
    assert Row(**field_values(Row, row)) == Row(a=1, b="two", c=3, d=[1])


def test_a_missing_column_is_a_key_error_naming_it() -> None:
    with pytest.raises(KeyError) as raised:
        field_values(Row, {"a": 1, "b": "two", "d": []})
    assert raised.value.args == ("c",)


def test_present_only_leaves_missing_columns_to_the_defaults() -> None:
    values = field_values(Row, {"b": "two", "a": 1, "extra": 0}, present_only=True)
    assert values == {"a": 1, "b": "two"}
    assert Row(**values) == Row(a=1, b="two", c=None, d=[])


def test_each_call_is_a_new_dict_and_the_names_are_kept_per_class() -> None:
    row = {"a": 1, "b": "two"}
    first = field_values(Base, row)
    first["a"] = 9
    assert field_values(Base, row) == {"a": 1, "b": "two"}
    assert field_names(Base) is field_names(Base)
    counted = field_names(CountedMonitor)
    assert field_names(LockedMonitor)[:len(counted)] == counted
    assert field_names(LockedMonitor)[-4:] == ("status", "ping_token_hash", "min_duration",
                                                "down_since")
