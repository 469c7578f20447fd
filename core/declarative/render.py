"""A declarative document as TOML text (docs/config.md), written by tomli-w.

Kinds in apply order (``[[channels]]``, ``[[monitors]]``, ``[[jobs]]``), each object's keys in
the order given, nested tables (``[jobs.request]``, ``[jobs.request.headers]``) after them;
``None`` values are left out (TOML has no null: an absent field means its default).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tomli_w

from core.declarative.document import KINDS


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value]
    return value


def render_document(document: dict[str, list[dict[str, Any]]],
                    comments: Sequence[str] = ()) -> str:
    """TOML text of ``document``, preceded by ``comments`` (one ``# …`` line each)."""
    head = "".join(f"# {line}\n" for line in comments)
    chunks = [_table(kind, _drop_none(item)) for kind in KINDS for item in document.get(kind, [])]
    return head + ("\n" if head and chunks else "") + "\n".join(chunks)


def _table(kind: str, item: dict[str, Any]) -> str:
    """One ``[[kind]]`` table. tomli-w writes a short array of tables inline (``kind = [{…}]``);
    a table ``[kind]`` of the object, its header doubled, is the same object as an array
    entry, and its sub-tables (``[kind.request]``) already belong to that entry."""
    text = tomli_w.dumps({kind: item})
    header = f"[{kind}]\n"
    assert text.startswith(header), text  # every object has a name, so keys come first
    return f"[[{kind}]]\n" + text[len(header):]
